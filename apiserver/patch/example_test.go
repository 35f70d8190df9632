package patch_test

import (
	"fmt"

	"listwatch/apiserver/patch"
)

// A merge patch as kubectl label sends it: members replace, null deletes.
func ExampleFunc() {
	apply, err := patch.Func(patch.MergePatchType, []byte(`{"metadata":{"labels":{"app":"web","old":null}}}`), true)
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := apply([]byte(`{"metadata":{"name":"x","labels":{"old":"1"}}}`))
	fmt.Println(string(out), err)
	// Output: {"metadata":{"name":"x","labels":{"app":"web"}}} <nil>
}

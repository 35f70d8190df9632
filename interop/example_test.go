package interop_test

import (
	"fmt"

	"listwatch/interop"
)

// ExampleShapeDiff compares a recorded object with one of ours: the uid
// values differ and do not matter, managedFields is ignored, but a number
// where the recording has a string does matter.
func ExampleShapeDiff() {
	recorded := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"626927f9","resourceVersion":"125","managedFields":[]},"data":{"k":"v1"}}`)
	ours := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"0001","resourceVersion":7},"data":{"k":"v1"}}`)
	diffs, err := interop.ShapeDiff(recorded, ours, interop.DefaultShapeOptions)
	if err != nil {
		panic(err)
	}
	for _, d := range diffs {
		fmt.Println(d)
	}
	// Output:
	// $.metadata.resourceVersion: number, want string
}

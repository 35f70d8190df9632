package protobuf_test

import (
	"fmt"

	"listwatch/api/protobuf"
)

// A ConfigMap's JSON becomes the protobuf body kube-apiserver would send
// for it, and that body becomes the same JSON again.
func Example() {
	s := protobuf.Default()
	body, err := s.EncodeObject("v1", "ConfigMap", []byte(`{"metadata":{"name":"cm","namespace":"default"},"data":{"k":"v"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", body[:4])
	env, js, err := s.DecodeObject(body, "", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(env.APIVersion, env.Kind, len(body), "bytes")
	fmt.Println(string(js))
	// Output:
	// 6b 38 73 00
	// v1 ConfigMap 62 bytes
	// {"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm","namespace":"default"},"data":{"k":"v"}}
}

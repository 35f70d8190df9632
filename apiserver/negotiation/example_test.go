package negotiation_test

import (
	"fmt"
	"net/http/httptest"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
)

// kubectl get asks for a Table first; client-go for protobuf, then JSON.
func ExampleNegotiateOutput() {
	for _, accept := range []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
		"application/vnd.kubernetes.protobuf,application/json",
		"application/yaml",
	} {
		r := httptest.NewRequest("GET", "/api/v1/configmaps", nil)
		r.Header.Set("Accept", accept)
		out, err := negotiation.NegotiateOutput(r)
		fmt.Printf("table=%q err=%v\n", out.Table, err)
	}
	// Output:
	// table="meta.k8s.io/v1" err=<nil>
	// table="" err=<nil>
	// table="" err=only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf
}

// Errors are Status objects with the code Kubernetes gives them.
func ExampleWriteError() {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/api/v1/namespaces/default/configmaps/x", nil)
	negotiation.WriteError(w, r, api.NewNotFound(api.GroupResource{Resource: "configmaps"}, "x"))
	fmt.Print(w.Code, " ", w.Body.String())
	// Output: 404 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}
}

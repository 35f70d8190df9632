package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A SelfSubjectAccessReview comes back allowed, as from a real server
// that allows everything (v137-selfsubjectaccessreview-201.json), and
// kubectl auth can-i, which sends it as protobuf, says yes.
func TestSelfSubjectAccessReview(t *testing.T) {
	ts := startServer(t, Config{})
	review := ts.do(req{method: "POST", path: "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
		body: `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","metadata":{"creationTimestamp":null},"spec":{"resourceAttributes":{"namespace":"default","verb":"list","resource":"pods"}},"status":{"allowed":false}}`})
	requireSameJSON(t, "v137-selfsubjectaccessreview-201.json", review.mustCode(t, http.StatusCreated))
	ts.get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").mustCode(t, http.StatusMethodNotAllowed)

	k := newKubectl(t, ts)
	assert.Equal(t, "yes\n", k.run("auth", "can-i", "list", "pods"))
	assert.Equal(t, "yes\n", k.run("auth", "can-i", "create", "deployments", "-n", "kube-system"))
}

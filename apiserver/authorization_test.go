package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
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

// A review has no Table form. Kubernetes' e2e spec "Servers with support
// for Table transformation should return a 406 for a backend which does
// not implement metadata" posts one asking only for a Table; kube-apiserver
// 1.37.2 answers 406 NotAcceptable (asked on the reference: "only the
// following media types are accepted: application/json, application/yaml,
// application/vnd.kubernetes.protobuf"; ours names the two it writes), and
// a Table with JSON as the fallback gets the review as JSON.
func TestSelfSubjectAccessReviewHasNoTable(t *testing.T) {
	ts := startServer(t, Config{})
	path := "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
	body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview","spec":{"nonResourceAttributes":{"path":"/","verb":"get"}}}`
	for _, accept := range []string{
		"application/json;as=Table;v=v1;g=meta.k8s.io",
		"application/json;as=Table;v=v1beta1;g=meta.k8s.io",
	} {
		r := ts.do(req{method: "POST", path: path, body: body, header: map[string]string{"Accept": accept}})
		require.Equal(t, http.StatusNotAcceptable, r.code, "Accept %s: %s", accept, r.body)
		st := r.status(t)
		assert.Equal(t, api.ReasonNotAcceptable, st.Reason)
		assert.Equal(t, "only the following media types are accepted: application/json, application/vnd.kubernetes.protobuf", st.Message)
	}
	r := ts.do(req{method: "POST", path: path, body: body, header: map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io, application/json"}})
	review := r.object(t)
	require.Equal(t, http.StatusCreated, r.code, "%s", r.body)
	assert.Equal(t, "SelfSubjectAccessReview", review.Kind)
}

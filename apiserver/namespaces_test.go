package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func nsPhaseAndFinalizers(t *testing.T, ns *api.Object) (string, []string) {
	t.Helper()
	var st struct {
		Phase string `json:"phase"`
	}
	var spec struct {
		Finalizers []string `json:"finalizers"`
	}
	require.NoError(t, json.Unmarshal(ns.Get("status"), &st))
	require.NoError(t, json.Unmarshal(ns.Get("spec"), &spec))
	return st.Phase, spec.Finalizers
}

// A namespace's life as kube-apiserver runs it: the first DELETE marks it
// Terminating and keeps its contents; nothing new may be created in it;
// a PUT of .../finalize without the "kubernetes" finalizer (what the
// namespace controller sends once it has emptied it) deletes it.
func TestNamespaceDeletionGoesThroughTerminating(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("team")
	ts.createConfigMap("team", "c", nil, nil)

	del := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/team"})
	del.mustCode(t, http.StatusOK)
	ns := del.object(t)
	assert.Equal(t, "Namespace", ns.Kind)
	require.NotNil(t, ns.Metadata.DeletionTimestamp)
	phase, fins := nsPhaseAndFinalizers(t, ns)
	assert.Equal(t, "Terminating", phase)
	assert.Equal(t, []string{"kubernetes"}, fins)
	assert.Len(t, ts.get("/api/v1/namespaces/team/configmaps").list(t).Items, 1, "its contents are the namespace controller's to delete")

	st := ts.do(req{method: "POST", path: "/api/v1/namespaces/team/configmaps", body: configMapJSON("d", nil, nil)}).status(t)
	assert.Equal(t, int32(http.StatusForbidden), st.Code)
	assert.Equal(t, `configmaps "d" is forbidden: unable to create new content in namespace team because it is being terminated`, st.Message)
	require.NotNil(t, st.Details)
	assert.Equal(t, []api.StatusCause{{Type: "NamespaceTerminating", Message: "namespace team is being terminated", Field: "metadata.namespace"}}, st.Details.Causes)
	ts.do(req{method: "PUT", path: "/api/v1/namespaces/team/configmaps/c", body: configMapJSON("c", map[string]string{"a": "b"}, nil)}).mustCode(t, http.StatusOK)

	again := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/team"})
	again.mustCode(t, http.StatusOK)
	assert.Equal(t, ns.Metadata.DeletionTimestamp, again.object(t).Metadata.DeletionTimestamp, "a second delete changes nothing")

	// An update of the namespace keeps its phase and spec.finalizers.
	upd := ts.do(req{method: "PUT", path: "/api/v1/namespaces/team",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team","labels":{"x":"y"}},"spec":{"finalizers":[]},"status":{"phase":"Active"}}`})
	phase, fins = nsPhaseAndFinalizers(t, upd.object(t))
	assert.Equal(t, "Terminating", phase)
	assert.Equal(t, []string{"kubernetes"}, fins)
	ts.get("/api/v1/namespaces/team").mustCode(t, http.StatusOK)

	ts.do(req{method: "GET", path: "/api/v1/namespaces/team/finalize"}).mustCode(t, http.StatusMethodNotAllowed)
	status := ts.get("/api/v1/namespaces/team/status")
	status.mustCode(t, http.StatusOK)
	assert.Equal(t, "team", status.object(t).Metadata.Name, "a namespace's status, not a resource named status in it")
	fin := ts.do(req{method: "PUT", path: "/api/v1/namespaces/team/finalize",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},"spec":{"finalizers":[]}}`})
	fin.mustCode(t, http.StatusOK)
	ts.get("/api/v1/namespaces/team").mustCode(t, http.StatusNotFound)
	ts.do(req{method: "POST", path: "/api/v1/namespaces/team/configmaps", body: configMapJSON("e", nil, nil)}).mustCode(t, http.StatusNotFound)
}

func TestNamespaceFinalizeKeepsOtherFinalizersAndStatus(t *testing.T) {
	ts := startServer(t, Config{})
	ts.do(req{method: "POST", path: "/api/v1/namespaces",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"two"},"spec":{"finalizers":["example.com/other"]}}`}).mustCode(t, http.StatusCreated)
	ts.do(req{method: "DELETE", path: "/api/v1/namespaces/two"}).mustCode(t, http.StatusOK)
	fin := ts.do(req{method: "PUT", path: "/api/v1/namespaces/two/finalize",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"two"},"spec":{"finalizers":["example.com/other"]},"status":{"phase":"Active"}}`})
	phase, fins := nsPhaseAndFinalizers(t, fin.object(t))
	assert.Equal(t, "Terminating", phase, "finalize changes the spec only")
	assert.Equal(t, []string{"example.com/other"}, fins)
	ts.get("/api/v1/namespaces/two").mustCode(t, http.StatusOK)
	ts.do(req{method: "PUT", path: "/api/v1/namespaces/two/finalize",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"two"},"spec":{}}`}).mustCode(t, http.StatusOK)
	ts.get("/api/v1/namespaces/two").mustCode(t, http.StatusNotFound)
}

// A new server has default and kube-system (kube-apiserver also makes
// kube-public and kube-node-lease: registry.InitialNamespaces says why ours
// does not); default, kube-public and kube-system cannot be deleted
// (errors_test.go), kube-node-lease can.
func TestSystemNamespaces(t *testing.T) {
	ts := startServer(t, Config{})
	var names []string
	for _, ns := range ts.get("/api/v1/namespaces").list(t).Items {
		phase, _ := nsPhaseAndFinalizers(t, ns)
		assert.Equal(t, "Active", phase, ns.Metadata.Name)
		names = append(names, ns.Metadata.Name)
	}
	assert.Equal(t, []string{"default", "kube-system"}, names)
	ts.do(req{method: "POST", path: "/api/v1/namespaces",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"kube-node-lease"}}`}).mustCode(t, http.StatusCreated)
	del := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/kube-node-lease"})
	del.mustCode(t, http.StatusOK)
	phase, _ := nsPhaseAndFinalizers(t, del.object(t))
	assert.Equal(t, "Terminating", phase)
}

package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pods and Services have a status subresource, as on a real server: a
// write of the object keeps the stored status, a write of /status changes
// only the status, and discovery lists pods/status and services/status.
func TestPodAndServiceStatusSubresource(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	disco := string(ts.get("/api/v1").mustCode(t, http.StatusOK))
	assert.Contains(t, disco, `"name":"pods/status"`)
	assert.Contains(t, disco, `"name":"services/status"`)

	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	ts.do(req{method: "POST", path: pods2, body: podJSON("p", "")}).mustCode(t, http.StatusCreated)
	main := ts.do(req{method: "PATCH", path: pods2 + "/p", body: `{"status":{"phase":"Running"},"metadata":{"labels":{"a":"b"}}}`, header: merge})
	main.mustCode(t, http.StatusOK)
	assert.NotContains(t, string(main.object(t).Get("status")), "Running", "a write of the pod ignores status")
	assert.Equal(t, map[string]string{"a": "b"}, main.object(t).Metadata.Labels)

	st := ts.do(req{method: "PATCH", path: pods2 + "/p/status", body: `{"status":{"phase":"Running"},"metadata":{"labels":{"c":"d"}},"spec":{"nodeName":"n"}}`, header: merge})
	st.mustCode(t, http.StatusOK)
	obj := st.object(t)
	assert.JSONEq(t, `{"phase":"Running","qosClass":"BestEffort"}`, string(obj.Get("status")), "merged into the new pod's status")
	assert.NotContains(t, string(obj.Get("spec")), `"nodeName"`, "a write of /status ignores spec")
	ts.get("/api/v1/namespaces/fixtures2/services/nope/status").mustCode(t, http.StatusNotFound)
}

// Discovery lists subresources as the real server does, entry for entry.
func TestDiscoveryListsSubresources(t *testing.T) {
	ts := startServer(t, Config{})
	type entry = map[string]any
	find := func(body []byte, name string) entry {
		var l struct {
			Resources []entry `json:"resources"`
		}
		require.NoError(t, json.Unmarshal(body, &l))
		for _, r := range l.Resources {
			if r["name"] == name {
				delete(r, "storageVersionHash")
				return r
			}
		}
		return nil
	}
	apps := ts.get("/apis/apps/v1").mustCode(t, http.StatusOK)
	core := ts.get("/api/v1").mustCode(t, http.StatusOK)
	for _, name := range []string{"deployments/scale", "deployments/status"} {
		assert.Equal(t, find(fixture(t, "discovery-apis-apps-v1.json"), name), find(apps, name), name)
	}
	for _, name := range []string{"pods/status", "services/status"} {
		assert.Equal(t, find(fixture(t, "discovery-api-v1.json"), name), find(core, name), name)
	}
}

// kubectl scale goes through the scale subresource, as against a real
// server (scale-patch-kubectl-200.json).
func TestKubectlScale(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	k := newKubectl(t, ts)
	k.run("-n", "fixtures2", "create", "deployment", "web", "--image=nginx")
	assert.Contains(t, k.run("-n", "fixtures2", "scale", "deploy", "web", "--replicas=3"), "deployment.apps/web scaled")
	var spec struct {
		Replicas int `json:"replicas"`
	}
	require.NoError(t, json.Unmarshal(ts.get("/apis/apps/v1/namespaces/fixtures2/deployments/web").object(t).Get("spec"), &spec))
	assert.Equal(t, 3, spec.Replicas)
	assert.Contains(t, k.run("-n", "fixtures2", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"), "3")
}

// A write through a built-in kind's /status keeps the metadata it sends,
// as kube-apiserver 1.37.2's status strategies reset only spec: a
// namespace keeps a patched annotation (Kubernetes' e2e "should apply
// changes to a namespace status"), a Pod too, but not new owner
// references, and a Deployment not new labels.
func TestStatusWritesKeepMetadata(t *testing.T) {
	ts := startServer(t, Config{})
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	ts.createNamespace("fixtures2")

	ns := ts.do(req{method: "PATCH", path: "/api/v1/namespaces/fixtures2/status", header: merge,
		body: `{"metadata":{"annotations":{"e2e-patched-ns-status":"fixtures2"}},"status":{"conditions":[{"type":"StatusPatch","status":"True","reason":"E2E","message":"Patched by an e2e test"}]}}`})
	ns.mustCode(t, http.StatusOK)
	obj := ns.object(t)
	assert.Equal(t, "fixtures2", obj.Metadata.Annotations["e2e-patched-ns-status"])
	assert.Contains(t, string(obj.Get("status")), `"reason":"E2E"`)
	assert.Contains(t, string(obj.Get("status")), `"phase":"Active"`)
	assert.Equal(t, "fixtures2", ts.get("/api/v1/namespaces/fixtures2").object(t).Metadata.Annotations["e2e-patched-ns-status"], "stored")

	ts.do(req{method: "POST", path: pods2, body: podJSON("p", "")}).mustCode(t, http.StatusCreated)
	pod := ts.do(req{method: "PATCH", path: pods2 + "/p/status", header: merge,
		body: `{"metadata":{"labels":{"c":"d"},"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"u1"}]},"status":{"phase":"Running"}}`})
	pod.mustCode(t, http.StatusOK)
	obj = pod.object(t)
	assert.Equal(t, map[string]string{"c": "d"}, obj.Metadata.Labels)
	assert.NotContains(t, string(obj.AppendJSON(nil)), "ownerReferences", "owner references stay as stored")

	ts.do(req{method: "POST", path: "/apis/apps/v1/namespaces/fixtures2/deployments",
		body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"app":"web"}},"spec":{"replicas":1}}`}).mustCode(t, http.StatusCreated)
	dep := ts.do(req{method: "PATCH", path: "/apis/apps/v1/namespaces/fixtures2/deployments/web/status", header: merge,
		body: `{"metadata":{"labels":{"app":"other"},"annotations":{"a":"b"}},"status":{"replicas":1}}`})
	dep.mustCode(t, http.StatusOK)
	obj = dep.object(t)
	assert.Equal(t, map[string]string{"app": "web"}, obj.Metadata.Labels, "labels stay as stored")
	assert.Equal(t, "b", obj.Metadata.Annotations["a"])
	assert.Equal(t, int64(1), obj.Metadata.Generation)
}

// A custom resource's /status writes the status alone: its strategy copies
// the stored object and sets only the new status on it.
func TestCustomResourceStatusKeepsStoredMetadata(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	ts.do(req{method: "POST", path: crontabs, body: cronTab("ct", `{"cronSpec":"* * * * */5"}`)}).mustCode(t, http.StatusCreated)
	st := ts.do(req{method: "PATCH", path: crontabs + "/ct/status", header: map[string]string{"Content-Type": "application/merge-patch+json"},
		body: `{"metadata":{"labels":{"c":"d"}},"status":{"lastRun":"2026-11-26T10:00:00Z"}}`})
	st.mustCode(t, http.StatusOK)
	obj := st.object(t)
	assert.Empty(t, obj.Metadata.Labels, "metadata stays as stored")
	assert.Contains(t, string(obj.Get("status")), "2026-11-26T10:00:00Z")
}

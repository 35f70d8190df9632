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

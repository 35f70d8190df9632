package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const applyType = "application/apply-patch+yaml"

// managedFieldsOf returns the managedFields entries without their times.
func managedFieldsOf(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var v struct {
		Metadata struct {
			ManagedFields []map[string]any `json:"managedFields"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	for _, e := range v.Metadata.ManagedFields {
		delete(e, "time")
	}
	return v.Metadata.ManagedFields
}

// The recorded server-side apply sequence (ssa-*.json): create, update,
// a conflicting apply from another manager, the same forced.
func TestServerSideApplyAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	apply := func(query, body string) response {
		return ts.do(req{method: "PATCH", path: cms2 + "/ssa-cm" + query, body: body, header: map[string]string{"Content-Type": applyType}})
	}
	q := func(manager, force string) string {
		return "?fieldManager=" + manager + "&fieldValidation=Strict&force=" + force
	}

	none := apply("", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa-cm","namespace":"fixtures2"},"data":{"c":"3"}}`)
	requireSameJSON(t, "ssa-apply-no-fieldmanager-422.json", none.mustCode(t, http.StatusUnprocessableEntity))

	created := apply(q("kubectl", "false"), `{"apiVersion":"v1","data":{"a":"1","b":"2"},"kind":"ConfigMap","metadata":{"name":"ssa-cm","namespace":"fixtures2"}}`)
	requireSameJSON(t, "ssa-apply-create-201.json", created.mustCode(t, http.StatusCreated))
	assert.Equal(t, managedFieldsOf(t, fixture(t, "ssa-apply-create-201.json")), managedFieldsOf(t, created.body))

	updated := apply(q("kubectl", "false"), "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-cm\n  namespace: fixtures2\ndata:\n  a: \"10\"\n  b: \"2\"\n")
	requireSameJSON(t, "ssa-apply-update-200.json", updated.mustCode(t, http.StatusOK))
	assert.Equal(t, managedFieldsOf(t, fixture(t, "ssa-apply-update-200.json")), managedFieldsOf(t, updated.body))
	rv := updated.object(t).Metadata.ResourceVersion

	other := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa-cm","namespace":"fixtures2"},"data":{"a":"from-other"}}`
	conflict := apply(q("other", "false"), other)
	requireSameJSON(t, "ssa-apply-conflict-409.json", conflict.mustCode(t, http.StatusConflict))
	assert.Equal(t, rv, ts.get(cms2+"/ssa-cm").object(t).Metadata.ResourceVersion, "nothing changed")

	forced := apply(q("other", "true"), other)
	requireSameJSON(t, "ssa-apply-force-200.json", forced.mustCode(t, http.StatusOK))
	assert.Equal(t, managedFieldsOf(t, fixture(t, "ssa-apply-force-200.json")), managedFieldsOf(t, forced.body))
	requireSameJSON(t, "ssa-get-managedfields.json", ts.get(cms2+"/ssa-cm").mustCode(t, http.StatusOK))
}

// A manager that stops applying a field removes it, unless another
// manager owns it too.
func TestApplyRemovesWhatTheManagerGaveUp(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	apply := func(manager, data string) response {
		return ts.do(req{method: "PATCH", path: cms2 + "/cm?fieldManager=" + manager, header: map[string]string{"Content-Type": applyType},
			body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","labels":{"app":"x"}},"data":` + data + `}`})
	}
	apply("a", `{"x":"1","y":"2","z":"3"}`).mustCode(t, http.StatusCreated)
	apply("b", `{"z":"3"}`).mustCode(t, http.StatusOK) // same value: shared, no conflict
	got := apply("a", `{"x":"1"}`)
	got.mustCode(t, http.StatusOK)
	assert.JSONEq(t, `{"x":"1","z":"3"}`, string(got.object(t).Get("data")))
	assert.Equal(t, map[string]string{"app": "x"}, got.object(t).Metadata.Labels)
	bad := ts.do(req{method: "PATCH", path: cms2 + "/cm?fieldManager=a", header: map[string]string{"Content-Type": applyType}, body: "data: [unclosed"})
	bad.mustCode(t, http.StatusBadRequest)
}

// kubectl apply --server-side twice, then a conflicting apply.
func TestKubectlServerSideApply(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	k := newKubectl(t, ts)
	dir := t.TempDir()
	file := filepath.Join(dir, "cm.yaml")
	write := func(a string) {
		require.NoError(t, os.WriteFile(file, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: fixtures2\ndata:\n  a: \""+a+"\"\n"), 0o600))
	}
	write("1")
	assert.Contains(t, k.run("apply", "--server-side", "-f", file), "configmap/applied serverside-applied")
	write("2")
	assert.Contains(t, k.run("apply", "--server-side", "-f", file), "configmap/applied serverside-applied")
	assert.JSONEq(t, `{"a":"2"}`, string(ts.get(cms2+"/applied").object(t).Get("data")))

	write("3")
	out, err := k.cmd(t.Context(), "apply", "--server-side", "--field-manager", "intruder", "-f", file).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), `conflict with "kubectl"`)
	assert.Contains(t, string(out), ".data.a")
	assert.Contains(t, k.run("apply", "--server-side", "--force-conflicts", "--field-manager", "intruder", "-f", file), "serverside-applied")
	assert.JSONEq(t, `{"a":"3"}`, string(ts.get(cms2+"/applied").object(t).Get("data")))
}

// Kubernetes' e2e ServerSideApply "should create an applied object if it
// does not already exist" (test/e2e/apimachinery/apply.go): a Pod's
// containers merge by name and a Service's ports by port and protocol, so
// each applier owns the element (its ".") and its fields; a second
// applier of the same configuration conflicts with nobody and owns the
// same.
func TestApplyOwnsListElementsByKey(t *testing.T) {
	ts := startServer(t, Config{})
	for _, c := range []struct{ path, body, fields string }{
		{"/api/v1/namespaces/default/pods/test-pod",
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-pod"},"spec":{"containers":[{"name":"test-container","image":"test-image"}]}}`,
			`{"f:spec":{"f:containers":{"k:{\"name\":\"test-container\"}":{".":{},"f:image":{},"f:name":{}}}}}`},
		{"/api/v1/namespaces/default/services/test-svc",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"test-svc"},"spec":{"ports":[{"port":8080,"protocol":"UDP"}]}}`,
			`{"f:spec":{"f:ports":{"k:{\"port\":8080,\"protocol\":\"UDP\"}":{".":{},"f:port":{},"f:protocol":{}}}}}`},
	} {
		for i, manager := range []string{"apply_test", "apply_test_2"} {
			got := ts.do(req{method: "PATCH", path: c.path + "?fieldManager=" + manager, body: c.body,
				header: map[string]string{"Content-Type": applyType}})
			got.mustCode(t, []int{http.StatusCreated, http.StatusOK}[i])
			entries := managedFieldsOf(t, got.body)
			require.Len(t, entries, i+1)
			for _, e := range entries {
				fields, err := json.Marshal(e["fieldsV1"])
				require.NoError(t, err)
				assert.Equal(t, c.fields, string(fields), "%s %v", c.path, e["manager"])
			}
		}
	}
}

// deploymentApply is the Deployment of the e2e ServerSideApply specs,
// with or without spec.replicas.
func deploymentApply(name, replicas string) string {
	return `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"` + name + `","labels":{"app":"nginx"}},"spec":{` + replicas +
		`"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},` +
		`"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`
}

// "should ignore conflict errors if force apply is used": a merge patch
// from another client (named by its User-Agent) makes spec.replicas its
// own, so the applier's next apply of another value is a 409 naming the
// updater, and the same apply forced wins.
func TestApplyConflictsWithAnUpdater(t *testing.T) {
	ts := startServer(t, Config{})
	path := "/apis/apps/v1/namespaces/default/deployments/deployment"
	apply := func(query string) response {
		return ts.do(req{method: "PATCH", path: path + "?fieldManager=apply_test" + query, body: deploymentApply("deployment", `"replicas":3,`),
			header: map[string]string{"Content-Type": applyType}})
	}
	apply("").mustCode(t, http.StatusCreated)
	patched := ts.do(req{method: "PATCH", path: path, body: `{"spec":{"replicas":5}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json", "User-Agent": "e2e.test/v1.37.2 (linux/amd64) kubernetes/abcdef"}})
	patched.mustCode(t, http.StatusOK)
	var updater map[string]any
	for _, e := range managedFieldsOf(t, patched.body) {
		if e["manager"] == "e2e.test" {
			updater = e
		}
	}
	require.NotNil(t, updater, "%s", patched.body)
	assert.Equal(t, "Update", updater["operation"])
	assert.Equal(t, "apps/v1", updater["apiVersion"])
	assert.Equal(t, map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}}}, updater["fieldsV1"])

	st := apply("").status(t)
	assert.Equal(t, int32(http.StatusConflict), st.Code)
	assert.Equal(t, `Apply failed with 1 conflict: conflict with "e2e.test" using apps/v1: .spec.replicas`, st.Message)
	require.Len(t, st.Details.Causes, 1)
	assert.Equal(t, ".spec.replicas", st.Details.Causes[0].Field)

	forced := apply("&force=true")
	forced.mustCode(t, http.StatusOK)
	for _, e := range managedFieldsOf(t, forced.body) {
		assert.NotEqual(t, "e2e.test", e["manager"], "the updater owned only replicas, now taken")
	}
	var spec struct{ Replicas int }
	require.NoError(t, json.Unmarshal(forced.object(t).Get("spec"), &spec))
	assert.Equal(t, 3, spec.Replicas)
}

// "should give up ownership of a field if forced applied by a
// controller": an update (PUT, as a controller writes) takes
// spec.replicas from the applier, so an apply that leaves replicas out
// keeps the updater's value instead of removing it.
func TestApplyLeavesWhatAnUpdaterTook(t *testing.T) {
	ts := startServer(t, Config{})
	path := "/apis/apps/v1/namespaces/default/deployments/shared"
	apply := func(replicas string) response {
		return ts.do(req{method: "PATCH", path: path + "?fieldManager=test_applier", body: deploymentApply("shared", replicas),
			header: map[string]string{"Content-Type": applyType}})
	}
	created := apply(`"replicas":3,`)
	created.mustCode(t, http.StatusCreated)

	obj := created.object(t)
	var spec map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj.Get("spec"), &spec))
	spec["replicas"] = json.RawMessage(`4`)
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	require.NoError(t, obj.Set("spec", raw))
	body, err := json.Marshal(obj)
	require.NoError(t, err)
	ts.do(req{method: "PUT", path: path, body: string(body), header: map[string]string{"User-Agent": "e2e.test/v1.37.2"}}).mustCode(t, http.StatusOK)

	got := apply("")
	got.mustCode(t, http.StatusOK)
	var after struct{ Replicas int }
	require.NoError(t, json.Unmarshal(got.object(t).Get("spec"), &after))
	assert.Equal(t, 4, after.Replicas)
}

// An object never applied carries no managedFields, whatever writes it
// (ours starts recording at the first apply: patch/update.go).
func TestNoManagedFieldsBeforeTheFirstApply(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.createConfigMap("fixtures2", "plain", nil, map[string]string{"a": "1"})
	patched := ts.do(req{method: "PATCH", path: cms2 + "/plain", body: `{"data":{"a":"2"}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	assert.Empty(t, managedFieldsOf(t, patched.mustCode(t, http.StatusOK)))
}

// "should work for subresources": an apply of status through the object
// changes nothing and owns nothing (status is reset there), so the same
// manager's apply through /status conflicts with no one and sets it.
func TestApplyStatusOnlyThroughItsSubresource(t *testing.T) {
	ts := startServer(t, Config{})
	path := "/api/v1/namespaces/default/pods/test-pod"
	apply := func(path, manager, body string) response {
		return ts.do(req{method: "PATCH", path: path + "?fieldManager=" + manager, body: body, header: map[string]string{"Content-Type": applyType}})
	}
	apply(path, "apply_test", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-pod"},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}`).
		mustCode(t, http.StatusCreated)
	status := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"test-pod"},"status":{"conditions":[{"type":"MyStatus","status":"True"}]}}`
	through := apply(path, "apply_test2", status)
	through.mustCode(t, http.StatusOK)
	assert.NotContains(t, string(through.object(t).Get("status")), "MyStatus")
	for _, e := range managedFieldsOf(t, through.body) {
		assert.NotEqual(t, "apply_test2", e["manager"], "it owns nothing")
	}
	got := apply(path+"/status", "apply_test2", status)
	got.mustCode(t, http.StatusOK)
	assert.Contains(t, string(got.object(t).Get("status")), "MyStatus")
}

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

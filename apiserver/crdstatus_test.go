package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const crontabsDefinition = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"

// conditionMessages are the messages of a definition's status conditions.
func conditionMessages(t *testing.T, status json.RawMessage) []string {
	t.Helper()
	var st struct {
		Conditions []struct{ Message string } `json:"conditions"`
	}
	require.NoError(t, json.Unmarshal(status, &st), "status: %s", status)
	var out []string
	for _, c := range st.Conditions {
		out = append(out, c.Message)
	}
	return out
}

// A definition's status subresource, as Kubernetes' e2e spec "getting/
// updating/patching custom resource definition status sub-resource works"
// uses it: GET .../status is the whole definition, PUT .../status writes
// the conditions sent (spec left alone), a JSON patch of .../status too;
// a write of the definition itself keeps the stored status
// (apiextensions-apiserver's strategy.go, PrepareForUpdate).
func TestCustomResourceDefinitionStatusSubresource(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")

	def := ts.get(crontabsDefinition + "/status").object(t)
	assert.Equal(t, ts.get(crontabsDefinition).object(t).Get("spec"), def.Get("spec"), "the status subresource reads the whole definition")
	require.Equal(t, []string{"no conflicts found", "the initial names have been accepted"}, conditionMessages(t, def.Get("status")))

	var status map[string]any
	require.NoError(t, json.Unmarshal(def.Get("status"), &status))
	status["conditions"] = append(status["conditions"].([]any), map[string]any{"message": "updated"})
	raw, err := json.Marshal(status)
	require.NoError(t, err)
	require.NoError(t, def.Set("status", raw))
	// The spec of a status write is not written.
	require.NoError(t, def.Set("spec", json.RawMessage(`{"group":"other.example.com"}`)))
	body, err := def.MarshalJSON()
	require.NoError(t, err)
	updated := ts.do(req{method: "PUT", path: crontabsDefinition + "/status", body: string(body)})
	updated.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"no conflicts found", "the initial names have been accepted", "updated"}, conditionMessages(t, updated.object(t).Get("status")))
	assert.Contains(t, string(updated.object(t).Get("spec")), `"group":"stable.example.com"`)

	patched := ts.do(req{method: "PATCH", path: crontabsDefinition + "/status",
		body:   `[{"op": "add", "path": "/status/conditions", "value": [{"message": "patched"}]}]`,
		header: map[string]string{"Content-Type": "application/json-patch+json"}})
	patched.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"patched"}, conditionMessages(t, patched.object(t).Get("status")))

	// A write of the definition keeps the status, whatever it carries.
	labelled := ts.do(req{method: "PATCH", path: crontabsDefinition,
		body:   `{"metadata":{"labels":{"a":"b"}},"status":{"conditions":[]}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	labelled.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"patched"}, conditionMessages(t, labelled.object(t).Get("status")))
	assert.Equal(t, map[string]string{"a": "b"}, labelled.object(t).Metadata.Labels)
}

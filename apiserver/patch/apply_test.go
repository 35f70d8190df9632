package patch

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestApplyOwnershipAndConflicts(t *testing.T) {
	now := time.Date(2026, 11, 23, 22, 24, 39, 0, time.UTC)
	req := func(m string, force bool) ApplyRequest {
		return ApplyRequest{Manager: m, APIVersion: "v1", Force: force, Now: now}
	}
	cfg := func(y string) []byte {
		js, _, err := ParseApplied([]byte(y))
		require.NoError(t, err)
		return js
	}
	obj, err := Apply(nil, cfg("data: {a: '1', b: '2'}\nmetadata: {labels: {x: 'y'}}"), req("one", false))
	require.NoError(t, err)
	assert.JSONEq(t, `{"data":{"a":"1","b":"2"},"metadata":{"labels":{"x":"y"},"managedFields":[{"manager":"one","operation":"Apply","apiVersion":"v1",`+
		`"time":"2026-11-23T22:24:39Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}}}}]}}`, string(obj))

	_, err = Apply(obj, cfg("data: {a: '9', b: '8'}"), req("two", false))
	var st *api.Status
	require.ErrorAs(t, err, &st)
	assert.Equal(t, int32(409), st.Code)
	assert.Equal(t, "Apply failed with 2 conflicts: conflicts with \"one\":\n- .data.a\n- .data.b", st.Message)
	require.Len(t, st.Details.Causes, 2)

	obj, err = Apply(obj, cfg("data: {a: '9'}"), req("two", true))
	require.NoError(t, err)
	var v struct {
		Data     map[string]string `json:"data"`
		Metadata struct {
			ManagedFields []struct {
				Manager  string          `json:"manager"`
				FieldsV1 json.RawMessage `json:"fieldsV1"`
			} `json:"managedFields"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(obj, &v))
	assert.Equal(t, map[string]string{"a": "9", "b": "2"}, v.Data)
	require.Len(t, v.Metadata.ManagedFields, 2)
	assert.JSONEq(t, `{"f:data":{"f:b":{}},"f:metadata":{"f:labels":{"f:x":{}}}}`, string(v.Metadata.ManagedFields[0].FieldsV1))
	assert.JSONEq(t, `{"f:data":{"f:a":{}}}`, string(v.Metadata.ManagedFields[1].FieldsV1))
}

func TestParseAppliedRefusesNonObjects(t *testing.T) {
	for _, body := range []string{"- a\n- b\n", "3", "{a: [unclosed", "a: .inf"} {
		_, _, err := ParseApplied([]byte(body))
		require.Error(t, err, body)
		assert.True(t, api.IsBadRequest(err), "%s: %v", body, err)
	}
}

// FuzzApply: any body either parses into an applied configuration whose
// apply gives valid JSON or a 4xx Status, or is a 400; never a panic.
func FuzzApply(f *testing.F) {
	live := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","managedFields":[{"manager":"m","operation":"Apply","fieldsV1":{"f:data":{"f:k":{}}}}]},"data":{"k":"v"}}`)
	for _, s := range []string{"data: {k: w}\n", `{"data":{"k":null}}`, "metadata: {labels: {a: b}, managedFields: []}\n", "a: &x [1]\nb: *x\n", "? [1]\n: 2\n"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, body string, force bool) {
		applied, _, err := ParseApplied([]byte(body))
		if err != nil {
			require.True(t, api.IsBadRequest(err), "%v", err)
			return
		}
		out, err := Apply(live, applied, ApplyRequest{Manager: "fuzz", APIVersion: "v1", Force: force, Now: time.Unix(0, 0)})
		if err != nil {
			var st *api.Status
			require.ErrorAs(t, err, &st)
			require.True(t, st.Code >= 400 && st.Code < 500, "%d %s", st.Code, st.Message)
			return
		}
		require.True(t, json.Valid(out), "%q", out)
	})
}

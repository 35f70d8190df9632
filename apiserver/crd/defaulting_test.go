package crd

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The cases of apiextensions-apiserver's defaulting algorithm
// (pkg/apiserver/schema/defaulting/algorithm.go, Default): an absent
// field gets its default, so does a null one unless the schema allows
// null, a present one keeps its value; defaults apply in objects, in the
// items of arrays and in the values of maps, and inside a default just
// filled in.
func TestDefaults(t *testing.T) {
	var s Schema
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{
		"spec":{"type":"object","default":{},"properties":{
			"replicas":{"type":"integer","default":1},
			"mode":{"type":"string","default":"auto"},
			"note":{"type":"string","nullable":true,"default":"n"},
			"ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"}}}},
			"limits":{"type":"object","additionalProperties":{"type":"object","properties":{"unit":{"type":"string","default":"Mi"}}}}}},
		"plain":{"type":"string"}}}`), &s))
	require.True(t, s.hasDefaults())

	o := &api.Object{Kind: "Widget", Fields: []api.Field{{Name: "plain", Value: json.RawMessage(`"x"`)}}}
	require.NoError(t, defaultObject(&s, o))
	assert.JSONEq(t, `{"replicas":1,"mode":"auto","note":"n"}`, string(o.Get("spec")), "spec's default {} is defaulted in turn")
	assert.JSONEq(t, `"x"`, string(o.Get("plain")))

	o = &api.Object{Kind: "Widget", Fields: []api.Field{{Name: "spec", Value: json.RawMessage(
		`{"replicas":3,"mode":null,"note":null,"ports":[{"port":80},{"protocol":"UDP"}],"limits":{"cpu":{},"memory":{"unit":"Gi"}}}`)}}}
	require.NoError(t, defaultObject(&s, o))
	assert.JSONEq(t, `{"replicas":3,"mode":"auto","note":null,"ports":[{"port":80,"protocol":"TCP"},{"protocol":"UDP"}],
		"limits":{"cpu":{"unit":"Mi"},"memory":{"unit":"Gi"}}}`, string(o.Get("spec")))

	var none Schema
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), &none))
	assert.False(t, none.hasDefaults())
	o = &api.Object{}
	require.NoError(t, defaultObject(&none, o))
	assert.Empty(t, o.Fields)
}

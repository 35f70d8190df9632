package crd

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// An embedded object's apiVersion and kind, wherever the object is (a
// property, a map value, a list item), as kube-apiserver 1.37.2 checks
// them on a create or an update: its words and field paths
// (k8s.io/apiextensions-apiserver v0.37.2
// pkg/apiserver/schema/objectmeta/validation.go, validateEmbeddedResource),
// after the causes of the schema's own validation.
func TestEmbeddedObjectsNeedAPIVersionAndKind(t *testing.T) {
	var s Schema
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"size":{"type":"integer"},
		"template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,
			"properties":{"kind":{"type":"string","enum":["Pod","ConfigMap"]}}},
		"byName":{"type":"object","additionalProperties":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}},
		"list":{"type":"array","items":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}}}`), &s))
	require.Empty(t, s.check(""))
	gk := api.GroupKind{Group: "example.com", Kind: "Widget"}
	for _, tc := range []struct {
		name, spec string
		causes     []api.StatusCause // nil: valid
	}{
		{name: "valid", spec: `{"template":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}},
			"byName":{"a":{"apiVersion":"apps/v1","kind":"Deployment"}},"list":[{"apiVersion":"example.com/v1","kind":"My-Kind"}]}`},
		{name: "missing", spec: `{"template":{"metadata":{"name":"p"}}}`, causes: []api.StatusCause{
			{Type: api.CauseFieldValueRequired, Field: "spec.template.apiVersion", Message: "Required value"},
			{Type: api.CauseFieldValueRequired, Field: "spec.template.kind", Message: "Required value"}}},
		{name: "empty", spec: `{"byName":{"a":{"apiVersion":"","kind":""}}}`, causes: []api.StatusCause{
			{Type: api.CauseFieldValueInvalid, Field: "spec.byName[a].apiVersion", Message: `Invalid value: "": must not be empty`},
			{Type: api.CauseFieldValueInvalid, Field: "spec.byName[a].kind", Message: `Invalid value: "": must not be empty`}}},
		{name: "not a group version", spec: `{"list":[{"apiVersion":"v1","kind":"Pod"},{"apiVersion":"a/b/v1","kind":"Pod"}]}`, causes: []api.StatusCause{
			{Type: api.CauseFieldValueInvalid, Field: "spec.list[1].apiVersion", Message: `Invalid value: "a/b/v1": unexpected GroupVersion string: a/b/v1`}}},
		{name: "kind not a DNS-1035 label", spec: `{"list":[{"apiVersion":"v1","kind":"My_Kind"}]}`, causes: []api.StatusCause{
			{Type: api.CauseFieldValueInvalid, Field: "spec.list[0].kind", Message: `Invalid value: "My_Kind": may have mixed case, but should otherwise match: ` +
				`a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character ` +
				`(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`}}},
		{name: "the schema's causes first, a declared kind held to its enum", spec: `{"template":{"kind":"Secret"},"size":"big"}`, causes: []api.StatusCause{
			{Type: causeFieldValueTypeInvalid, Field: "spec.size", Message: `Invalid value: "string": spec.size in body must be of type integer: "string"`},
			{Type: api.CauseFieldValueNotSupported, Field: "spec.template.kind", Message: `Unsupported value: "Secret": supported values: "Pod", "ConfigMap"`},
			{Type: api.CauseFieldValueRequired, Field: "spec.template.apiVersion", Message: "Required value"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &api.Object{Metadata: api.ObjectMeta{Name: "w"}, Fields: []api.Field{{Name: "spec", Value: json.RawMessage(tc.spec)}}}
			err := validateObject(gk, &s, o, true)
			if tc.causes == nil {
				require.NoError(t, err)
				return
			}
			st, ok := err.(*api.Status)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.causes, st.Details.Causes)
			// A write of the status subresource does not check them
			// (status_strategy.go, ValidateUpdate): only the schema's causes.
			o = &api.Object{Metadata: api.ObjectMeta{Name: "w"}, Fields: []api.Field{{Name: "spec", Value: json.RawMessage(tc.spec)}}}
			err = validateObject(gk, &s, o, false)
			if st, ok := err.(*api.Status); ok {
				for _, c := range st.Details.Causes {
					assert.NotEqual(t, api.CauseFieldValueRequired, c.Type)
				}
			}
		})
	}
}

// An embedded object's apiVersion or kind that is not a string fails the
// decoding, before validation, as kube-apiserver's coercer refuses it
// (objectmeta/algorithm.go, coerce).
func TestPrunerRefusesAnEmbeddedTypeMetaThatIsNoString(t *testing.T) {
	var s Schema
	require.NoError(t, json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"template":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true}}}}}`), &s))
	prune := pruner(&s)
	for body, want := range map[string]string{
		`{"spec":{"template":{"apiVersion":5,"kind":"Pod"}}}`:      `spec.template.apiVersion: Invalid value: 5: must be a string`,
		`{"spec":{"template":{"apiVersion":"v1","kind":1.5}}}`:     `spec.template.kind: Invalid value: 1.5: must be a string`,
		`{"spec":{"template":{"apiVersion":"v1","kind":null}}}`:    `spec.template.kind: Invalid value: null: must be a string`,
		`{"spec":{"template":{"apiVersion":["v1"],"kind":"Pod"}}}`: `spec.template.apiVersion: Invalid value: ["v1"]: must be a string`,
	} {
		_, err := prune([]byte(body))
		require.Error(t, err, body)
		assert.Equal(t, want, err.Error(), body)
	}
	_, err := prune([]byte(`{"spec":{"template":{"apiVersion":"v1","kind":"Pod"}}}`))
	assert.NoError(t, err)
}

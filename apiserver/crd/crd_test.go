package crd

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

const widgetSchema = `{"type":"object","properties":{
	"spec":{"type":"object","required":["color"],"properties":{
		"color":{"type":"string","enum":["red","blue"]},
		"size":{"type":"integer"},
		"ratio":{"type":"number"},
		"port":{"x-kubernetes-int-or-string":true},
		"tags":{"type":"array","items":{"type":"string"}},
		"labels":{"type":"object","additionalProperties":{"type":"string"}},
		"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
	"status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

func schema(t *testing.T) *Schema {
	t.Helper()
	var s Schema
	require.NoError(t, json.Unmarshal([]byte(widgetSchema), &s))
	require.Empty(t, s.check(""))
	return &s
}

func widget(spec string) *api.Object {
	o := &api.Object{Metadata: api.ObjectMeta{Name: "w"}}
	o.Fields = []api.Field{{Name: "spec", Value: json.RawMessage(spec)}, {Name: "junk", Value: json.RawMessage(`1`)}}
	return o
}

func TestValidateObject(t *testing.T) {
	gk := api.GroupKind{Group: "example.com", Kind: "Widget"}
	for _, tc := range []struct {
		name, spec, kept, cause string
	}{
		{name: "valid, unknown pruned", spec: `{"color":"red","size":3,"extra":1}`, kept: `{"color":"red","size":3}`},
		{name: "integer is a number", spec: `{"color":"red","ratio":2}`, kept: `{"color":"red","ratio":2}`},
		{name: "int or string", spec: `{"color":"red","port":"http"}`, kept: `{"color":"red","port":"http"}`},
		{name: "map values and free object", spec: `{"color":"blue","labels":{"a":"b"},"free":{"any":[1]}}`, kept: `{"color":"blue","free":{"any":[1]},"labels":{"a":"b"}}`},
		{name: "wrong type", spec: `{"color":"red","size":"three"}`, cause: `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`},
		{name: "float is not an integer", spec: `{"color":"red","size":1.5}`, cause: `must be of type integer: "number"`},
		{name: "array item", spec: `{"color":"red","tags":["a",2]}`, cause: `spec.tags[1] in body must be of type string`},
		{name: "required", spec: `{"size":1}`, cause: `spec.color: Required value`},
		{name: "enum", spec: `{"color":"green"}`, cause: `Unsupported value: "green"`},
		// Nulls as kube-apiserver 1.37.2 answered them (asked 2026-11-29
		// with this schema): a null member whose schema is not nullable
		// and has no default is dropped before validation, a null list
		// item is not.
		{name: "null object dropped", spec: `null`, kept: ``},
		{name: "null member dropped", spec: `{"color":"red","size":null,"labels":{"a":null},"free":{"x":null}}`,
			kept: `{"color":"red","labels":{},"free":{"x":null}}`},
		{name: "null required member dropped", spec: `{"color":null}`, cause: `spec.color: Required value`},
		{name: "null list item", spec: `{"color":"red","tags":[null]}`,
			cause: `spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := widget(tc.spec)
			err := validateObject(gk, schema(t), o, true)
			if tc.cause != "" {
				require.True(t, api.IsInvalid(err), "%v", err)
				assert.Contains(t, err.Error(), tc.cause)
				return
			}
			require.NoError(t, err)
			if tc.kept == "" {
				assert.Nil(t, o.Get("spec"))
				return
			}
			assert.JSONEq(t, tc.kept, string(o.Get("spec")))
			assert.Nil(t, o.Get("junk"), "unknown top-level fields are pruned")
		})
	}
}

// A member the root requires is required as anywhere else, null or
// absent (kube-apiserver 1.37.2: "spec: Required value", asked 2026-11-29).
func TestValidateObjectRootRequired(t *testing.T) {
	gk := api.GroupKind{Group: "example.com", Kind: "Widget"}
	s := schema(t)
	s.Required = []string{"spec"}
	for _, spec := range []string{``, `null`} {
		o := widget(`{"color":"red"}`)
		o.Fields = o.Fields[1:] // no spec
		if spec != "" {
			o.Fields = append(o.Fields, api.Field{Name: "spec", Value: json.RawMessage(spec)})
		}
		err := validateObject(gk, s, o, true)
		require.True(t, api.IsInvalid(err), "%v", err)
		assert.Equal(t, `Widget.example.com "w" is invalid: spec: Required value`, err.Error())
	}
	require.NoError(t, validateObject(gk, s, widget(`{"color":"red"}`), true))
}

func TestDefinitionValidate(t *testing.T) {
	good := func() *Definition {
		var s Schema
		_ = json.Unmarshal([]byte(widgetSchema), &s)
		d := &Definition{Name: "widgets.example.com", Spec: Spec{Group: "example.com", Scope: "Namespaced",
			Names: Names{Plural: "widgets", Kind: "Widget"}}}
		v := Version{Name: "v1", Served: true, Storage: true}
		v.Schema = &struct {
			OpenAPIV3Schema *Schema `json:"openAPIV3Schema"`
		}{&s}
		d.Spec.Versions = []Version{v}
		return d
	}
	assert.Empty(t, good().Validate(nil))
	lower := good()
	lower.Spec.Names.Kind = "testcrd" // Kubernetes' e2e tests name kinds so
	assert.Empty(t, lower.Validate(nil), "a kind may be all lower case")
	for name, breakIt := range map[string]func(d *Definition){
		"group without a dot": func(d *Definition) { d.Spec.Group, d.Name = "example", "widgets.example" },
		"name mismatch":       func(d *Definition) { d.Name = "gadgets.example.com" },
		"kind not a label":    func(d *Definition) { d.Spec.Names.Kind = "Wid_get" },
		"bad scope":           func(d *Definition) { d.Spec.Scope = "Galaxy" },
		"no storage":          func(d *Definition) { d.Spec.Versions[0].Storage = false },
		"no schema":           func(d *Definition) { d.Spec.Versions[0].Schema = nil },
	} {
		d := good()
		breakIt(d)
		assert.NotEmpty(t, d.Validate(nil), name)
	}
	assert.NotEmpty(t, good().Validate(func(api.GroupResource) bool { return true }), "shadowing a built-in")
}

func TestResourceFromDefinition(t *testing.T) {
	var d Definition
	require.NoError(t, json.Unmarshal([]byte(`{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},
		"versions":[{"name":"v1beta1","served":true,"storage":false},{"name":"v1","served":true,"storage":true,
		"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}},
		"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]}]}`), &d.Spec))
	versions := d.Resources()
	require.Len(t, versions, 2, "one per served version")
	res := versions[0]
	assert.Equal(t, "example.com/v1", res.APIVersion(), "the storage version first")
	assert.Equal(t, "example.com/v1beta1", versions[1].APIVersion())
	assert.Equal(t, "v1", versions[1].StorageVersion, "stored as v1")
	assert.Empty(t, versions[1].Columns, "v1beta1 declares no columns")
	assert.Equal(t, "widget", res.SingularName)
	assert.Equal(t, "WidgetList", res.ListKind)
	assert.False(t, res.Namespaced)
	assert.True(t, res.NoAgeColumn)

	o := widget(`{"size":4}`)
	require.NoError(t, res.PrepareCreate(o))
	assert.True(t, o.Unstructured, "custom resources encode with sorted keys")
	assert.NotNil(t, o.Get("junk"), "preserve-unknown-fields keeps everything")
	assert.Equal(t, int64(4), lookupPath(o, ".spec.size"))
	assert.Equal(t, "w", lookupPath(o, ".metadata.name"))
	assert.Nil(t, lookupPath(o, ".spec.nope.deeper"))

	// Stored as v1, read as v1beta1; an object already in the version
	// asked for is not copied.
	beta := versions[1].StoredAs
	stored := beta.ToStorage(&api.Object{APIVersion: "example.com/v1beta1", Kind: "Widget"})
	assert.Equal(t, "example.com/v1", stored.APIVersion)
	read := beta.FromStorage(stored)
	assert.Equal(t, "example.com/v1beta1", read.APIVersion)
	assert.Equal(t, "example.com/v1", stored.APIVersion, "the stored object is not changed")
	assert.Same(t, stored, res.StoredAs.FromStorage(stored))

	// A definition whose storage version is not served serves the others.
	d.Spec.Versions[1].Served = false
	versions = d.Resources()
	require.Len(t, versions, 1)
	assert.Equal(t, "example.com/v1beta1", versions[0].APIVersion())
}

// A definition's schema rejects a wrong type with the real server's words.
func ExampleSchema() {
	var s Schema
	_ = json.Unmarshal([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}`), &s)
	o := &api.Object{Metadata: api.ObjectMeta{Name: "bad"}, Fields: []api.Field{{Name: "spec", Value: json.RawMessage(`{"size":"three"}`)}}}
	fmt.Println(validateObject(api.GroupKind{Group: "example.com", Kind: "Widget"}, &s, o, true))
	// Output:
	// Widget.example.com "bad" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"
}

// The strict decoding errors of a custom resource, in the real server's
// order: duplicates, unknown metadata, then the pruned fields, sorted.
func TestPrunerReportsWhatItDrops(t *testing.T) {
	prune := pruner(schema(t))
	c, err := prune([]byte(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w","x":1},
		"spec":{"color":"red","zz":1,"color":"blue","free":{"any":1},"tags":["a"],"aa":{"b":2}},"junk":true,"status":{"ready":true,"why":"no"}}`))
	require.NoError(t, err)
	assert.Equal(t, []string{`duplicate field "spec.color"`, `unknown field "metadata.x"`,
		`unknown field "junk"`, `unknown field "spec.aa"`, `unknown field "spec.zz"`, `unknown field "status.why"`}, c.Strict)
	assert.JSONEq(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},
		"spec":{"color":"blue","free":{"any":1},"tags":["a"]},"status":{"ready":true}}`, string(c.JSON))
	assert.Nil(t, duplicateFields([]byte(`{"a":[{"b":1},{"b":2}],"c":{"b":1}}`)), "the same key in different objects is no duplicate")
}

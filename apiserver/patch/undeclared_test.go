package patch

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Which members an applied configuration may name, as the typed schema
// kube-openapi's schemaconv makes of a CRD's OpenAPI schema says.
func TestUndeclared(t *testing.T) {
	defs := map[string]json.RawMessage{objectMetaDef: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},
		"labels":{"type":"object","additionalProperties":{"type":"string"}}}}`)}
	root := json.RawMessage(`{"type":"object","properties":{
		"open":{"type":"object"},
		"map":{"type":"object","additionalProperties":{"type":"object","properties":{"a":{"type":"string"}}}},
		"anything":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true},
		"closed":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false},
		"keep":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{
			"inner":{"type":"object","properties":{"a":{"type":"string"}}},
			"obj":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object","properties":{"a":{"type":"string"}}}}}}},
		"set":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"object","properties":{"a":{"type":"string"}}}},
		"list":{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}},
		"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port","protocol"],
			"items":{"type":"object","properties":{"port":{"type":"integer"},"protocol":{"type":"string","default":"TCP"}}}}}}`)
	s, err := NewSchema(defs, root)
	require.NoError(t, err)
	for cfg, want := range map[string][]string{
		`{"apiVersion":"g/v","kind":"K","metadata":{"name":"n","labels":{"x":"y"}},"open":{"z":{"deep":1}},"anything":{"z":1},
		  "map":{"k":{"a":"b"}},"keep":{"z":1,"inner":{"z":1}},"list":[{"a":"b"}]}`: nil,
		`{"metadata":{"name":"n","zz":1,"aa":2}}`:                {".metadata.aa: field not declared in schema"},
		`{"map":{"k":{"b":1}},"closed":{"b":1},"top":1,"zzz":1}`: {".closed.b: field not declared in schema", ".map.k.b: field not declared in schema", ".top: field not declared in schema"},
		`{"keep":{"obj":{"apiVersion":"v1","kind":"K","metadata":{"x":1},"spec":{"b":1},"other":1}}}`: {
			// inside a preserving object every object preserves, but
			// ObjectMeta, a definition of its own, does not
			".keep.obj.metadata.x: field not declared in schema"},
		`{"list":[{"a":"b"},{"b":1}],"ports":[{"port":80,"b":1},{"port":81,"protocol":"UDP","b":1}]}`: {
			".list[1].b: field not declared in schema", `.ports[port=80,protocol="TCP"].b: field not declared in schema`,
			`.ports[port=81,protocol="UDP"].b: field not declared in schema`},
	} {
		assert.Equal(t, want, s.Undeclared([]byte(cfg)), cfg)
	}
	assert.Nil(t, (*Schema)(nil).Undeclared([]byte(`{"x":1}`)))
	assert.Equal(t, "failed to create typed patch object (/n; g/v, Kind=K): .x: field not declared in schema",
		UndeclaredError("/n; g/v, Kind=K", []string{".x: field not declared in schema"}))
	assert.Equal(t, "failed to create typed patch object (/n; g/v, Kind=K): errors:\n  .x: e\n  .y: e",
		UndeclaredError("/n; g/v, Kind=K", []string{".x: e", ".y: e"}))
}

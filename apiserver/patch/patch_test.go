package patch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMergePatch(t *testing.T) {
	cases := []struct {
		name, doc, patch, want string
		strategic              bool
	}{
		{"merge objects", `{"a":{"x":1,"y":2},"b":1}`, `{"a":{"y":3,"z":4}}`, `{"a":{"x":1,"y":3,"z":4},"b":1}`, false},
		{"null deletes", `{"a":{"x":1},"b":1}`, `{"a":{"x":null},"b":null}`, `{"a":{}}`, false},
		{"lists are replaced", `{"a":[1,2,3]}`, `{"a":[4]}`, `{"a":[4]}`, false},
		{"object over scalar", `{"a":1}`, `{"a":{"b":2}}`, `{"a":{"b":2}}`, false},
		{"numbers stay exact", `{"n":12345678901234567890}`, `{"m":0.1}`, `{"m":0.1,"n":12345678901234567890}`, false},
		{"directives are not data", `{"spec":{"c":[{"name":"a"}]}}`, `{"spec":{"$setElementOrder/c":[{"name":"b"}],"c":[{"name":"b","$patch":"merge"}]}}`, `{"spec":{"c":[{"name":"b"}]}}`, true},
		{"$patch delete", `{"a":{"x":1},"b":1}`, `{"a":{"$patch":"delete"}}`, `{"b":1}`, true},
		{"$patch replace", `{"a":{"x":1,"y":2}}`, `{"a":{"$patch":"replace","z":3}}`, `{"a":{"z":3}}`, true},
		{"delete list element", `{"a":[1]}`, `{"a":[{"name":"x","$patch":"delete"},{"name":"y"}]}`, `{"a":[{"name":"y"}]}`, true},
		{"merge patch keeps dollar keys", `{}`, `{"$x":1}`, `{"$x":1}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := applyMergePatch([]byte(c.doc), []byte(c.patch), c.strategic)
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
	_, err := applyMergePatch([]byte(`{}`), []byte(`[1]`), false)
	assert.ErrorIs(t, err, errBadMergePatch)
}

func TestJSONPatch(t *testing.T) {
	doc := `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1}`
	cases := []struct {
		name, patch, want, err string
	}{
		{"add member", `[{"op":"add","path":"/n","value":null}]`, `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1,"n":null}`, ""},
		{"add to array", `[{"op":"add","path":"/a/b/1","value":9}]`, `{"a":{"b":[1,9,2,3]},"c":"x","d~e/f":1}`, ""},
		{"append", `[{"op":"add","path":"/a/b/-","value":4}]`, `{"a":{"b":[1,2,3,4]},"c":"x","d~e/f":1}`, ""},
		{"replace root member", `[{"op":"replace","path":"/c","value":{"y":1}}]`, `{"a":{"b":[1,2,3]},"c":{"y":1},"d~e/f":1}`, ""},
		{"escaped pointer", `[{"op":"remove","path":"/d~0e~1f"}]`, `{"a":{"b":[1,2,3]},"c":"x"}`, ""},
		{"remove array element", `[{"op":"remove","path":"/a/b/0"}]`, `{"a":{"b":[2,3]},"c":"x","d~e/f":1}`, ""},
		{"move", `[{"op":"move","from":"/c","path":"/z"}]`, `{"a":{"b":[1,2,3]},"z":"x","d~e/f":1}`, ""},
		{"copy", `[{"op":"copy","from":"/a","path":"/a2"}]`, `{"a":{"b":[1,2,3]},"a2":{"b":[1,2,3]},"c":"x","d~e/f":1}`, ""},
		{"test passes", `[{"op":"test","path":"/a/b","value":[1,2,3.0]}]`, doc, ""},
		{"test fails", `[{"op":"test","path":"/c","value":"y"}]`, "", "testing value /c failed"},
		{"replace missing", `[{"op":"replace","path":"/nope","value":1}]`, "", "does not exist"},
		{"index out of range", `[{"op":"add","path":"/a/b/7","value":1}]`, "", "out of bounds"},
		{"leading zero index", `[{"op":"remove","path":"/a/b/01"}]`, "", "invalid array index"},
		{"through a scalar", `[{"op":"add","path":"/c/x","value":1}]`, "", "scalar"},
		{"bad pointer", `[{"op":"add","path":"c","value":1}]`, "", "must start with '/'"},
		{"missing value", `[{"op":"add","path":"/x"}]`, "", "missing value"},
		{"move into itself", `[{"op":"move","from":"/a","path":"/a/x"}]`, "", "into itself"},
		{"unknown op", `[{"op":"frob","path":"/a"}]`, "", "unsupported operation"},
		{"remove root", `[{"op":"remove","path":""}]`, "", "whole document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := decodeJSONPatch([]byte(c.patch))
			require.NoError(t, err)
			got, err := applyJSONPatch([]byte(doc), ops)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
}

func FuzzPatch(f *testing.F) {
	doc := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v","l":[1,2]}}`)
	for _, s := range []string{`{"data":{"k":null}}`, `{"metadata":{"$patch":"delete"}}`, `[{"op":"add","path":"/data/l/-","value":3}]`,
		`[{"op":"move","from":"/data","path":"/d"}]`, `[{"op":"copy","from":"/metadata","path":"/metadata/labels/x"}]`, `{"$setElementOrder/data":[1]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		for _, pt := range []string{MergePatchType, StrategicPatchType, JSONPatchType} {
			apply, err := Func(pt, []byte(patch))
			if err != nil {
				continue
			}
			_, _ = apply(doc)
		}
	})
}

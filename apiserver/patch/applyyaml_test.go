package patch

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Repeated keys are listed as goyaml.v2's strict decoder lists them, by
// the line of the repeated value; the last value wins. The JSON body is
// crdApplyInvalidBody of k8s.io/kubernetes v1.37.2
// test/integration/apiserver/field_validation_test.go, whose expected
// errors are lines 10 and 16.
func TestParseAppliedRepeatedKeys(t *testing.T) {
	body := `
{
	"apiVersion": "%s",
	"kind": "%s",
	"metadata": {
		"name": "%s"
	},
	"spec": {
		"knownField1": "val1",
		"knownField1": "val2",
		"ports": [{
			"name": "portName",
			"containerPort": 8080,
			"protocol": "TCP",
			"hostPort": 8081,
			"hostPort": 8082
		}]
	}
}`
	js, dups, err := ParseApplied([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, []string{`line 10: key "knownField1" already set in map`, `line 16: key "hostPort" already set in map`}, dups)
	assert.JSONEq(t, `{"apiVersion":"%s","kind":"%s","metadata":{"name":"%s"},"spec":{"knownField1":"val2",
		"ports":[{"name":"portName","containerPort":8080,"protocol":"TCP","hostPort":8082}]}}`, string(js))
	assert.Equal(t, "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n"+
		"  line 10: key \"knownField1\" already set in map\n  line 16: key \"hostPort\" already set in map", StrictApplyError(dups).Error())

	// A repeat inside a repeated value comes first; keys keep their YAML
	// type (1 and "1" differ; y is YAML 1.1's true), and a third time is
	// a second repeat. goyaml.v2 v2.4.4's UnmarshalStrict lists these five.
	_, dups, err = ParseApplied([]byte("a:\n  x: 1\nb: 1\na:\n  y: 1\n  y: 2\n1: a\n\"1\": b\nb: 2\nb: 3\non: 1\ntrue: 2\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{`line 6: key true already set in map`, `line 5: key "a" already set in map`,
		`line 9: key "b" already set in map`, `line 10: key "b" already set in map`, `line 12: key true already set in map`}, dups)
}

// Aliases expand, but not without bound, merged or not.
func TestParseAppliedAliases(t *testing.T) {
	js, dups, err := ParseApplied([]byte("base: &b {x: 1, z: 2}\nm:\n  <<: *b\nl: &l [1, 2]\nk: *l\n"))
	require.NoError(t, err)
	assert.Empty(t, dups)
	assert.JSONEq(t, `{"base":{"x":1,"z":2},"m":{"x":1,"z":2},"l":[1,2],"k":[1,2]}`, string(js))

	var bomb strings.Builder
	bomb.WriteString("a: &a [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 'b'; i <= 'k'; i++ {
		prev := string(i - 1)
		bomb.WriteString(string(i) + ": &" + string(i) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
			", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n")
	}
	_, _, err = ParseApplied([]byte(bomb.String()))
	require.Error(t, err)
	assert.True(t, api.IsBadRequest(err))
	assert.Contains(t, err.Error(), "excessive aliasing")

	// Merges of merges of an empty map visit no key, but are not free.
	bomb.Reset()
	bomb.WriteString("a: &a {}\n")
	for i := 'b'; i <= 'k'; i++ {
		prev := "*" + string(i-1)
		bomb.WriteString(string(i) + ": &" + string(i) + " {<<: [" + strings.Repeat(prev+", ", 9) + prev + "]}\n")
	}
	_, _, err = ParseApplied([]byte(bomb.String()))
	require.Error(t, err)
	assert.True(t, api.IsBadRequest(err))
	assert.Contains(t, err.Error(), "excessive aliasing")
}

// Merge keys as goyaml.v2 decodes them (go.yaml.in/yaml/v2 v2.4.4
// decode.go, decoder.mapping and decoder.merge): a merge key's maps go
// into the same map where the merge key stands, a list's from its last map
// to its first, and whatever comes later overwrites what came before; a
// key the map already holds, merged or written out, is a repeat, numbered
// by the line of the value met second. Every want was checked against
// k8s.io/apimachinery v0.37.2 pkg/util/yaml Unmarshal (the JSON) and
// UnmarshalStrict (the repeats). (Keys avoid y and n, booleans to goyaml.v2.)
func TestParseAppliedMergeKeys(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		dups             []string
	}{{
		name: "merge list: the first map wins, its key is the repeat",
		body: "a: &a {x: 1, p: 1}\nb: &b {p: 2, z: 2}\nm:\n  <<: [*a, *b]\n",
		want: `{"a":{"x":1,"p":1},"b":{"p":2,"z":2},"m":{"x":1,"p":1,"z":2}}`,
		dups: []string{`line 1: key "p" already set in map`},
	}, {
		name: "merge list of maps with no key in common",
		body: "a: &a {x: 1}\nb: &b {z: 2}\nm:\n  <<: [*a, *b]\n",
		want: `{"a":{"x":1},"b":{"z":2},"m":{"x":1,"z":2}}`,
	}, {
		name: "merge list of mappings written in place",
		body: "m:\n  <<: [{x: 1}, {x: 2}]\n",
		want: `{"m":{"x":1}}`,
		dups: []string{`line 2: key "x" already set in map`},
	}, {
		name: "the same map merged twice",
		body: "a: &a {x: 1}\nm:\n  <<: [*a, *a]\n",
		want: `{"a":{"x":1},"m":{"x":1}}`,
		dups: []string{`line 1: key "x" already set in map`},
	}, {
		name: "single merge, an explicit key after it overrides",
		body: "base: &base {foo: 1, x: 1}\nspec:\n  <<: *base\n  foo: 2\n",
		want: `{"base":{"foo":1,"x":1},"spec":{"foo":2,"x":1}}`,
		dups: []string{`line 4: key "foo" already set in map`},
	}, {
		name: "single merge, an explicit key before it is overridden",
		body: "base: &base {foo: 1, x: 1}\nspec:\n  foo: 2\n  <<: *base\n",
		want: `{"base":{"foo":1,"x":1},"spec":{"foo":1,"x":1}}`,
		dups: []string{`line 1: key "foo" already set in map`},
	}, {
		name: "explicit key given twice after a merge",
		body: "base: &base {foo: 1}\nspec:\n  <<: *base\n  foo: 2\n  foo: 3\n",
		want: `{"base":{"foo":1},"spec":{"foo":3}}`,
		dups: []string{`line 4: key "foo" already set in map`, `line 5: key "foo" already set in map`},
	}, {
		name: "merge list and an explicit override",
		body: "a: &a {x: 1, p: 1}\nb: &b {p: 2}\nm:\n  <<: [*a, *b]\n  p: 3\n",
		want: `{"a":{"x":1,"p":1},"b":{"p":2},"m":{"x":1,"p":3}}`,
		dups: []string{`line 1: key "p" already set in map`, `line 5: key "p" already set in map`},
	}, {
		name: "two merge keys",
		body: "a: &a {x: 1}\nm:\n  <<: {p: 2}\n  <<: *a\n  x: 5\n",
		want: `{"a":{"x":1},"m":{"p":2,"x":5}}`,
		dups: []string{`line 5: key "x" already set in map`},
	}, {
		name: "a merged map that merges",
		body: "a: &a {x: 1}\nb: &b {<<: *a, p: 2}\nm:\n  <<: *b\n  x: 3\n",
		want: `{"a":{"x":1},"b":{"x":1,"p":2},"m":{"x":3,"p":2}}`,
		dups: []string{`line 5: key "x" already set in map`},
	}, {
		name: "a repeat inside the anchored map, met at the anchor and at the merge",
		body: "a: &a {x: 1, x: 2}\nm:\n  <<: *a\n",
		want: `{"a":{"x":2},"m":{"x":2}}`,
		dups: []string{`line 1: key "x" already set in map`, `line 1: key "x" already set in map`},
	}, {
		name: "a repeat inside a merged value comes before the merged key's",
		body: "a: &a {x: {q: 1, q: 2}}\nm:\n  <<: *a\n  x: 7\n",
		want: `{"a":{"x":{"q":2}},"m":{"x":7}}`,
		dups: []string{`line 1: key "q" already set in map`, `line 1: key "q" already set in map`, `line 4: key "x" already set in map`},
	}, {
		name: "an explicitly tagged merge key",
		body: "m:\n  !!merge <<: {x: 1}\n",
		want: `{"m":{"x":1}}`,
	}, {
		name: "a quoted << is a key",
		body: "m:\n  \"<<\": {x: 1}\n",
		want: `{"m":{"<<":{"x":1}}}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			js, dups, err := ParseApplied([]byte(tc.body))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(js))
			assert.Equal(t, tc.dups, dups)
		})
	}
}

// What a merge key may merge: a mapping, an alias of one, or a list of
// those; not an alias of a list, nor a list in the list
// (go.yaml.in/yaml/v2 v2.4.4 decode.go, decoder.merge and failWantMap). In
// YAML's block style the conversion for the audit log meets the error
// first (kube-apiserver 1.37.2 answered the last body so).
func TestParseAppliedMergeKeyValues(t *testing.T) {
	for _, body := range []string{
		"m:\n  <<: 3\n",
		"s: &s [1]\nm:\n  <<: *s\n",
		"s: &s {x: 1}\nm:\n  <<: [*s, 3]\n",
		"s: &s [1]\nm:\n  <<: [*s]\n",
		"a: &a {x: 1}\nm:\n  <<: [[*a]]\n",
	} {
		_, _, err := ParseApplied([]byte(body))
		require.Error(t, err, body)
		assert.True(t, api.IsBadRequest(err), "%s: %v", body, err)
		assert.Equal(t, "error encoding patch: yaml: map merge requires map or sequence of maps as the value", err.Error(), body)
	}
}

// A key written out after a merge that gave it, under each
// fieldValidation (handlers/apply.go reads ParseApplied's answer so, as
// k8s.io/apiserver v0.37.2 endpoints/handlers/patch.go
// applyPatchToCurrentObject does): Ignore takes the explicit value and says
// nothing, Warn takes it and warns with each repeat's line (handlers/rest.go
// parseYAMLWarnings), Strict refuses the apply with all of them.
func TestParseAppliedMergeRepeatUnderEachMode(t *testing.T) {
	js, dups, err := ParseApplied([]byte("base: &base {foo: 1}\nspec:\n  <<: *base\n  foo: 2\n"))
	require.NoError(t, err)
	for _, tc := range []struct {
		mode, want string
		warnings   []string
		refusal    string
	}{
		{mode: "Ignore", want: `{"base":{"foo":1},"spec":{"foo":2}}`},
		{mode: "Warn", want: `{"base":{"foo":1},"spec":{"foo":2}}`, warnings: []string{`line 4: key "foo" already set in map`}},
		{mode: "Strict", refusal: "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"foo\" already set in map"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			switch tc.mode {
			case "Strict":
				refused := StrictApplyError(dups)
				assert.True(t, api.IsBadRequest(refused))
				assert.Equal(t, tc.refusal, refused.Error())
			case "Warn":
				assert.Equal(t, tc.warnings, dups)
				assert.JSONEq(t, tc.want, string(js))
			default:
				assert.JSONEq(t, tc.want, string(js))
			}
		})
	}
}

// What is not an object is refused as kube-apiserver 1.37.2 refused the
// same bodies (sent to it with curl): "error encoding patch" from its
// conversion for the audit log, unless the body starts with "{";
// "error decoding patch" from applyPatcher.
func TestParseAppliedWording(t *testing.T) {
	for body, msg := range map[string]string{
		"- a\n- b\n":     "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}",
		"3":              "error decoding patch: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go value of type map[string]interface {}",
		"{a: [unclosed":  "error decoding patch: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
		"a: [unclosed":   "error encoding patch: yaml: line 1: did not find expected ',' or ']'",
		"? [1]\n: 2\n":   "error encoding patch: yaml: invalid map key: []interface {}{1}",
		"{? [1]\n: 2}\n": "error decoding patch: error converting YAML to JSON: yaml: invalid map key: []interface {}{1}",
		"a: !!int x\n":   "error encoding patch: yaml: cannot decode !!str `x` as a !!int",
	} {
		_, _, err := ParseApplied([]byte(body))
		require.Error(t, err, body)
		assert.True(t, api.IsBadRequest(err), "%s: %v", body, err)
		assert.Equal(t, msg, err.Error(), body)
	}
}

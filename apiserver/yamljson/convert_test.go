package yamljson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each scalar becomes the JSON value goyaml.v2 v2.4.4 decodes it to. Every
// expected value and error in this file was printed by sigs.k8s.io/yaml
// v1.6.0's YAMLToJSON and YAMLToJSONStrict for the same input.
func TestConvertScalarsAsYAML11(t *testing.T) {
	for in, want := range map[string]string{
		"2001-12-14":                   `"2001-12-14"`,
		"2001-12-14T21:59:43.10-05:00": `"2001-12-14T21:59:43.10-05:00"`,
		"yes":                          `true`,
		"Y":                            `true`,
		"on":                           `true`,
		"OFF":                          `false`,
		"n":                            `false`,
		"'yes'":                        `"yes"`,
		"!!str yes":                    `"yes"`,
		"0777":                         `511`,
		"1_000":                        `1000`,
		"0o17":                         `15`,
		"0x1F":                         `31`,
		"0b101":                        `5`,
		"1e3":                          `1000`,
		".5":                           `0.5`,
		"+1":                           `1`,
		"1:20":                         `"1:20"`,
		"~":                            `null`,
		"!!str 12":                     `"12"`,
		"True":                         `true`,
	} {
		js, repeated, err := Convert([]byte("a: " + in))
		require.NoError(t, err, in)
		assert.Empty(t, repeated)
		assert.JSONEq(t, `{"a":`+want+`}`, string(js), in)
	}
}

// Keys become JSON member names as sigs.k8s.io/yaml names them, after
// goyaml.v2 has decided what they are: on is true, 1 is 1.
func TestConvertKeys(t *testing.T) {
	js, repeated, err := Convert([]byte("on: a\n1: b\n1.5: c\nx: d\ntrue: e\n"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"true":"e","1":"b","1.5":"c","x":"d"}`, string(js))
	assert.Equal(t, []string{`line 5: key true already set in map`}, repeated)

	for in, want := range map[string]string{
		"[a, b]: c\n":        `yaml: invalid map key: []interface {}{"a", "b"}`,
		"{a: 1}: 2\n":        `yaml: invalid map key: map[interface {}]interface {}{"a":1}`,
		"a: !!int x\n":       "yaml: cannot decode !!str `x` as a !!int",
		"~: x\n":             `unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"`,
		"~: x\nb: !!int z\n": "yaml: cannot decode !!str `z` as a !!int",
	} {
		_, _, err := Convert([]byte(in))
		assert.EqualError(t, err, want, in)
	}
}

// A body with no document is null; with several, the first counts.
// Malformed YAML keeps goyaml's words.
func TestConvertDocuments(t *testing.T) {
	for in, want := range map[string]string{"": `null`, "# nothing\n": `null`, "a: 1\n---\nb: 2\n": `{"a":1}`, "[1, x]": `[1,"x"]`} {
		js, _, err := Convert([]byte(in))
		require.NoError(t, err, in)
		assert.JSONEq(t, want, string(js), in)
	}
	_, _, err := Convert([]byte("a: b\n data: x\n  b: [\n"))
	assert.EqualError(t, err, "yaml: line 2: mapping values are not allowed in this context")
	_, _, err = Convert([]byte("a: &a [*a]\n"))
	assert.EqualError(t, err, "yaml: anchor 'a' value contains itself")
	_, _, err = Convert([]byte("a: &a {b: {<<: *a}}\n"))
	assert.EqualError(t, err, "yaml: anchor 'a' value contains itself")
	assert.Equal(t, "yaml: unmarshal errors:\n  line 2: key \"a\" already set in map\n  line 3: key \"b\" already set in map",
		RepeatedKeysError([]string{`line 2: key "a" already set in map`, `line 3: key "b" already set in map`}))
}

// Any body: an error or valid JSON, never a panic, with every repeated
// key worded as goyaml.v2 words one.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{"a: 1\na: 2\n", "a: &a {x: 1}\n? *a\n: 2\n", "a: &a [1]\nb: {<<: *a}\n",
		"~: x\n", "on: [y, n, 2001-12-14]\n", "- {a: !!binary aGVsbG8=}\n", "{\"a\": [1, 2.5, null]}", "a: !!int x\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		js, repeated, err := Convert(body)
		if err != nil {
			return
		}
		if !json.Valid(js) {
			t.Fatalf("not JSON: %q", js)
		}
		for _, r := range repeated {
			if !strings.HasPrefix(r, "line ") || !strings.HasSuffix(r, " already set in map") {
				t.Fatalf("repeated key worded %q", r)
			}
		}
	})
}

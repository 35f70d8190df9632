package interop

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"listwatch/apiserver/yamljson"
)

// yamlCases are bodies where YAML 1.1 and 1.2, or goyaml.v2 and v3, could
// part ways: scalars, keys, tags, anchors and merges, repeats, errors.
var yamlCases = []string{
	"a: yes\nb: No\nc: ON\nd: off\ne: y\nf: N\n", "a: 2001-12-14\nb: 2001-12-14T21:59:43.10-05:00\n",
	"a: 0777\nb: 1_000\nc: 0o17\nd: 0x1F\ne: 0b101\nf: 1e3\ng: .5\nh: +1\ni: -.inf\nj: 1:20\n",
	"on: a\n1: b\n1.5: c\n\"1\": d\ntrue: e\n", "a: !!binary aGVsbG8=\nb: !!str 12\nc: !!float 1\nd: !custom x\n",
	"a: !!timestamp 2001-12-14\nb: !!set {x}\nc: !!omap [{a: 1}]\n", "base: &b {x: 1, z: 2}\nm:\n  <<: *b\n  x: 3\n",
	"a: &a {x: 1}\nb: &b {x: 2, y: 3}\nm: {<<: [*a, *b]}\n", "a: 1\na: 2\nb: {c: 1, c: 2}\n", "~: x\n", "[a, b]: c\n",
	"{a: 1}: 2\n", "a: !!int x\n", "a: !!null x\n", "a: [1, 2\n", "a: b\n  c: d\n", "a:\n\tb: 1\n", "", "# only\n",
	"a: 1\n---\nb: 2\n", "- a\n- b\n", "3", "\"s\"", "{\"a\": [1, 2.5, null, true]}", "a: &a [*a]\n",
	"a: 99999999999999999999\nb: -9223372036854775808\nc: 18446744073709551615\n", ".nan: 1\n.inf: 2\n",
	"a: |\n  text\n  more\nb: >\n  folded\n  text\n", "a: 'it''s'\nb: \"tab\\there\"\n",
	"a: &a {b: {<<: *a}}\n", "s: &s [1]\nm:\n  <<: *s\n", "base: &b {foo: 1}\nspec:\n  <<: *b\n  foo: 2\n",
	"a: &a {x: 1}\nm: {x: 0, <<: [*a, {x: 2}]}\n", "? [1]\n: 2\n", "a: {b: *nope}\n", "%YAML 2.0\n---\na: 1\n",
	"a: !!bool yes\nb: !!bool off\n", "? {}\n? []\n", "1: b\n\"1\": d\n",
}

// yamljson.Convert reads YAML as kube-apiserver 1.37.2 does:
// sigs.k8s.io/yaml v1.6.0 YAMLToJSON (over goyaml.v2) for the JSON and its
// error, YAMLToJSONStrict for the keys given twice.
//
// Only bodies both YAML parsers read alike can be held to this: goyaml.v3,
// whose parser ours is, reads some corners of YAML's grammar differently
// from goyaml.v2. A differential fuzz of the two found these, each a
// parser's choice and not our walk's: "{}:" is {} to goyaml.v2 and a map
// with the key {} to goyaml.v3; "\"\n\"0:" is a document to one and an
// error to the other; a body both refuse may be refused in other words,
// or on another line ("a: 1\nb\nc: 2": line 3 to goyaml.v2, line 2 to
// goyaml.v3); the non-specific tag of "! 12" makes a string to goyaml.v2
// and is gone from goyaml.v3's tree. Everything of our own it found is
// fixed and kept below.
func TestYAMLToJSONAsSigsYAML(t *testing.T) {
	for _, body := range yamlCases {
		assertSameAsSigsYAML(t, []byte(body))
	}
}

// assertSameAsSigsYAML: the same JSON, or errors with the same words, and
// the same keys given twice.
func assertSameAsSigsYAML(t *testing.T, body []byte) {
	t.Helper()
	want, wantErr := yaml.YAMLToJSON(body)
	got, repeated, err := yamljson.Convert(body)
	if wantErr != nil {
		require.Error(t, err, "%q: sigs.k8s.io/yaml: %v", body, wantErr)
		assert.Equal(t, wantErr.Error(), err.Error(), "%q", body)
		return
	}
	require.NoError(t, err, "%q", body)
	// Where two keys are one JSON name (1 and "1"), sigs.k8s.io/yaml
	// keeps the value of either, in Go's random map order; ours must be
	// one of the answers it gives.
	for i := 0; i < 50 && string(want) != string(got); i++ {
		want, _ = yaml.YAMLToJSON(body)
	}
	assert.Equal(t, string(want), string(got), "%q", body)
	_, strictErr := yaml.YAMLToJSONStrict(body)
	if len(repeated) == 0 {
		assert.NoError(t, strictErr, "%q", body)
		return
	}
	require.Error(t, strictErr, "%q: we found %v", body, repeated)
	assert.Equal(t, strictErr.Error(), yamljson.RepeatedKeysError(repeated), "%q", body)
}

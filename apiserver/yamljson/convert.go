package yamljson

import (
	"cmp"
	"encoding/json"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Convert turns a YAML document (JSON is YAML too) into JSON, as
// sigs.k8s.io/yaml's YAMLToJSON does: the first document only, the last
// value of a key given twice, YAML 1.1's scalars (scalar.go). repeated
// lists the keys given twice, in the words YAMLToJSONStrict's error uses
// for each (`line 7: key "a" already set in map`, numbered by the line of
// the value met second; see RepeatedKeysError).
//
// An error is worded as goyaml.v2 words it (`yaml: line 4: did not find
// expected key`), without a prefix: each caller says where it came from,
// as kube-apiserver's callers do. An empty body is JSON null.
func Convert(body []byte) (js []byte, repeated []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, nil, err
	}
	w := walk{budget: 4*len(body) + 100_000}
	v, err := w.value(&doc)
	if err = cmp.Or(err, w.unconvertible); err != nil {
		return nil, nil, err
	}
	if js, err = json.Marshal(v); err != nil {
		return nil, nil, err
	}
	return js, w.repeated, nil
}

// RepeatedKeysError is the error YAMLToJSONStrict returns for a body with
// keys given twice (goyaml.v2's TypeError, decode.go: "yaml: unmarshal
// errors:" and one indented line each). kube-apiserver reports it as one
// strict decoding error, and as one Warning per line under
// fieldValidation=Warn (k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/rest.go, parseYAMLWarnings).
func RepeatedKeysError(repeated []string) string {
	return "yaml: unmarshal errors:\n  " + strings.Join(repeated, "\n  ")
}

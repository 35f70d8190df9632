package patch

import (
	"bytes"
	"fmt"
	"unicode"

	"listwatch/api"
	"listwatch/apiserver/yamljson"
)

// Reading an apply's body, as kube-apiserver 1.37 does it (k8s.io/apiserver
// v0.37.2 endpoints/handlers/patch.go, applyPatcher): the body is YAML (JSON
// is YAML too) decoded leniently by k8s.io/apimachinery v0.37.2
// pkg/util/yaml Unmarshal (sigs.k8s.io/yaml v1.6.0 over go.yaml.in/yaml/v2
// v2.4.4), whose goyaml.v2 keeps the last value of a key given twice in one
// mapping. Only after the apply has worked, and only under fieldValidation
// Warn or Strict, is the body decoded again with UnmarshalStrict, which
// lists every key given again (go.yaml.in/yaml/v2 v2.4.4 decode.go,
// decoder.setMapIndex), numbered by the line of the repeated key's value:
//
//	line 9: key "foo" already set in map
//
// Strict makes the list a 400 (StrictApplyError); Warn sends each line as
// a Warning header (handlers/rest.go, parseYAMLWarnings).
//
// A merge key (<<: *base, or <<: [*a, *b]) is no exception: goyaml.v2
// (decode.go, decoder.merge) decodes the merged maps into the same map, so
// that a merged key and a key written out, or two merged maps, that give
// the same key are a repeat like any other (decoder.setMapIndex only asks
// whether the map already holds the key), numbered by the line of the
// value met second, which may be in the anchored map:
//
//	base: &base {foo: 1}
//	spec:
//	  <<: *base
//	  foo: 2        # line 4: key "foo" already set in map
//
// Ours decodes once (yamljson.Convert, which walks goyaml.v3's node tree
// the way goyaml.v2 would have decoded it): the last value wins, and the
// repeats are listed in the order goyaml.v2 meets them (everything inside
// a value before that value's own key).

// ParseApplied reads an applied configuration into a JSON object (each
// repeated key's last value) and the repeated keys in goyaml.v2's words.
// A body that is not YAML, or not an object, is a 400, worded as
// kube-apiserver 1.37.2 words it. Two steps of its patch handler read the
// body: validateAndTranscodePatch converts it to JSON for the audit log
// unless it starts with "{" (apimachinery's util/yaml ToJSON, IsJSONBuffer),
// failing with "error encoding patch: ..."; then applyPatcher decodes it
// (sigs.k8s.io/yaml Unmarshal), failing with "error decoding patch:
// error converting YAML to JSON: ..." or, for what is not an object,
// "error decoding patch: error unmarshaling JSON: ...".
func ParseApplied(body []byte) (js []byte, duplicates []string, err error) {
	bad := func(why string) error { return api.NewBadRequest("error decoding patch: " + why) }
	js, duplicates, err = yamljson.Convert(body)
	switch {
	case err != nil && !startsWithBrace(body):
		return nil, nil, api.NewBadRequest("error encoding patch: " + err.Error())
	case err != nil:
		return nil, nil, bad("error converting YAML to JSON: " + err.Error())
	}
	switch js[0] {
	case '{':
		return js, duplicates, nil
	case 'n':
		return nil, nil, bad("the applied configuration must be an object")
	}
	// sigs.k8s.io/yaml decodes the JSON it made into a map.
	return nil, nil, bad(fmt.Sprintf("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}", jsonType(js)))
}

// startsWithBrace says whether a body is JSON to apimachinery's util/yaml
// (IsJSONBuffer): its first character after white space is "{".
func startsWithBrace(body []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeftFunc(body, unicode.IsSpace), []byte("{"))
}

// StrictApplyError is the 400 for an applied configuration with repeated
// keys under fieldValidation=Strict.
func StrictApplyError(duplicates []string) error {
	return api.NewBadRequest("error strict decoding patch: error converting YAML to JSON: " + yamljson.RepeatedKeysError(duplicates))
}

// jsonType names the JSON type of a value that is not an object as
// encoding/json's UnmarshalTypeError does, from its first byte.
func jsonType(js []byte) string {
	switch js[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

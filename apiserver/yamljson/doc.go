// Package yamljson reads a YAML request body into JSON the way
// kube-apiserver 1.37 reads one, so that every later step (kind, types,
// fieldValidation, apply) works on JSON alone.
//
// Where it sits: a create or update sent as application/yaml
// (negotiation) and every server-side apply (patch, whose bodies are YAML
// or JSON) pass through Convert before anything else looks at them.
//
// What it mirrors: sigs.k8s.io/yaml v1.6.0 YAMLToJSON and YAMLToJSONStrict
// (yaml.go), which kube-apiserver's YAML serializer calls
// (k8s.io/apimachinery v0.37.2 pkg/runtime/serializer/json/json.go,
// Serializer.Decode and unmarshal) and which decode with
// go.yaml.in/yaml/v2 v2.4.4, a YAML 1.1 reader. We decode with
// go.yaml.in/yaml/v3 into its node tree and walk the tree ourselves, because
// the tree keeps what goyaml.v2 would have said about a key given twice
// (its line), which v3 itself refuses outright, and because the walk lets
// a plain scalar mean what YAML 1.1 says it means (scalar.go).
//
// Read in this order: convert.go (Convert and the words of its errors),
// walk.go (nodes to JSON values, repeated keys, merge keys, aliases),
// scalar.go (what a plain scalar is to goyaml.v2), keys.go (a key as a JSON
// member name).
package yamljson

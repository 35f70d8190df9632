package patch

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"listwatch/api"
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
// Ours decodes once, with go.yaml.in/yaml/v3 into its node tree, and walks
// the tree itself (yamlWalk): the last value wins, and the repeats are
// listed in the order goyaml.v2 meets them (everything inside a value
// before that value's own key). goyaml.v3 itself refuses a repeated key
// outright, and it reads YAML 1.2, so an unquoted y, n, yes, no, on or off
// is a string here where goyaml.v2 (YAML 1.1) makes it a boolean.

// ParseApplied reads an applied configuration into a JSON object (each
// repeated key's last value) and the repeated keys in goyaml.v2's words.
// A body that is not YAML, or not an object, is a 400, worded as
// applyPatcher words it ("error decoding patch: ...").
func ParseApplied(body []byte) (js []byte, duplicates []string, err error) {
	bad := func(why string) error { return api.NewBadRequest("error decoding patch: " + why) }
	var doc yaml.Node
	if err := yaml.Unmarshal(body, &doc); err != nil {
		return nil, nil, bad("error converting YAML to JSON: " + err.Error())
	}
	w := yamlWalk{budget: 4*len(body) + 100_000}
	v, err := w.value(&doc)
	if err != nil {
		return nil, nil, bad("error converting YAML to JSON: " + err.Error())
	}
	switch v.(type) {
	case map[string]any:
	case nil:
		return nil, nil, bad("the applied configuration must be an object")
	default:
		// sigs.k8s.io/yaml decodes the JSON it made into a map.
		return nil, nil, bad(fmt.Sprintf("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}", jsonType(v)))
	}
	if js, err = json.Marshal(v); err != nil {
		return nil, nil, bad("error converting YAML to JSON: " + err.Error())
	}
	return js, w.dups, nil
}

// StrictApplyError is the 400 for an applied configuration with repeated
// keys under fieldValidation=Strict.
func StrictApplyError(duplicates []string) error {
	return api.NewBadRequest("error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  " +
		strings.Join(duplicates, "\n  "))
}

// yamlWalk turns a YAML node tree into JSON values.
type yamlWalk struct {
	dups []string
	// budget bounds the nodes visited, so that aliases of aliases cannot
	// expand a small body into an enormous value.
	budget int
}

func (w *yamlWalk) value(n *yaml.Node) (any, error) {
	if w.budget--; w.budget < 0 {
		return nil, fmt.Errorf("yaml: document contains excessive aliasing")
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return w.value(n.Content[0])
	case yaml.AliasNode:
		return w.value(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := w.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := map[string]any{}
		return out, w.mapping(n, out, map[any]bool{})
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// mapping adds n's members to out in the order they are written, as
// goyaml.v2's decoder.mapping does: a merge key's maps are added where the
// merge key stands, and whatever comes later overwrites what came before,
// merged or not. So an explicit key after <<: *base overrides the base's,
// and one before it is overridden by it. seen holds the keys out already
// has, as goyaml.v2 decoded them (1 and "1" are different keys to it); a
// key already in it is a repeat (decoder.setMapIndex).
func (w *yamlWalk) mapping(n *yaml.Node, out map[string]any, seen map[any]bool) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
			if err := w.merge(vn, out, seen); err != nil {
				return err
			}
			continue
		}
		k, err := w.value(kn)
		if err != nil {
			return err
		}
		name, err := jsonKey(k)
		if err != nil {
			return err
		}
		v, err := w.value(vn)
		if err != nil {
			return err
		}
		if seen[k] {
			w.dups = append(w.dups, fmt.Sprintf("line %d: key %#v already set in map", vn.Line, k))
		}
		seen[k] = true
		out[name] = v
	}
	return nil
}

// merge applies a merge key's value, a mapping or an alias of one, or a
// sequence of those, to out as goyaml.v2's decoder.merge does: into the
// same map, with the same seen, so that its keys repeat the keys before
// them; a sequence's maps from the last to the first, so that where they
// share a key the first map's value is the one kept ("Step backwards as
// earlier nodes take precedence"), and the first map's key, met last, is
// the repeat. Anything else, a nested sequence or an alias of a
// sequence among them, is refused (failWantMap).
func (w *yamlWalk) merge(n *yaml.Node, out map[string]any, seen map[any]bool) error {
	maps := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		maps = n.Content
	}
	for i := len(maps) - 1; i >= 0; i-- {
		m := maps[i]
		if m.Kind == yaml.AliasNode {
			m = m.Alias
		}
		if m.Kind != yaml.MappingNode {
			return fmt.Errorf("yaml: map merge requires map or sequence of maps as the value")
		}
		// Merging visits the map again, empty or not: without a charge
		// here, merges of merges of empty maps would cost nothing.
		if w.budget--; w.budget < 0 {
			return fmt.Errorf("yaml: document contains excessive aliasing")
		}
		if err := w.mapping(m, out, seen); err != nil {
			return err
		}
	}
	return nil
}

// jsonKey is the JSON member name of a YAML key, converted as
// sigs.k8s.io/yaml's convertToJSONableObject converts it.
func jsonKey(k any) (string, error) {
	switch k := k.(type) {
	case string:
		return k, nil
	case int:
		return strconv.Itoa(k), nil
	case int64:
		return strconv.FormatInt(k, 10), nil
	case uint64:
		return strconv.FormatUint(k, 10), nil
	case float64:
		switch {
		case math.IsInf(k, 1):
			return ".inf", nil
		case math.IsInf(k, -1):
			return "-.inf", nil
		case math.IsNaN(k):
			return ".nan", nil
		}
		return strconv.FormatFloat(k, 'g', -1, 32), nil
	case bool:
		return strconv.FormatBool(k), nil
	}
	return "", fmt.Errorf("unsupported map key of type: %T, key: %+#v", k, k)
}

// jsonType names a decoded value's JSON type as encoding/json's
// UnmarshalTypeError does.
func jsonType(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "bool"
	}
	return "number"
}

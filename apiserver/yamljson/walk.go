package yamljson

import (
	"cmp"
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// walk turns a YAML node tree into JSON values, noting the keys given
// twice on the way.
type walk struct {
	repeated []string
	// unconvertible is the first key JSON cannot have (null).
	unconvertible error
	// budget bounds the nodes visited, so that aliases of aliases cannot
	// expand a small body into an enormous value.
	budget int
	// expanding are the aliases whose values are being walked: one met
	// again inside its own value is a cycle (&a [*a]).
	expanding map[*yaml.Node]bool
}

// value is n as goyaml.v2 would have decoded it into an interface{}, with
// its maps keyed by strings, as sigs.k8s.io/yaml then makes them for JSON.
func (w *walk) value(n *yaml.Node) (any, error) {
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
		var v any
		err := w.expand(n, func(m *yaml.Node) (err error) { v, err = w.value(m); return err })
		return v, err
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
	case yaml.ScalarNode:
		return scalar(n)
	}
	// An empty body: no document at all.
	return nil, nil
}

// mapping adds n's members to out in the order they are written, as
// goyaml.v2's decoder.mapping does: a merge key's maps are added where the
// merge key stands, and whatever comes later overwrites what came before,
// merged or not. So an explicit key after <<: *base overrides the base's,
// and one before it is overridden by it. seen holds the keys out already
// has, as goyaml.v2 decoded them (1 and "1" are different keys to it); a
// key already in it is a repeat (decoder.setMapIndex).
func (w *walk) mapping(n *yaml.Node, out map[string]any, seen map[any]bool) error {
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
		switch k.(type) {
		case []any, map[string]any:
			// goyaml.v2 refuses these keys itself (decoder.mapping),
			// given directly or by an alias.
			return fmt.Errorf("yaml: invalid map key: %#v", v2Form(k))
		}
		v, err := w.value(vn)
		if err != nil {
			return err
		}
		if seen[k] {
			w.repeated = append(w.repeated, fmt.Sprintf("line %d: key %#v already set in map", vn.Line, k))
		}
		seen[k] = true
		name, err := jsonKey(k, v)
		if err != nil {
			// sigs.k8s.io/yaml refuses it only once goyaml.v2 has
			// decoded the whole document: any error of goyaml.v2's
			// comes first.
			w.unconvertible = cmp.Or(w.unconvertible, err)
			continue
		}
		// Two keys goyaml.v2 tells apart may be one JSON name (1 and
		// "1"): sigs.k8s.io/yaml keeps either value, in Go's random
		// map order; ours keeps the one written last.
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
func (w *walk) merge(n *yaml.Node, out map[string]any, seen map[any]bool) error {
	maps := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		maps = n.Content
	}
	for i := len(maps) - 1; i >= 0; i-- {
		if err := w.expand(maps[i], func(m *yaml.Node) error { return w.mergeOne(m, out, seen) }); err != nil {
			return err
		}
	}
	return nil
}

// mergeOne merges one of a merge key's maps into out.
func (w *walk) mergeOne(m *yaml.Node, out map[string]any, seen map[any]bool) error {
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("yaml: map merge requires map or sequence of maps as the value")
	}
	// Merging visits the map again, empty or not: without a charge here,
	// merges of merges of empty maps would cost nothing.
	if w.budget--; w.budget < 0 {
		return fmt.Errorf("yaml: document contains excessive aliasing")
	}
	return w.mapping(m, out, seen)
}

// expand calls walk with n, or with the value n stands for if it is an
// alias, refusing an alias met again inside its own value as goyaml.v2
// does (decoder.alias: "anchor 'a' value contains itself").
func (w *walk) expand(n *yaml.Node, walk func(*yaml.Node) error) error {
	if n.Kind != yaml.AliasNode {
		return walk(n)
	}
	if w.expanding[n] {
		return fmt.Errorf("yaml: anchor '%s' value contains itself", n.Value)
	}
	if w.expanding == nil {
		w.expanding = map[*yaml.Node]bool{}
	}
	w.expanding[n] = true
	defer delete(w.expanding, n)
	return walk(n.Alias)
}

// v2Form is a decoded value as goyaml.v2 would hold it, for its error
// messages: a mapping is a map[interface{}]interface{} there.
func v2Form(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[any]any, len(v))
		for k, e := range v {
			m[k] = v2Form(e)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, e := range v {
			s[i] = v2Form(e)
		}
		return s
	}
	return v
}

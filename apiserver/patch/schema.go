package patch

import (
	"encoding/json"
	"strings"
)

// An apply needs to know, at each place in an object, whether a list is
// replaced whole or merged element by element, and by which keys. The
// real server reads it from the kind's OpenAPI schema, converted to a
// structured-merge-diff schema (k8s.io/kube-openapi pkg/schemaconv,
// ToSchemaFromOpenAPI):
//
//   - x-kubernetes-list-type: map, with x-kubernetes-list-map-keys: a
//     list of objects, each element its own field, named by its keys (a
//     Pod's containers by name, a Service's ports by port and protocol);
//   - x-kubernetes-list-type: set: a list of scalars, each element its
//     own field, named by its value (finalizers);
//   - without a list type, a list with x-kubernetes-patch-strategy: merge
//     is a map keyed by x-kubernetes-patch-merge-key, or a set without
//     one; any other list is atomic: one field, replaced whole;
//   - x-kubernetes-map-type: atomic makes an object one field (a label
//     selector).
//
// Schema is that, read straight from the OpenAPI v3 schemas the server
// publishes (discovery/openapi). A nil *Schema knows nothing: every list
// is atomic and every object is merged member by member.

// Schema is the OpenAPI v3 schema of one kind, with the schemas it refers
// to.
type Schema struct {
	defs map[string]map[string]any
	root map[string]any
}

// objectMetaDef is the schema of every object's metadata.
const objectMetaDef = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// NewSchema reads a kind's schema: defs are the components' schemas by
// name (an OpenAPI v3 document's components.schemas), root the kind's
// own schema (one of defs, or a custom resource's openAPIV3Schema).
func NewSchema(defs map[string]json.RawMessage, root json.RawMessage) (*Schema, error) {
	s := &Schema{defs: make(map[string]map[string]any, len(defs))}
	for name, raw := range defs {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		s.defs[name] = m
	}
	if err := json.Unmarshal(root, &s.root); err != nil {
		return nil, err
	}
	return s, nil
}

// node is the schema of one value; its zero value knows nothing.
type node struct {
	s *Schema
	m map[string]any
	// root: this is the whole object's schema, whose metadata is
	// ObjectMeta's when the schema leaves it out.
	root bool
}

// rootNode is the schema of the whole object.
func (s *Schema) rootNode() node {
	if s == nil {
		return node{}
	}
	n := node{s: s, m: s.root}.resolve()
	n.root = true
	return n
}

// resolve follows $ref, and allOf with a single $ref (how OpenAPI v3
// attaches a description to a referenced schema).
func (n node) resolve() node {
	for range 8 { // refs to refs are short; never loop forever
		if n.m == nil {
			return n
		}
		ref, _ := n.m["$ref"].(string)
		if all, ok := n.m["allOf"].([]any); ok && len(all) == 1 && ref == "" {
			if one, ok := all[0].(map[string]any); ok {
				ref, _ = one["$ref"].(string)
			}
		}
		if ref == "" {
			return n
		}
		n.m = n.s.defs[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return n
}

// child is the schema of member name of an object: a declared property,
// or the type of every member of a map.
func (n node) child(name string) node {
	if n.root && name == "metadata" {
		return n.metadata()
	}
	return n.member(name)
}

// member is child without the root's rule for metadata.
func (n node) member(name string) node {
	if n.m == nil {
		return node{}
	}
	if props, ok := n.m["properties"].(map[string]any); ok {
		if p, ok := props[name].(map[string]any); ok {
			return node{s: n.s, m: p}.resolve()
		}
	}
	if ap, ok := n.m["additionalProperties"].(map[string]any); ok {
		return node{s: n.s, m: ap}.resolve()
	}
	return node{}
}

// declares reports whether name is one of the object's declared
// properties (a struct field), not a member of a map. Without a schema
// every member counts as declared, so that an object is never a field of
// its own unless it is empty.
func (n node) declares(name string) bool {
	if n.m == nil {
		return true
	}
	props, _ := n.m["properties"].(map[string]any)
	_, ok := props[name]
	return ok
}

// metadata is the schema of the object's metadata: its own, or
// ObjectMeta's when it has none (a custom resource's schema leaves it
// out, and the real server uses ObjectMeta's).
func (n node) metadata() node {
	md := n.member("metadata")
	if md.m["properties"] == nil && n.s != nil && n.s.defs[objectMetaDef] != nil {
		return node{s: n.s, m: n.s.defs[objectMetaDef]}
	}
	return md
}

// items is the schema of a list's elements.
func (n node) items() node {
	it, _ := n.m["items"].(map[string]any)
	return node{s: n.s, m: it}.resolve()
}

// atomicObject reports whether an object is one field.
func (n node) atomicObject() bool {
	t, _ := n.m["x-kubernetes-map-type"].(string)
	return t == "atomic"
}

// The kinds of list.
const (
	listAtomic = "atomic"
	listSet    = "set"
	listMap    = "map"
)

// list is how the list merges, and a map list's keys.
func (n node) list() (kind string, keys []string) {
	if t, ok := n.m["x-kubernetes-list-type"].(string); ok {
		if t == listMap {
			for _, k := range asSlice(n.m["x-kubernetes-list-map-keys"]) {
				if s, ok := k.(string); ok {
					keys = append(keys, s)
				}
			}
			if len(keys) == 0 {
				return listAtomic, nil
			}
		}
		if t != listMap && t != listSet {
			return listAtomic, nil
		}
		return t, keys
	}
	strategy, _ := n.m["x-kubernetes-patch-strategy"].(string)
	if !strings.Contains(strategy, "merge") {
		return listAtomic, nil
	}
	if key, ok := n.m["x-kubernetes-patch-merge-key"].(string); ok && key != "" {
		return listMap, []string{key}
	}
	return listSet, nil
}

// keyDefault is the default of a map list's key field, which stands in
// for the field when an element leaves it out (a container port's
// protocol, TCP).
func (n node) keyDefault(key string) (any, bool) {
	props, _ := n.items().m["properties"].(map[string]any)
	p, _ := props[key].(map[string]any)
	d, ok := p["default"]
	return d, ok
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

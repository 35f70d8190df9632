package patch

import (
	"encoding/json"
	"sort"
)

// The fields an applied configuration claims: structured-merge-diff's
// TypedValue.ToFieldSet (typed/tofieldset.go), then the stripping of
// k8s.io/apimachinery's managedfields (internal/stripmeta.go).
//
// Every scalar is a field; so is an atomic list or object (whole), an
// empty object or null, each element of a set or map list (its ".", with
// the element's own fields below it), and each member of a map (a label,
// a ConfigMap's key). An object's declared members with something inside
// are not fields themselves, only what is inside them: so
// {"spec":{"containers":[{"name":"c","image":"i"}]}} claims
// f:spec.f:containers.k:{"name":"c"} with its "." and its f:name and
// f:image, and nothing at f:spec itself.

// strippedMeta are the paths no manager ever owns: the type, and the
// metadata the server sets or that names the object.
var strippedMeta = []path{
	{"f:apiVersion"}, {"f:kind"}, {"f:metadata"},
	{"f:metadata", "f:name"}, {"f:metadata", "f:namespace"}, {"f:metadata", "f:creationTimestamp"},
	{"f:metadata", "f:selfLink"}, {"f:metadata", "f:uid"}, {"f:metadata", "f:clusterName"},
	{"f:metadata", "f:generation"}, {"f:metadata", "f:managedFields"}, {"f:metadata", "f:resourceVersion"},
}

// stripMeta takes strippedMeta out of a set.
func stripMeta(fs fieldSet) fieldSet {
	for _, p := range strippedMeta {
		fs.remove(p)
	}
	return fs
}

// ownedFields is the set the applied object claims.
func ownedFields(obj map[string]any, s *Schema) fieldSet {
	fs := fieldSet{}
	root := s.rootNode()
	for k, v := range obj {
		n := root.child(k)
		toFieldSet(fs, path{"f:" + k}, v, n, root.declares(k))
	}
	return stripMeta(fs)
}

// toFieldSet adds the fields of v, at p, to fs; declared is whether p is
// a declared member of its object.
func toFieldSet(fs fieldSet, p path, v any, n node, declared bool) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 || n.atomicObject() || !declared {
			fs.insert(p)
		}
		if len(v) == 0 || n.atomicObject() {
			return
		}
		for k, e := range v {
			toFieldSet(fs, p.with("f:"+k), e, n.child(k), n.declares(k))
		}
	case []any:
		steps, ok := elementSteps(v, n)
		if !ok {
			fs.insert(p)
			return
		}
		for i, e := range v {
			ep := p.with(steps[i])
			toFieldSet(fs, ep, e, n.items(), true)
			fs.insert(ep)
		}
	default:
		fs.insert(p)
	}
}

// elementSteps names each element of a list that merges by element: a
// map list's elements by their keys, a set's by their values. ok is false
// for an atomic list, and for one whose elements cannot all be named (a
// key missing without a default, an object in a set): those are treated
// as atomic here, where the real server refuses the request.
func elementSteps(list []any, n node) ([]string, bool) {
	kind, keys := n.list()
	if kind == listAtomic {
		return nil, false
	}
	steps := make([]string, len(list))
	for i, e := range list {
		var step string
		var ok bool
		if kind == listSet {
			step, ok = valueStep(e)
		} else {
			step, ok = keyStep(e, keys, n)
		}
		if !ok {
			return nil, false
		}
		steps[i] = step
	}
	return steps, true
}

// valueStep names a set's element: v:<its JSON>.
func valueStep(e any) (string, bool) {
	switch e.(type) {
	case map[string]any, []any:
		return "", false
	}
	b, err := json.Marshal(e)
	if err != nil {
		return "", false
	}
	return "v:" + string(b), true
}

// keyStep names a map list's element by its key fields, sorted by name:
// k:{"containerPort":80,"protocol":"TCP"}.
func keyStep(e any, keys []string, n node) (string, bool) {
	obj, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	names := append([]string(nil), keys...)
	sort.Strings(names)
	b := []byte("k:{")
	for i, k := range names {
		v, present := obj[k]
		if !present {
			if v, present = n.keyDefault(k); !present {
				return "", false
			}
		}
		js, err := json.Marshal(v)
		if err != nil {
			return "", false
		}
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(k)
		if err != nil {
			return "", false
		}
		b = append(b, name...)
		b = append(b, ':')
		b = append(b, js...)
	}
	return string(append(b, '}')), true
}

package patch

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// fieldSet is a set of field paths, kept as the tree metadata.managedFields
// writes (fieldsType FieldsV1, sigs.k8s.io/structured-merge-diff's
// fieldpath.Set): each key is one step of a path, and a path is in the set
// when its node has no children ({}) or has the member "." beside them.
//
// A step is "f:<name>" for a member of an object, `k:{"name":"nginx"}` for
// the element of a map list with those keys, `v:"x"` for the element of a
// set, "i:<n>" for a position. {"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":
// {".":{},"f:image":{}}}}} holds two paths: the container c itself and its
// image.
type fieldSet map[string]fieldSet

// member is the step that marks a node with children as in the set.
const member = "."

// path is a list of steps.
type path []string

func (p path) with(step string) path {
	out := make(path, len(p), len(p)+1)
	copy(out, p)
	return append(out, step)
}

// insert adds p to the set.
func (fs fieldSet) insert(p path) {
	cur := fs
	for i, step := range p {
		next, ok := cur[step]
		if !ok {
			next = fieldSet{}
			cur[step] = next
		}
		if i == len(p)-1 {
			if len(next) > 0 {
				next[member] = fieldSet{}
			}
			return
		}
		if len(next) == 0 && ok {
			next[member] = fieldSet{} // it was in the set; it stays
		}
		cur = next
	}
}

// has reports whether p is in the set.
func (fs fieldSet) has(p path) bool {
	n := fs.nodeAt(p)
	if n == nil {
		return false
	}
	_, isMember := n[member]
	return len(n) == 0 || isMember
}

// nodeAt is the node of p, or nil.
func (fs fieldSet) nodeAt(p path) fieldSet {
	cur := fs
	for _, step := range p {
		next, ok := cur[step]
		if !ok {
			return nil
		}
		cur = next
	}
	return cur
}

// hasWithin reports whether the set holds p or anything below it.
func (fs fieldSet) hasWithin(p path) bool { return fs.nodeAt(p) != nil }

// remove takes p out of the set; what is below it stays.
func (fs fieldSet) remove(p path) {
	if len(p) == 0 {
		return
	}
	child, ok := fs[p[0]]
	if !ok {
		return
	}
	if len(p) == 1 {
		if len(child) == 0 {
			delete(fs, p[0])
		} else {
			delete(child, member)
		}
		return
	}
	wasMember := len(child) == 0
	if _, m := child[member]; m {
		wasMember = true
	}
	child.remove(p[1:])
	switch {
	case len(child) == 0 && !wasMember:
		delete(fs, p[0])
	case len(child) == 1 && child[member] != nil:
		delete(child, member) // only itself left: a plain member
	}
}

// paths lists every path in the set, in FieldsV1's order.
func (fs fieldSet) paths() []path {
	var out []path
	fs.walk(nil, func(p path) { out = append(out, p) })
	return out
}

func (fs fieldSet) walk(prefix path, visit func(path)) {
	for _, step := range sortedSteps(fs) {
		if step == member {
			continue
		}
		child := fs[step]
		p := prefix.with(step)
		if _, m := child[member]; m || len(child) == 0 {
			visit(p)
		}
		child.walk(p, visit)
	}
}

// union is every path of either set.
func (fs fieldSet) union(other fieldSet) fieldSet {
	out := fieldSet{}
	for _, p := range fs.paths() {
		out.insert(p)
	}
	for _, p := range other.paths() {
		out.insert(p)
	}
	return out
}

// difference is the paths of fs that are not in other.
func (fs fieldSet) difference(other fieldSet) fieldSet {
	out := fieldSet{}
	for _, p := range fs.paths() {
		if !other.has(p) {
			out.insert(p)
		}
	}
	return out
}

// intersection is the paths in both sets.
func (fs fieldSet) intersection(other fieldSet) fieldSet {
	out := fieldSet{}
	for _, p := range fs.paths() {
		if other.has(p) {
			out.insert(p)
		}
	}
	return out
}

// sortedSteps orders a node's steps as structured-merge-diff writes them:
// "." first, then members by name, then keyed elements, values and
// positions (PathElement.Compare).
func sortedSteps(fs fieldSet) []string {
	steps := make([]string, 0, len(fs))
	for s := range fs {
		steps = append(steps, s)
	}
	rank := func(s string) int {
		return strings.Index(".fkvi", s[:1])
	}
	sort.Slice(steps, func(i, j int) bool {
		ri, rj := rank(steps[i]), rank(steps[j])
		if ri != rj {
			return ri < rj
		}
		return steps[i] < steps[j]
	})
	return steps
}

// fieldsV1 writes the set as FieldsV1.
func (fs fieldSet) fieldsV1() json.RawMessage {
	var b bytes.Buffer
	fs.writeTo(&b)
	return b.Bytes()
}

func (fs fieldSet) writeTo(b *bytes.Buffer) {
	b.WriteByte('{')
	for i, step := range sortedSteps(fs) {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(step)
		b.Write(key)
		b.WriteByte(':')
		fs[step].writeTo(b)
	}
	b.WriteByte('}')
}

// fromFieldsV1 reads a FieldsV1 tree.
func fromFieldsV1(raw json.RawMessage) fieldSet {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return fieldSet{}
	}
	fs := fieldSet{}
	for k, v := range m {
		if k == "" {
			continue
		}
		fs[k] = fromFieldsV1(v)
	}
	if len(fs) == 1 && fs[member] != nil {
		return fieldSet{}
	}
	return fs
}

// String is a path as structured-merge-diff prints it in a conflict:
// .spec.containers[name="nginx"].image.
func (p path) String() string {
	var b strings.Builder
	for _, step := range p {
		if len(step) < 2 {
			b.WriteString("." + step)
			continue
		}
		kind, rest := step[:2], step[2:]
		switch kind {
		case "f:":
			b.WriteString("." + rest)
		case "k:":
			var keys map[string]json.RawMessage
			_ = json.Unmarshal([]byte(rest), &keys)
			names := make([]string, 0, len(keys))
			for k := range keys {
				names = append(names, k)
			}
			sort.Strings(names)
			parts := make([]string, len(names))
			for i, k := range names {
				parts[i] = k + "=" + string(keys[k])
			}
			b.WriteString("[" + strings.Join(parts, ",") + "]")
		case "v:":
			b.WriteString("[=" + rest + "]")
		default:
			b.WriteString("[" + rest + "]")
		}
	}
	return b.String()
}

package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Fields an applied configuration may not name. Before it merges
// anything, kube-apiserver 1.37's field manager turns the configuration
// into a typed value of the kind's structured-merge-diff schema
// (k8s.io/apimachinery v0.37.2 util/managedfields/internal/structuredmerge.go,
// Apply: ObjectToTyped), and that fails for a member the schema does not
// declare (sigs.k8s.io/structured-merge-diff/v6 typed/validate.go,
// visitMapItems: "field not declared in schema"), whatever
// ?fieldValidation says: apply never prunes. The error is no Status, so
// the client gets a 500 with no reason:
//
//	failed to create typed patch object (/mytest; example.com/v1, Kind=Noxu): .unknownField: field not declared in schema
//
// The schema is the kind's OpenAPI schema converted by k8s.io/kube-openapi
// pkg/schemaconv (ToSchemaFromOpenAPI); for a custom resource, the one
// apiextensions-apiserver builds for apply (controller/openapi/builder),
// which gives the object and each x-kubernetes-embedded-resource object
// apiVersion, kind and an ObjectMeta metadata. An object accepts a member
// it does not declare when its additionalProperties allow it, when it
// declares no properties at all, or when it or an object around it in the
// same schema sets x-kubernetes-preserve-unknown-fields; a $ref starts
// afresh (ObjectMeta is as strict inside a preserving object as anywhere).
//
// Paths are structured-merge-diff's: ".spec.ports[containerPort=80,protocol=\"TCP\"].x"
// for an element of a map list, "[=v]" in a set, "[0]" in any other list.
// In each object the walk stops at the first undeclared member, as the real
// one does; the real one meets the members in Go's map order, which is
// random, ours in sorted order. Several errors read
// "errors:\n  <one>\n  <two>".

// Undeclared returns the members of the applied configuration (a JSON
// object) that the schema does not declare, in structured-merge-diff's
// words; nil if there are none or the schema knows nothing.
func (s *Schema) Undeclared(applied []byte) []string {
	if s == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(applied))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	w := declWalk{s: s}
	w.object(s.root, false, true, v, "")
	return w.errs
}

// UndeclaredError words Undeclared's errors as the field manager's: obj
// names the configuration as "namespace/name; group/version, Kind=kind".
func UndeclaredError(obj string, errs []string) string {
	msg := errs[0]
	if len(errs) > 1 {
		msg = "errors:\n  " + strings.Join(errs, "\n  ")
	}
	return fmt.Sprintf("failed to create typed patch object (%s): %s", obj, msg)
}

// declWalk walks a value beside its OpenAPI schema.
type declWalk struct {
	s    *Schema
	errs []string
}

// value checks v (at path) against the schema m; preserve says an object
// around it, in the same schema, preserves unknown fields.
func (w *declWalk) value(m map[string]any, preserve bool, v any, path string) {
	if ref := refOf(m); ref != "" {
		m, preserve = w.s.defs[ref], false
	}
	if m == nil {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		w.object(m, preserve, false, x, path)
	case []any:
		w.list(m, preserve, x, path)
	}
}

// object checks the members of an object; root is the whole object.
func (w *declWalk) object(m map[string]any, preserve, root bool, v any, path string) {
	x, ok := v.(map[string]any)
	if !ok || m == nil {
		return
	}
	if p, _ := m["x-kubernetes-preserve-unknown-fields"].(bool); p {
		preserve = true
	}
	props, _ := m["properties"].(map[string]any)
	embedded, _ := m["x-kubernetes-embedded-resource"].(bool)
	kubeObject := root || embedded
	ap, hasAP := m["additionalProperties"]
	apSchema, _ := ap.(map[string]any)
	apAllows, _ := ap.(bool)
	free := hasAP && apAllows || !hasAP && (preserve || len(props) == 0 && !kubeObject)
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "." + k
		switch sub, declared := props[k].(map[string]any); {
		case kubeObject && k == "metadata":
			w.value(map[string]any{"$ref": "#/components/schemas/" + objectMetaDef}, false, x[k], p)
		case kubeObject && (k == "apiVersion" || k == "kind"):
		case declared:
			w.value(sub, preserve, x[k], p)
		case apSchema != nil:
			w.value(apSchema, preserve, x[k], p)
		case free:
		default:
			w.errs = append(w.errs, p+": field not declared in schema")
			return
		}
	}
}

// list checks the elements of a list, each named as structured-merge-diff
// names it.
func (w *declWalk) list(m map[string]any, preserve bool, x []any, path string) {
	items, _ := m["items"].(map[string]any)
	if items == nil {
		return
	}
	kind, _ := m["x-kubernetes-list-type"].(string)
	var keys []string
	for _, k := range asSlice(m["x-kubernetes-list-map-keys"]) {
		if s, ok := k.(string); ok {
			keys = append(keys, s)
		}
	}
	slices.Sort(keys)
	for i, e := range x {
		name := fmt.Sprintf("[%d]", i)
		switch {
		case kind == listMap && len(keys) > 0:
			var ok bool
			if name, ok = w.keyName(items, keys, e); !ok {
				continue // the real server fails on such an element
			}
		case kind == listSet:
			if _, isMap := e.(map[string]any); isMap || e == nil {
				continue
			}
			name = "[=" + smdString(e) + "]"
		}
		w.value(items, preserve, e, path+name)
	}
}

// keyName names an element of a map list by its keys, sorted, each key
// the element leaves out taking its default if it has one.
func (w *declWalk) keyName(items map[string]any, keys []string, e any) (string, bool) {
	obj, ok := e.(map[string]any)
	if !ok {
		return "", false
	}
	if ref := refOf(items); ref != "" {
		items = w.s.defs[ref]
	}
	props, _ := items["properties"].(map[string]any)
	var parts []string
	for _, k := range keys {
		v, found := obj[k]
		if !found {
			p, _ := props[k].(map[string]any)
			if v, found = p["default"]; !found {
				continue
			}
		}
		parts = append(parts, k+"="+smdString(v))
	}
	if len(parts) == 0 {
		return "", false
	}
	return "[" + strings.Join(parts, ",") + "]", true
}

// refOf is the definition a schema refers to: $ref, or allOf with one
// $ref.
func refOf(m map[string]any) string {
	ref, _ := m["$ref"].(string)
	if all, ok := m["allOf"].([]any); ok && len(all) == 1 && ref == "" {
		if one, ok := all[0].(map[string]any); ok {
			ref, _ = one["$ref"].(string)
		}
	}
	return strings.TrimPrefix(ref, "#/components/schemas/")
}

// smdString writes a scalar as structured-merge-diff's value.ToString
// does: strings quoted, numbers and booleans plain.
func smdString(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return strconv.FormatInt(i, 10)
		}
		f, _ := v.Float64()
		return fmt.Sprint(f)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

package crd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/api/protobuf"
)

// Unknown fields of a custom resource, found as kube-apiserver finds them
// (apiextensions-apiserver pkg/apiserver/customresource_handler.go,
// unstructuredSchemaCoercer.apply): metadata is read as an ObjectMeta
// (schemaobjectmeta.GetObjectMetaWithOptions), then the rest is pruned
// against the version's structural schema (pruning.PruneWithOptions, which
// sorts the paths it pruned). Each path becomes a strict decoding error,
// `unknown field "spec.foo"`, which ?fieldValidation turns into a 400
// (Strict), a Warning header (Warn, the default) or nothing (Ignore),
// exactly as for a built-in kind (handlers/fieldvalidation.go). Before
// them come the duplicate fields the strict JSON decoder finds
// (`duplicate field "spec.cronSpec"`; the last one wins). After them come
// the unknown fields of the metadata of embedded objects (a schema's
// x-kubernetes-embedded-resource), which pruning leaves alone, together
// with their apiVersion and kind, and which are then read as ObjectMeta
// (schema/objectmeta/coerce.go, CoerceWithOptions), sorted:
// `unknown field "spec.template.metadata.foo"`.

// pruner returns the resource's Prune: schema is the storage version's.
func pruner(schema *Schema) func(js []byte) (protobuf.Conformed, error) {
	return func(js []byte) (protobuf.Conformed, error) {
		if schema == nil {
			return protobuf.Conformed{JSON: js}, nil
		}
		v, err := decodeValue(protobuf.ValidUTF8(js))
		if err != nil {
			return protobuf.Conformed{}, err
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return protobuf.Conformed{}, fmt.Errorf("expected an object, not %s", jsonType(v))
		}
		strict := duplicateFields(js)
		if meta, ok := obj["metadata"]; ok {
			pruned, unknown, err := conformMetadata(meta)
			if err != nil {
				return protobuf.Conformed{}, err
			}
			obj["metadata"] = pruned
			strict = append(strict, unknown...)
		}
		for _, p := range pruneObject(schema, obj) {
			strict = append(strict, "unknown field "+strconv.Quote(p))
		}
		embedded, err := coerceEmbedded(schema, obj, "")
		if err != nil {
			return protobuf.Conformed{}, err
		}
		slices.Sort(embedded)
		for _, p := range embedded {
			strict = append(strict, "unknown field "+strconv.Quote(p))
		}
		out, err := json.Marshal(obj)
		if err != nil {
			return protobuf.Conformed{}, err
		}
		return protobuf.Conformed{JSON: out, Strict: strict}, nil
	}
}

// pruneObject drops from obj, in place, every field the schema does not
// know, and returns their paths, sorted. apiVersion, kind and metadata are
// every object's and never pruned here. Values of the wrong type are left
// alone: validation answers them with a 422.
func pruneObject(schema *Schema, obj map[string]any) []string {
	var pruned []string
	for _, k := range sortedKeys(obj) {
		if isEmbeddedMetaField(k) { // the root is a resource too
			continue
		}
		sub := schema.Properties[k]
		if sub == nil {
			if !schema.PreserveUnknownFields {
				delete(obj, k)
				pruned = append(pruned, k)
			}
			continue
		}
		nv, _, p := sub.validate(k, obj[k])
		obj[k] = nv
		pruned = append(pruned, p...)
	}
	slices.Sort(pruned)
	return pruned
}

// isEmbeddedMetaField reports whether k is one of the members of an
// embedded object that pruning leaves alone (k8s.io/apiextensions-apiserver
// v0.37.2 pkg/apiserver/schema/pruning/algorithm.go, metaFields).
func isEmbeddedMetaField(k string) bool {
	switch k {
	case "apiVersion", "kind", "metadata":
		return true
	}
	return false
}

// embeddedTypeMetaStrings refuses an embedded object whose apiVersion or
// kind is there but is not a string, as kube-apiserver's coercer does when
// it decodes a custom resource (k8s.io/apiextensions-apiserver v0.37.2
// pkg/apiserver/schema/objectmeta/algorithm.go, coerce, run by
// customresource_handler.go, unstructuredSchemaCoercer.apply): the
// request fails before validation, with a 400 for a create or update
// (`Widget in version "v1" cannot be handled as a Widget:
// spec.template.apiVersion: Invalid value: 5: must be a string`) and a
// 422 on field "patch" for a patch. Where both are wrong Kubernetes names
// the one it meets first in map order; ours names apiVersion.
func embeddedTypeMetaStrings(x map[string]any, path string) error {
	for _, k := range []string{"apiVersion", "kind"} {
		v, ok := x[k]
		if _, isString := v.(string); ok && !isString {
			return errors.New(api.FieldInvalid(join(path, k), unstructuredValue(v), "must be a string").String())
		}
	}
	return nil
}

// unstructuredValue is v with a number as Kubernetes decodes it into an
// unstructured object, int64 or float64 (k8s.io/apimachinery v0.37.2
// pkg/util/json/json.go, convertNumber), so that it prints as theirs does.
func unstructuredValue(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := n.Int64(); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return v
}

// coerceEmbedded finds the embedded objects in v (at path), following the
// schema's declared properties, maps and lists, conforms the metadata of
// each to ObjectMeta in place and returns the paths of the unknown fields
// it dropped there.
func coerceEmbedded(s *Schema, v any, path string) ([]string, error) {
	var unknown []string
	switch x := v.(type) {
	case map[string]any:
		if s.EmbeddedResource {
			if err := embeddedTypeMetaStrings(x, path); err != nil {
				return nil, err
			}
		}
		if meta, ok := x["metadata"]; ok && s.EmbeddedResource {
			pruned, strict, err := conformMetadata(meta)
			if err != nil {
				return nil, err
			}
			x["metadata"] = pruned
			for _, e := range strict {
				// `unknown field "metadata.foo"`, from the object's root
				if p, ok := strings.CutPrefix(e, `unknown field "`); ok {
					unknown = append(unknown, join(path, strings.TrimSuffix(p, `"`)))
				}
			}
		}
		for _, k := range sortedKeys(x) {
			sub, sp := s.Properties[k], join(path, k)
			if sub == nil && s.AdditionalProperties != nil {
				sub, sp = s.AdditionalProperties, path+"["+k+"]"
			}
			if sub == nil || (s.EmbeddedResource && k == "metadata") {
				continue
			}
			u, err := coerceEmbedded(sub, x[k], sp)
			if err != nil {
				return nil, err
			}
			unknown = append(unknown, u...)
		}
	case []any:
		if s.Items == nil {
			return nil, nil
		}
		for i := range x {
			u, err := coerceEmbedded(s.Items, x[i], fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			unknown = append(unknown, u...)
		}
	}
	return unknown, nil
}

// conformMetadata checks a custom resource's metadata as the ObjectMeta it
// is (through the typed schema of PartialObjectMetadata, which is TypeMeta
// and ObjectMeta), returning it pruned and its strict errors
// (`unknown field "metadata.foo"`).
func conformMetadata(meta any) (any, []string, error) {
	raw, err := json.Marshal(map[string]any{"metadata": meta})
	if err != nil {
		return nil, nil, err
	}
	c, err := protobuf.Default().Conform("meta.k8s.io/v1", "PartialObjectMetadata", raw)
	if err != nil {
		return nil, nil, err
	}
	v, err := decodeValue(c.JSON)
	if err != nil {
		return nil, nil, err
	}
	m, _ := v.(map[string]any)
	return m["metadata"], c.Strict, nil
}

// duplicateFields reports each member that appears twice in one object
// of js, by its path. js is valid JSON (decoded already).
func duplicateFields(js []byte) []string {
	d := json.NewDecoder(bytes.NewReader(js))
	var out []string
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for d.More() {
				key, err := d.Token()
				if err != nil {
					return err
				}
				p := join(path, key.(string))
				if seen[p] {
					out = append(out, "duplicate field "+strconv.Quote(p))
				}
				seen[p] = true
				if err := walk(p); err != nil {
					return err
				}
			}
		case json.Delim('['):
			for i := 0; d.More(); i++ {
				if err := walk(fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		default:
			return nil
		}
		_, err = d.Token() // the closing delimiter
		return err
	}
	if walk("") != nil {
		return nil
	}
	return out
}

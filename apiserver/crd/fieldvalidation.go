package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
		if k == "apiVersion" || k == "kind" || k == "metadata" {
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

// embeddedMetaFields are the members of an embedded object that pruning
// leaves alone (pruning/algorithm.go, metaFields).
var embeddedMetaFields = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// coerceEmbedded finds the embedded objects in v (at path), following the
// schema's declared properties, maps and lists, conforms the metadata of
// each to ObjectMeta in place and returns the paths of the unknown fields
// it dropped there.
func coerceEmbedded(s *Schema, v any, path string) ([]string, error) {
	var unknown []string
	switch x := v.(type) {
	case map[string]any:
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

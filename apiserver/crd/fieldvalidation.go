package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

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
// (`duplicate field "spec.cronSpec"`; the last one wins).

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

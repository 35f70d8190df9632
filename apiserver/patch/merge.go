package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// JSON merge patch (RFC 7386): the patch is a partial object; its members
// replace the target's, objects merge recursively, null deletes. This is
// what kubectl label and annotate send (application/merge-patch+json).
// Like kube-apiserver we apply it with github.com/evanphx/json-patch's
// MergePatch, which keeps the target's member order and raw values.
//
// kubectl edit and kubectl patch send strategic merge patches, which are
// merge patches plus list-merging rules that need each kind's schema. Our
// objects are schemaless, so a strategic merge patch is applied as a merge
// patch: lists are replaced whole, and the patch's directives
// ("$patch": "delete"/"replace", "$setElementOrder/...", "$retainKeys",
// "$deleteFromPrimitiveList/...") are honoured where they make sense and
// otherwise dropped instead of being stored as data.

var errBadMergePatch = errors.New("a merge patch must be a JSON object")

// decodeJSON decodes a JSON value keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// applyMergePatch merges patch into doc; strategic treats the patch as a
// strategic merge patch (see above). Both must be JSON objects.
func applyMergePatch(doc, patch []byte, strategic bool) ([]byte, error) {
	p, err := decodeJSON(patch)
	if err != nil {
		return nil, err
	}
	if _, ok := p.(map[string]any); !ok {
		return nil, errBadMergePatch
	}
	if !strategic {
		return jsonpatch.MergePatch(doc, patch)
	}
	target, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	merged, _ := mergeValue(target, p, strategic)
	return json.Marshal(merged)
}

// mergeValue merges patch into target and returns the result; keep is
// false when a strategic "$patch": "delete" removes the value.
func mergeValue(target, patch any, strategic bool) (result any, keep bool) {
	pm, ok := patch.(map[string]any)
	if !ok {
		if strategic {
			return stripDirectives(patch)
		}
		return patch, true
	}
	if strategic {
		switch pm["$patch"] {
		case "delete":
			return nil, false
		case "replace":
			return stripDirectives(pm)
		}
	}
	tm, ok := target.(map[string]any)
	if !ok {
		tm = map[string]any{}
	}
	for k, v := range pm {
		if strategic && strings.HasPrefix(k, "$") {
			continue
		}
		if v == nil {
			delete(tm, k)
			continue
		}
		merged, keep := mergeValue(tm[k], v, strategic)
		if !keep {
			delete(tm, k)
			continue
		}
		tm[k] = merged
	}
	return tm, true
}

// stripDirectives removes strategic-merge directives from a value that
// replaces what was there: "$..." members of objects, and list elements
// marked "$patch": "delete".
func stripDirectives(v any) (any, bool) {
	switch t := v.(type) {
	case map[string]any:
		if t["$patch"] == "delete" {
			return nil, false
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			if strings.HasPrefix(k, "$") {
				continue
			}
			if e2, keep := stripDirectives(e); keep {
				out[k] = e2
			}
		}
		return out, true
	case []any:
		out := make([]any, 0, len(t))
		for _, e := range t {
			if e2, keep := stripDirectives(e); keep {
				out = append(out, e2)
			}
		}
		return out, true
	}
	return v, true
}

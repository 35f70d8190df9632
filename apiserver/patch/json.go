package patch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// JSON patch (RFC 6902, application/json-patch+json): a list of operations
// (add, remove, replace, move, copy, test) on JSON pointers, applied in
// order; if any fails, none applies. kubectl patch --type=json sends it.

// maxJSONPatchOperations bounds one patch, as Kubernetes does.
const maxJSONPatchOperations = 10000

// jsonPatchOp is one operation. Value is raw so "value": null can be told
// from a missing value.
type jsonPatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	From  string          `json:"from"`
	Value json.RawMessage `json:"value"`
}

// decodeJSONPatch parses a JSON patch document.
func decodeJSONPatch(patch []byte) ([]jsonPatchOp, error) {
	var ops []jsonPatchOp
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, err
	}
	return ops, nil
}

// applyJSONPatch applies ops to doc.
func applyJSONPatch(doc []byte, ops []jsonPatchOp) ([]byte, error) {
	root, err := decodeJSON(doc)
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		if root, err = applyJSONPatchOp(root, op); err != nil {
			return nil, fmt.Errorf("json patch operation %d (%s %s): %w", i, op.Op, op.Path, err)
		}
	}
	return json.Marshal(root)
}

func applyJSONPatchOp(root any, op jsonPatchOp) (any, error) {
	path, err := parsePointer(op.Path)
	if err != nil {
		return nil, err
	}
	value := func() (any, error) {
		if op.Value == nil {
			return nil, fmt.Errorf("missing value")
		}
		return decodeJSON(op.Value)
	}
	switch op.Op {
	case "add", "replace":
		v, err := value()
		if err != nil {
			return nil, err
		}
		return pointerSet(root, path, v, op.Op == "add")
	case "remove":
		out, _, err := pointerRemove(root, path)
		return out, err
	case "move", "copy":
		from, err := parsePointer(op.From)
		if err != nil {
			return nil, err
		}
		v, err := pointerGet(root, from)
		if err != nil {
			return nil, err
		}
		if op.Op == "move" {
			if len(path) > len(from) && reflect.DeepEqual(path[:len(from)], from) {
				return nil, fmt.Errorf("cannot move a value into itself")
			}
			if root, _, err = pointerRemove(root, from); err != nil {
				return nil, err
			}
		} else if v, err = deepCopyJSON(v); err != nil {
			return nil, err
		}
		return pointerSet(root, path, v, true)
	case "test":
		want, err := value()
		if err != nil {
			return nil, err
		}
		got, err := pointerGet(root, path)
		if err != nil {
			return nil, err
		}
		if !jsonEqual(got, want) {
			return nil, fmt.Errorf("testing value %s failed", op.Path)
		}
		return root, nil
	}
	return nil, fmt.Errorf("unsupported operation %q", op.Op)
}

// parsePointer splits a JSON pointer into unescaped reference tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("path %q must start with '/'", p)
	}
	tokens := strings.Split(p[1:], "/")
	for i, t := range tokens {
		tokens[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return tokens, nil
}

// arrayIndex parses an array index token; allowEnd accepts "-" and len.
func arrayIndex(tok string, n int, allowEnd bool) (int, error) {
	if allowEnd && tok == "-" {
		return n, nil
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i < 0 || (tok != "0" && strings.HasPrefix(tok, "0")) {
		return 0, fmt.Errorf("invalid array index %q", tok)
	}
	if i > n || (!allowEnd && i == n) {
		return 0, fmt.Errorf("array index %d out of bounds", i)
	}
	return i, nil
}

func pointerGet(node any, path []string) (any, error) {
	for _, tok := range path {
		switch t := node.(type) {
		case map[string]any:
			v, ok := t[tok]
			if !ok {
				return nil, fmt.Errorf("path member %q does not exist", tok)
			}
			node = v
		case []any:
			i, err := arrayIndex(tok, len(t), false)
			if err != nil {
				return nil, err
			}
			node = t[i]
		default:
			return nil, fmt.Errorf("path token %q goes through a scalar", tok)
		}
	}
	return node, nil
}

// pointerSet adds (insert) or replaces the value at path and returns the
// new root.
func pointerSet(node any, path []string, v any, insert bool) (any, error) {
	if len(path) == 0 {
		return v, nil
	}
	tok, rest := path[0], path[1:]
	switch t := node.(type) {
	case map[string]any:
		if len(rest) == 0 {
			if _, ok := t[tok]; !ok && !insert {
				return nil, fmt.Errorf("path member %q does not exist", tok)
			}
			t[tok] = v
			return t, nil
		}
		child, ok := t[tok]
		if !ok {
			return nil, fmt.Errorf("path member %q does not exist", tok)
		}
		c, err := pointerSet(child, rest, v, insert)
		if err != nil {
			return nil, err
		}
		t[tok] = c
		return t, nil
	case []any:
		if len(rest) == 0 {
			i, err := arrayIndex(tok, len(t), insert)
			if err != nil {
				return nil, err
			}
			if !insert {
				t[i] = v
				return t, nil
			}
			out := make([]any, 0, len(t)+1)
			out = append(out, t[:i]...)
			out = append(out, v)
			return append(out, t[i:]...), nil
		}
		i, err := arrayIndex(tok, len(t), false)
		if err != nil {
			return nil, err
		}
		c, err := pointerSet(t[i], rest, v, insert)
		if err != nil {
			return nil, err
		}
		t[i] = c
		return t, nil
	}
	return nil, fmt.Errorf("path token %q goes through a scalar", tok)
}

// pointerRemove removes the value at path, returning the new root and the
// removed value.
func pointerRemove(node any, path []string) (any, any, error) {
	if len(path) == 0 {
		return nil, nil, fmt.Errorf("cannot remove the whole document")
	}
	tok, rest := path[0], path[1:]
	switch t := node.(type) {
	case map[string]any:
		child, ok := t[tok]
		if !ok {
			return nil, nil, fmt.Errorf("path member %q does not exist", tok)
		}
		if len(rest) == 0 {
			delete(t, tok)
			return t, child, nil
		}
		c, removed, err := pointerRemove(child, rest)
		if err != nil {
			return nil, nil, err
		}
		t[tok] = c
		return t, removed, nil
	case []any:
		i, err := arrayIndex(tok, len(t), false)
		if err != nil {
			return nil, nil, err
		}
		if len(rest) == 0 {
			removed := t[i]
			out := make([]any, 0, len(t)-1)
			out = append(out, t[:i]...)
			return append(out, t[i+1:]...), removed, nil
		}
		c, removed, err := pointerRemove(t[i], rest)
		if err != nil {
			return nil, nil, err
		}
		t[i] = c
		return t, removed, nil
	}
	return nil, nil, fmt.Errorf("path token %q goes through a scalar", tok)
}

func deepCopyJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(b)
}

// jsonEqual compares decoded JSON values, numbers by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		fx, ex := x.Float64()
		fy, ey := y.Float64()
		return ex == nil && ey == nil && fx == fy
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

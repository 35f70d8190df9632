package interop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// ShapeOptions says which parts of two JSON documents a shape comparison
// skips and which values it compares.
type ShapeOptions struct {
	// Ignore lists member names skipped wherever they appear, with their
	// whole subtree (typically "managedFields", which only a real
	// kube-apiserver writes).
	Ignore []string
	// Values lists member names whose scalar values must be equal, not just
	// of the same JSON type: the ones clients branch on, such as "kind",
	// "apiVersion", "type", "reason" and "code". Every other scalar (uids,
	// timestamps, resourceVersions, messages) is compared by type only.
	Values []string
}

// DefaultShapeOptions ignores managedFields and compares the values of the
// members a client decides on.
var DefaultShapeOptions = ShapeOptions{
	Ignore: []string{"managedFields"},
	Values: []string{"kind", "apiVersion", "type", "status", "reason", "code"},
}

// ShapeDiff compares the shape of two JSON documents: the same members at
// every level (in any order), JSON values of the same type (a string is not
// a number, null is not an object), arrays of the same length compared
// element by element, and equal values for the members named in
// opt.Values. It returns one line per difference, each starting with the
// path where it was found ("$.items[0].metadata.uid"); none means the
// shapes agree.
func ShapeDiff(want, got []byte, opt ShapeOptions) ([]string, error) {
	w, err := decodeJSON(want)
	if err != nil {
		return nil, fmt.Errorf("shape: want: %w", err)
	}
	g, err := decodeJSON(got)
	if err != nil {
		return nil, fmt.Errorf("shape: got: %w", err)
	}
	var d differ
	d.opt = opt
	d.compare("$", "", w, g)
	return d.out, nil
}

// StreamShapeDiff is ShapeDiff for watch streams: both inputs are
// sequences of JSON documents (one watch event per line on the wire) and
// must hold the same number of events, compared pairwise.
func StreamShapeDiff(want, got []byte, opt ShapeOptions) ([]string, error) {
	ws, err := splitStream(want)
	if err != nil {
		return nil, fmt.Errorf("shape: want: %w", err)
	}
	gs, err := splitStream(got)
	if err != nil {
		return nil, fmt.Errorf("shape: got: %w", err)
	}
	var out []string
	if len(ws) != len(gs) {
		out = append(out, fmt.Sprintf("stream: %d events, want %d", len(gs), len(ws)))
	}
	for i := range min(len(ws), len(gs)) {
		diffs, err := ShapeDiff(ws[i], gs[i], opt)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
		for _, line := range diffs {
			out = append(out, fmt.Sprintf("event[%d]%s", i, strings.TrimPrefix(line, "$")))
		}
	}
	return out, nil
}

// splitStream cuts a stream of concatenated JSON documents into documents.
func splitStream(data []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []json.RawMessage
	for {
		var m json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

type differ struct {
	opt ShapeOptions
	out []string
}

func (d *differ) addf(path, format string, args ...any) {
	d.out = append(d.out, path+": "+fmt.Sprintf(format, args...))
}

// compare walks want and got together; name is the member name the values
// sit under (for opt.Values).
func (d *differ) compare(path, name string, want, got any) {
	if kw, kg := kindOf(want), kindOf(got); kw != kg {
		d.addf(path, "%s, want %s", kg, kw)
		return
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		for _, k := range sortedKeys(w) {
			if slices.Contains(d.opt.Ignore, k) {
				continue
			}
			gv, ok := g[k]
			if !ok {
				d.addf(path+"."+k, "missing")
				continue
			}
			d.compare(path+"."+k, k, w[k], gv)
		}
		for _, k := range sortedKeys(g) {
			if _, ok := w[k]; !ok && !slices.Contains(d.opt.Ignore, k) {
				d.addf(path+"."+k, "unexpected member")
			}
		}
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			d.addf(path, "%d elements, want %d", len(g), len(w))
		}
		for i := range min(len(w), len(g)) {
			d.compare(fmt.Sprintf("%s[%d]", path, i), name, w[i], g[i])
		}
	default:
		if slices.Contains(d.opt.Values, name) && !equalScalar(want, got) {
			d.addf(path, "%v, want %v", got, want)
		}
	}
}

func equalScalar(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "bool"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

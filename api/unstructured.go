package api

import (
	"bytes"
	"encoding/json"
)

// appendSortedJSON appends the object's JSON with every key sorted, the
// way encoding/json writes a map[string]any: custom resources are
// unstructured on a real server, so that is their wire form (fixture
// crd-widget-create-201.json). Numbers are kept exactly as they are.
func (o *Object) appendSortedJSON(dst []byte) []byte {
	plain := *o
	plain.Unstructured = false
	raw := plain.AppendJSON(nil)
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return append(dst, raw...) // cannot happen: we just wrote it
	}
	sorted, err := json.Marshal(v)
	if err != nil {
		return append(dst, raw...)
	}
	return append(dst, sorted...)
}

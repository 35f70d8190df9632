package api

import (
	"encoding/json"
	"fmt"
)

// Object is a Kubernetes object of any kind: a ConfigMap, a Pod, a
// Deployment or one of your own. Only the parts every object shares are
// typed (apiVersion, kind, metadata); every other top-level field (spec,
// data, status, ...) is kept as raw JSON in the order it arrived, so an
// object read from a real kube-apiserver and written back is unchanged.
//
// Objects handed out by the store, the watch cache and the informer cache
// are shared: treat them as read-only and call DeepCopy before changing one.
type Object struct {
	APIVersion string
	Kind       string
	Metadata   ObjectMeta
	// Fields are the top-level members other than apiVersion, kind and
	// metadata, in wire order.
	Fields []Field
	// Unstructured makes the object encode with every key in alphabetical
	// order, at every level, as Kubernetes serializes custom resources
	// (from unstructured maps) unlike built-in kinds (from Go structs).
	Unstructured bool
}

// Field is one top-level member of an Object kept as raw JSON.
type Field struct {
	Name  string
	Value json.RawMessage
}

// Key returns the object's cache key: "namespace/name", or just "name" for
// cluster-scoped objects. It is the key client-go's MetaNamespaceKeyFunc
// produces and the one the informer's Indexer uses.
func (o *Object) Key() string {
	if o.Metadata.Namespace == "" {
		return o.Metadata.Name
	}
	return o.Metadata.Namespace + "/" + o.Metadata.Name
}

// Get returns the raw value of a top-level field, or nil when absent.
func (o *Object) Get(name string) json.RawMessage {
	for _, f := range o.Fields {
		if f.Name == name {
			return f.Value
		}
	}
	return nil
}

// Set replaces a top-level field, or appends it when absent. The value must
// be valid JSON; apiVersion, kind and metadata have typed fields instead.
func (o *Object) Set(name string, value json.RawMessage) error {
	switch name {
	case "apiVersion", "kind", "metadata":
		return fmt.Errorf("api: %q is a typed field of Object, set it directly", name)
	}
	if !json.Valid(value) {
		return fmt.Errorf("api: value for %q is not valid JSON", name)
	}
	v := append(json.RawMessage(nil), value...)
	for i := range o.Fields {
		if o.Fields[i].Name == name {
			o.Fields[i].Value = v
			return nil
		}
	}
	o.Fields = append(o.Fields, Field{Name: name, Value: v})
	return nil
}

// Remove deletes a top-level field if present.
func (o *Object) Remove(name string) {
	for i := range o.Fields {
		if o.Fields[i].Name == name {
			o.Fields = append(o.Fields[:i:i], o.Fields[i+1:]...)
			return
		}
	}
}

// DeepCopy returns a copy that shares no memory with o.
func (o *Object) DeepCopy() *Object {
	if o == nil {
		return nil
	}
	c := &Object{APIVersion: o.APIVersion, Kind: o.Kind, Metadata: o.Metadata.DeepCopy(), Unstructured: o.Unstructured}
	c.Fields = copyFields(o.Fields)
	return c
}

func copyFields(in []Field) []Field {
	if in == nil {
		return nil
	}
	out := make([]Field, len(in))
	for i, f := range in {
		out[i] = Field{Name: f.Name, Value: append(json.RawMessage(nil), f.Value...)}
	}
	return out
}

// MarshalJSON writes kind, apiVersion and metadata first, as Kubernetes
// does, then the other fields in their stored order. Empty kind and
// apiVersion are left out: items inside a List carry neither.
func (o *Object) MarshalJSON() ([]byte, error) {
	return o.AppendJSON(make([]byte, 0, 512)), nil
}

// AppendJSON appends the object's JSON to dst. It is MarshalJSON without the
// allocation, for hot paths that encode into a reused buffer.
func (o *Object) AppendJSON(dst []byte) []byte {
	if o.Unstructured {
		return o.appendSortedJSON(dst)
	}
	dst = append(dst, '{')
	if o.Kind != "" {
		dst = append(dst, `"kind":`...)
		dst = AppendJSONString(dst, o.Kind, EscapeInvalidUTF8)
		dst = append(dst, ',')
	}
	if o.APIVersion != "" {
		dst = append(dst, `"apiVersion":`...)
		dst = AppendJSONString(dst, o.APIVersion, EscapeInvalidUTF8)
		dst = append(dst, ',')
	}
	dst = append(dst, `"metadata":`...)
	dst = o.Metadata.appendJSON(dst)
	dst = appendFields(dst, o.Fields)
	return append(dst, '}')
}

func appendFields(dst []byte, fields []Field) []byte {
	for _, f := range fields {
		dst = append(dst, ',')
		dst = AppendJSONString(dst, f.Name, EscapeInvalidUTF8)
		dst = append(dst, ':')
		dst = append(dst, f.Value...)
	}
	return dst
}

// UnmarshalJSON reads any JSON object. Unknown members are kept verbatim.
func (o *Object) UnmarshalJSON(data []byte) error {
	end, err := o.decodeAt(data, skipSpace(data, 0))
	if err == nil && skipSpace(data, end) != len(data) {
		err = fmt.Errorf("decoding object: %w: data after the object", errSyntax)
	}
	return err
}

// decodeAt decodes the object that starts at data[i] and returns the offset
// just past it, each member's bytes scanned once.
func (o *Object) decodeAt(data []byte, i int) (int, error) {
	*o = Object{}
	end, err := walkObject(data, i, func(key string, data []byte, i int) (int, error) {
		end, err := skipValue(data, i)
		if err != nil {
			return 0, err
		}
		val := data[i:end]
		switch key {
		case "kind":
			return end, unquoteInto(&o.Kind, key, val)
		case "apiVersion":
			return end, unquoteInto(&o.APIVersion, key, val)
		case "metadata":
			if isNull(val) {
				return end, nil
			}
			return end, o.Metadata.UnmarshalJSON(val)
		default:
			o.Fields = append(o.Fields, Field{Name: key, Value: append(json.RawMessage(nil), val...)})
			return end, nil
		}
	})
	if err != nil {
		return 0, fmt.Errorf("decoding object: %w", err)
	}
	return end, nil
}

// unquoteInto decodes a string member; null leaves the target empty.
func unquoteInto(dst *string, key string, val []byte) error {
	if isNull(val) {
		return nil
	}
	s, err := unquote(val)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	*dst = s
	return nil
}

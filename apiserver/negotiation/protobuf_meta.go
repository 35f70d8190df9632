package negotiation

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The meta/v1 messages every object's protobuf carries: ObjectMeta and what
// it holds (Time, OwnerReference, ManagedFieldsEntry), and map fields.
// Field numbers are from k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto;
// see protobuf_decode.go for how the pb* types become JSON.

// pbTime is metav1.Time: seconds since the epoch, written as RFC 3339 in
// UTC, or null when zero.
type pbTime struct{ t time.Time }

// MarshalJSON writes the time as metav1.Time does.
func (t pbTime) MarshalJSON() ([]byte, error) {
	if t.t.IsZero() {
		return []byte("null"), nil
	}
	b := append([]byte{'"'}, t.t.UTC().Format(time.RFC3339)...)
	return append(b, '"'), nil
}

// decodeTime reads a metav1.Time { int64 seconds = 1; int32 nanos = 2 }.
// Like metav1.Time.Unmarshal it drops the nanoseconds (JSON has none), it
// replaces rather than merges, and an empty message is the zero time.
func decodeTime(name string, msg []byte) (pbTime, error) {
	if len(msg) == 0 {
		return pbTime{}, nil
	}
	var seconds int64
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			seconds, err = r.readInt64(name+".seconds", wt)
		case 2:
			_, err = r.readVarint(name+".nanos", wt)
		default:
			return false, nil
		}
		return true, err
	})
	if err != nil {
		return pbTime{}, err
	}
	return pbTime{t: time.Unix(seconds, 0)}, nil
}

// pbObjectMeta is metav1.ObjectMeta.
type pbObjectMeta struct {
	Name                       string                 `json:"name,omitempty"`
	GenerateName               string                 `json:"generateName,omitempty"`
	Namespace                  string                 `json:"namespace,omitempty"`
	SelfLink                   string                 `json:"selfLink,omitempty"`
	UID                        string                 `json:"uid,omitempty"`
	ResourceVersion            string                 `json:"resourceVersion,omitempty"`
	Generation                 int64                  `json:"generation,omitempty"`
	CreationTimestamp          pbTime                 `json:"creationTimestamp"`
	DeletionTimestamp          *pbTime                `json:"deletionTimestamp,omitempty"`
	DeletionGracePeriodSeconds *int64                 `json:"deletionGracePeriodSeconds,omitempty"`
	Labels                     pbStringMap            `json:"labels,omitempty"`
	Annotations                pbStringMap            `json:"annotations,omitempty"`
	OwnerReferences            []pbOwnerReference     `json:"ownerReferences,omitempty"`
	Finalizers                 []string               `json:"finalizers,omitempty"`
	ManagedFields              []pbManagedFieldsEntry `json:"managedFields,omitempty"`
}

// decodeObjectMeta reads an ObjectMeta into m. Like the generated code it
// merges into what is there: a message sent twice is one message.
//
//	name = 1; generateName = 2; namespace = 3; selfLink = 4; uid = 5;
//	resourceVersion = 6; int64 generation = 7; Time creationTimestamp = 8;
//	Time deletionTimestamp = 9; int64 deletionGracePeriodSeconds = 10;
//	map<string,string> labels = 11; map<string,string> annotations = 12;
//	repeated OwnerReference ownerReferences = 13; repeated string finalizers = 14;
//	repeated ManagedFieldsEntry managedFields = 17
func decodeObjectMeta(msg []byte, m *pbObjectMeta) error {
	return eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			m.Name, err = r.readString("name", wt)
		case 2:
			m.GenerateName, err = r.readString("generateName", wt)
		case 3:
			m.Namespace, err = r.readString("namespace", wt)
		case 4:
			m.SelfLink, err = r.readString("selfLink", wt)
		case 5:
			m.UID, err = r.readString("uid", wt)
		case 6:
			m.ResourceVersion, err = r.readString("resourceVersion", wt)
		case 7:
			m.Generation, err = r.readInt64("generation", wt)
		case 8:
			m.CreationTimestamp, err = readTime(r, "creationTimestamp", wt)
		case 9:
			var t pbTime
			t, err = readTime(r, "deletionTimestamp", wt)
			m.DeletionTimestamp = &t
		case 10:
			var n int64
			n, err = r.readInt64("deletionGracePeriodSeconds", wt)
			m.DeletionGracePeriodSeconds = &n
		case 11:
			err = readStringMapEntry(r, "labels", wt, &m.Labels)
		case 12:
			err = readStringMapEntry(r, "annotations", wt, &m.Annotations)
		case 13:
			var msg []byte
			if msg, err = r.readBytes("ownerReferences", wt); err == nil {
				var ref pbOwnerReference
				ref, err = decodeOwnerReference(msg)
				m.OwnerReferences = append(m.OwnerReferences, ref)
			}
		case 14:
			var s string
			s, err = r.readString("finalizers", wt)
			m.Finalizers = append(m.Finalizers, s)
		case 17:
			var msg []byte
			if msg, err = r.readBytes("managedFields", wt); err == nil {
				var e pbManagedFieldsEntry
				e, err = decodeManagedFieldsEntry(msg)
				m.ManagedFields = append(m.ManagedFields, e)
			}
		default:
			return false, nil
		}
		if err != nil {
			return true, fmt.Errorf("metadata: %w", err)
		}
		return true, nil
	})
}

// readTime reads a length-delimited Time field.
func readTime(r *wireReader, name string, wt wireType) (pbTime, error) {
	msg, err := r.readBytes(name, wt)
	if err != nil {
		return pbTime{}, err
	}
	return decodeTime(name, msg)
}

// pbOwnerReference is metav1.OwnerReference.
type pbOwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         *bool  `json:"controller,omitempty"`
	BlockOwnerDeletion *bool  `json:"blockOwnerDeletion,omitempty"`
}

// decodeOwnerReference reads
//
//	kind = 1; name = 3; uid = 4; apiVersion = 5; bool controller = 6; bool blockOwnerDeletion = 7
func decodeOwnerReference(msg []byte) (pbOwnerReference, error) {
	var o pbOwnerReference
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			o.Kind, err = r.readString("ownerReferences.kind", wt)
		case 3:
			o.Name, err = r.readString("ownerReferences.name", wt)
		case 4:
			o.UID, err = r.readString("ownerReferences.uid", wt)
		case 5:
			o.APIVersion, err = r.readString("ownerReferences.apiVersion", wt)
		case 6:
			var b bool
			b, err = r.readBool("ownerReferences.controller", wt)
			o.Controller = &b
		case 7:
			var b bool
			b, err = r.readBool("ownerReferences.blockOwnerDeletion", wt)
			o.BlockOwnerDeletion = &b
		default:
			return false, nil
		}
		return true, err
	})
	return o, err
}

// pbManagedFieldsEntry is metav1.ManagedFieldsEntry.
type pbManagedFieldsEntry struct {
	Manager     string      `json:"manager,omitempty"`
	Operation   string      `json:"operation,omitempty"`
	APIVersion  string      `json:"apiVersion,omitempty"`
	Time        *pbTime     `json:"time,omitempty"`
	FieldsType  string      `json:"fieldsType,omitempty"`
	FieldsV1    *pbFieldsV1 `json:"fieldsV1,omitempty"`
	Subresource string      `json:"subresource,omitempty"`
}

// pbFieldsV1 is metav1.FieldsV1: a JSON document carried as bytes.
type pbFieldsV1 struct{ raw []byte }

// errFieldsV1NotJSON is a managedFields entry whose fieldsV1 is not JSON.
var errFieldsV1NotJSON = errors.New("managedFields.fieldsV1: not a JSON document")

// MarshalJSON writes the document, checked when it was read, as it is.
func (f pbFieldsV1) MarshalJSON() ([]byte, error) {
	if f.raw == nil {
		return []byte("null"), nil
	}
	return f.raw, nil
}

// decodeManagedFieldsEntry reads
//
//	manager = 1; operation = 2; apiVersion = 3; Time time = 4; fieldsType = 6;
//	FieldsV1 fieldsV1 = 7 { bytes Raw = 1 }; subresource = 8
func decodeManagedFieldsEntry(msg []byte) (pbManagedFieldsEntry, error) {
	var e pbManagedFieldsEntry
	err := eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
		var err error
		switch field {
		case 1:
			e.Manager, err = r.readString("managedFields.manager", wt)
		case 2:
			e.Operation, err = r.readString("managedFields.operation", wt)
		case 3:
			e.APIVersion, err = r.readString("managedFields.apiVersion", wt)
		case 4:
			var t pbTime
			t, err = readTime(r, "managedFields.time", wt)
			e.Time = &t
		case 6:
			e.FieldsType, err = r.readString("managedFields.fieldsType", wt)
		case 7:
			var msg []byte
			if msg, err = r.readBytes("managedFields.fieldsV1", wt); err != nil {
				return true, err
			}
			if e.FieldsV1 == nil {
				e.FieldsV1 = &pbFieldsV1{}
			}
			err = eachField(msg, func(r *wireReader, field int32, wt wireType) (bool, error) {
				if field != 1 {
					return false, nil
				}
				raw, err := r.readBytes("managedFields.fieldsV1.raw", wt)
				if err != nil {
					return true, err
				}
				// Kubernetes would also try CBOR here; we read JSON only.
				if !json.Valid(raw) {
					return true, errFieldsV1NotJSON
				}
				e.FieldsV1.raw = raw
				return true, nil
			})
		case 8:
			e.Subresource, err = r.readString("managedFields.subresource", wt)
		default:
			return false, nil
		}
		return true, err
	})
	return e, err
}

// Map fields are repeated entry messages { key = 1; value = 2 }; a missing
// key or value is the empty one.

// pbMapEntry is one entry of a map field. key and value alias the request
// body; seq is the entry's place in arrival order.
type pbMapEntry struct {
	key, value []byte
	seq        int
}

// pbStringMap is a map<string,string> field's entries in the order they
// arrived. We keep them in a slice rather than a Go map, and write the JSON
// ourselves, because a body can hold hundreds of thousands of entries: a
// map per object and encoding/json's reflection over it would make the
// protobuf path many times slower than the JSON path for the same data.
type pbStringMap []pbMapEntry

// pbBytesMap is a map<string,bytes> field's entries in the order they
// arrived; JSON writes the values in base64.
type pbBytesMap []pbMapEntry

// MarshalJSON writes the map as encoding/json writes a map[string]string.
func (m pbStringMap) MarshalJSON() ([]byte, error) { return appendMapJSON(nil, m, false), nil }

// MarshalJSON writes the map as encoding/json writes a map[string][]byte.
func (m pbBytesMap) MarshalJSON() ([]byte, error) { return appendMapJSON(nil, m, true), nil }

// appendMapJSON writes entries as a JSON object with sorted keys, as
// encoding/json writes a Go map. A key sent more than once keeps its last
// value, as the generated code's map assignment does: equal keys sort by
// arrival, and only the last of each run is written. It sorts entries in
// place; their arrival order lives on in seq.
func appendMapJSON(dst []byte, entries []pbMapEntry, base64Values bool) []byte {
	byKeyThenArrival := func(a, b pbMapEntry) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return a.seq - b.seq
	}
	// Kubernetes' generated code writes map entries sorted by key, so a
	// real client's entries need no sorting.
	if !slices.IsSortedFunc(entries, byKeyThenArrival) {
		slices.SortFunc(entries, byKeyThenArrival)
	}
	dst = append(dst, '{')
	first := true
	for i, e := range entries {
		if i+1 < len(entries) && bytes.Equal(entries[i+1].key, e.key) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, e.key)
		dst = append(dst, ':')
		if base64Values {
			dst = append(dst, '"')
			dst = base64.StdEncoding.AppendEncode(dst, e.value)
			dst = append(dst, '"')
		} else {
			dst = appendJSONString(dst, e.value)
		}
	}
	return append(dst, '}')
}

// appendJSONString quotes s exactly as encoding/json quotes a string.
// Printable ASCII needing no escape, by far the common case, is copied;
// anything else (control characters, invalid UTF-8, <, > and &, U+2028)
// is left to encoding/json itself, so the two cannot disagree.
func appendJSONString(dst, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(string(s)) // a string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// readStringMapEntry reads one map<string,string> entry onto *m.
func readStringMapEntry(r *wireReader, name string, wt wireType, m *pbStringMap) error {
	key, value, err := readMapEntry(r, name, wt)
	if err != nil {
		return err
	}
	*m = append(*m, pbMapEntry{key: key, value: value, seq: len(*m)})
	return nil
}

// readBytesMapEntry reads one map<string,bytes> entry onto *m.
func readBytesMapEntry(r *wireReader, name string, wt wireType, m *pbBytesMap) error {
	key, value, err := readMapEntry(r, name, wt)
	if err != nil {
		return err
	}
	*m = append(*m, pbMapEntry{key: key, value: value, seq: len(*m)})
	return nil
}

// readMapEntry reads a map entry message { key = 1; value = 2 }. It is the
// one hot loop here (a body can be nothing but map entries), so it reads
// the fields itself rather than through eachField's callback.
func readMapEntry(r *wireReader, name string, wt wireType) (key, value []byte, err error) {
	msg, err := r.readBytes(name, wt)
	if err != nil {
		return nil, nil, err
	}
	key, value = []byte{}, []byte{}
	e := wireReader{buf: msg}
	for !e.done() && err == nil {
		var field int32
		if field, wt, err = e.next(); err != nil {
			break
		}
		switch {
		case wt == wireEndGroup:
			err = fmt.Errorf("%w: end group for field %d", errGroupMismatch, field)
		case field == 1:
			key, err = e.readBytes("key", wt)
		case field == 2:
			value, err = e.readBytes("value", wt)
		default:
			err = e.skip(field, wt)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s entry: %w", name, err)
	}
	return key, value, nil
}

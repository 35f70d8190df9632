package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"
)

// ObjectMeta is the metadata every object carries. The fields below are the
// ones list-watch needs; anything else a server sends (ownerReferences,
// finalizers, managedFields, ...) is kept in Extra and written back as-is.
type ObjectMeta struct {
	Name         string
	GenerateName string
	Namespace    string
	UID          string
	// ResourceVersion is the store revision at which this object was last
	// written. It is a string on the wire and clients must treat it as
	// opaque; the server side parses it with ParseResourceVersion.
	ResourceVersion string
	Generation      int64
	// CreationTimestamp is zero for objects that have not been stored; it
	// is written as null then, like Kubernetes does.
	CreationTimestamp time.Time
	DeletionTimestamp *time.Time
	Labels            map[string]string
	Annotations       map[string]string
	// Extra holds the metadata members not modelled above, in wire order.
	Extra []Field
}

// timeLayout is RFC 3339 at second precision, the format of metav1.Time.
const timeLayout = "2006-01-02T15:04:05Z07:00"

// DeepCopy returns a copy that shares no memory with m.
func (m ObjectMeta) DeepCopy() ObjectMeta {
	c := m
	if m.DeletionTimestamp != nil {
		t := *m.DeletionTimestamp
		c.DeletionTimestamp = &t
	}
	c.Labels = maps.Clone(m.Labels)
	c.Annotations = maps.Clone(m.Annotations)
	c.Extra = copyFields(m.Extra)
	return c
}

// MarshalJSON writes the members in the order Kubernetes does.
func (m ObjectMeta) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AppendJSON appends the metadata's JSON to dst.
func (m *ObjectMeta) AppendJSON(dst []byte) []byte { return m.appendJSON(dst) }

// appendJSON writes the members in meta/v1 ObjectMeta's field order. Members
// kept in Extra that Kubernetes places before labels (selfLink,
// deletionGracePeriodSeconds) go back to their place, so an object from a
// real server is written back unchanged; the rest of Extra (ownerReferences,
// finalizers, managedFields, ...) follows annotations in arrival order.
//
// A zero creationTimestamp is left out, as k8s.io/apimachinery v0.37.2
// writes it (ObjectMeta's json tag says omitzero, pkg/apis/meta/v1/types.go):
// an object being created, a BOOKMARK's object, a Pod template's metadata.
// (Kubernetes 1.32 wrote "creationTimestamp":null there.)
func (m *ObjectMeta) appendJSON(dst []byte) []byte {
	w := memberWriter{dst: append(dst, '{')}
	w.str("name", m.Name)
	w.str("generateName", m.GenerateName)
	w.str("namespace", m.Namespace)
	w.extra(m.Extra, func(name string) bool { return name == "selfLink" })
	w.str("uid", m.UID)
	w.str("resourceVersion", m.ResourceVersion)
	if m.Generation != 0 {
		w.member("generation")
		w.dst = strconv.AppendInt(w.dst, m.Generation, 10)
	}
	if !m.CreationTimestamp.IsZero() {
		w.member("creationTimestamp")
		w.dst = appendTime(w.dst, m.CreationTimestamp)
	}
	if m.DeletionTimestamp != nil {
		w.member("deletionTimestamp")
		w.dst = appendTime(w.dst, *m.DeletionTimestamp)
	}
	w.extra(m.Extra, func(name string) bool { return name == "deletionGracePeriodSeconds" })
	if len(m.Labels) > 0 {
		w.member("labels")
		w.dst = appendStringMap(w.dst, m.Labels)
	}
	if len(m.Annotations) > 0 {
		w.member("annotations")
		w.dst = appendStringMap(w.dst, m.Annotations)
	}
	w.extra(m.Extra, func(name string) bool { return !placedExtra(name) })
	return append(w.dst, '}')
}

// placedExtra names the Extra members that Kubernetes writes before labels;
// appendJSON puts them back there instead of at the end.
func placedExtra(name string) bool {
	return name == "selfLink" || name == "deletionGracePeriodSeconds"
}

// memberWriter writes the members of one JSON object, minding the commas.
type memberWriter struct {
	dst      []byte
	notFirst bool
}

func (w *memberWriter) member(name string) {
	if w.notFirst {
		w.dst = append(w.dst, ',')
	}
	w.notFirst = true
	w.dst = AppendJSONString(w.dst, name, EscapeInvalidUTF8)
	w.dst = append(w.dst, ':')
}

// str writes a string member unless it is empty (omitempty).
func (w *memberWriter) str(name, v string) {
	if v != "" {
		w.member(name)
		w.dst = AppendJSONString(w.dst, v, EscapeInvalidUTF8)
	}
}

// extra writes the raw members whose names pass keep, in stored order.
func (w *memberWriter) extra(fields []Field, keep func(string) bool) {
	for _, f := range fields {
		if keep(f.Name) {
			w.member(f.Name)
			w.dst = append(w.dst, f.Value...)
		}
	}
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, timeLayout)
	return append(dst, '"')
}

// appendStringMap writes a map with sorted keys, as encoding/json does.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	// Most objects have a handful of labels: sort their keys on the stack.
	keys := make([]string, 0, 16)
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, k, EscapeInvalidUTF8)
		dst = append(dst, ':')
		dst = AppendJSONString(dst, m[k], EscapeInvalidUTF8)
	}
	return append(dst, '}')
}

// UnmarshalJSON reads metadata, keeping members it does not model in Extra.
func (m *ObjectMeta) UnmarshalJSON(data []byte) error {
	*m = ObjectMeta{}
	return eachMember(data, func(key string, val []byte) error {
		switch key {
		case "name":
			return unquoteInto(&m.Name, "metadata.name", val)
		case "generateName":
			return unquoteInto(&m.GenerateName, "metadata.generateName", val)
		case "namespace":
			return unquoteInto(&m.Namespace, "metadata.namespace", val)
		case "uid":
			return unquoteInto(&m.UID, "metadata.uid", val)
		case "resourceVersion":
			return unquoteInto(&m.ResourceVersion, "metadata.resourceVersion", val)
		case "generation":
			if isNull(val) {
				return nil
			}
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil {
				return fmt.Errorf("metadata.generation: %w: %w", errSyntax, err)
			}
			m.Generation = n
		case "creationTimestamp":
			t, err := parseTime(val)
			if err != nil {
				return fmt.Errorf("metadata.creationTimestamp: %w", err)
			}
			if t != nil {
				m.CreationTimestamp = *t
			}
		case "deletionTimestamp":
			t, err := parseTime(val)
			if err != nil {
				return fmt.Errorf("metadata.deletionTimestamp: %w", err)
			}
			m.DeletionTimestamp = t
		case "labels":
			return decodeStringMap(&m.Labels, "metadata.labels", val)
		case "annotations":
			return decodeStringMap(&m.Annotations, "metadata.annotations", val)
		default:
			m.Extra = append(m.Extra, Field{Name: key, Value: append(json.RawMessage(nil), val...)})
		}
		return nil
	})
}

func parseTime(val []byte) (*time.Time, error) {
	if isNull(val) {
		return nil, nil
	}
	s, err := unquote(val)
	if err != nil {
		return nil, err
	}
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errSyntax, err)
	}
	// We write times in UTC; an offset that pushes the year out of 0..9999
	// would come out as something RFC 3339 (and so we) cannot read back.
	if y := t.UTC().Year(); y < 0 || y > 9999 {
		return nil, fmt.Errorf("%w: time %q is out of range", errSyntax, s)
	}
	return &t, nil
}

func decodeStringMap(dst *map[string]string, field string, val []byte) error {
	if isNull(val) {
		return nil
	}
	out := map[string]string{}
	err := eachMember(val, func(k string, v []byte) error {
		s, err := unquote(v)
		if err != nil {
			return fmt.Errorf("%s[%q]: %w", field, k, err)
		}
		out[k] = s
		return nil
	})
	if err != nil {
		return err
	}
	*dst = out
	return nil
}

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
func (m *ObjectMeta) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	first := true
	member := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
	}
	str := func(name, v string) {
		if v != "" {
			member(name)
			dst = appendString(dst, v)
		}
	}
	str("name", m.Name)
	str("generateName", m.GenerateName)
	str("namespace", m.Namespace)
	str("uid", m.UID)
	str("resourceVersion", m.ResourceVersion)
	if m.Generation != 0 {
		member("generation")
		dst = strconv.AppendInt(dst, m.Generation, 10)
	}
	member("creationTimestamp")
	if m.CreationTimestamp.IsZero() {
		dst = append(dst, "null"...)
	} else {
		dst = appendTime(dst, m.CreationTimestamp)
	}
	if m.DeletionTimestamp != nil {
		member("deletionTimestamp")
		dst = appendTime(dst, *m.DeletionTimestamp)
	}
	if len(m.Labels) > 0 {
		member("labels")
		dst = appendStringMap(dst, m.Labels)
	}
	if len(m.Annotations) > 0 {
		member("annotations")
		dst = appendStringMap(dst, m.Annotations)
	}
	// Creation always writes a member above, so Extra never starts the object.
	dst = appendFields(dst, m.Extra)
	return append(dst, '}')
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, timeLayout)
	return append(dst, '"')
}

// appendStringMap writes a map with sorted keys, as encoding/json does.
func appendStringMap(dst []byte, m map[string]string) []byte {
	dst = append(dst, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, m[k])
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
				return fmt.Errorf("metadata.generation: %w", err)
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
		return nil, err
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

package protobuf

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"listwatch/api"
)

// Unmarshal converts the bytes of a protobuf message of apiVersion/kind (no
// envelope) into the JSON kube-apiserver writes for the same object: kind
// and apiVersion first, then the fields in Go struct order with Go's
// encoding/json rules (omitempty, null for nil slices and maps, sorted map
// keys, base64 bytes, HTML-safe escaping) and the Kubernetes types' own
// forms (Time, Quantity, IntOrString, ...). Malformed protobuf is an error.
func (s *Schema) Unmarshal(apiVersion, kind string, raw []byte) ([]byte, error) {
	m, err := s.kind(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, 0, 2*len(raw)+64)
	dst = append(dst, `{"kind":`...)
	dst = appendJSONString(dst, kind)
	dst = append(dst, `,"apiVersion":`...)
	dst = appendJSONString(dst, apiVersion)
	// The plain wire form, which every generated marshaller writes, is
	// read in place (wirereader.go); anything else, errors included, the
	// plain way.
	if out, err := s.readPlain(dst, m, raw); err == nil {
		return append(out, '}'), nil
	}
	return unmarshalDynamic(dst, m, raw, apiVersion, kind)
}

// unmarshalDynamic is Unmarshal the plain way: protobuf-go decodes the
// bytes into a dynamicpb message, whose fields are then written as JSON
// after dst (the object's kind and apiVersion).
func unmarshalDynamic(dst []byte, m *message, raw []byte, apiVersion, kind string) ([]byte, error) {
	pm := dynamicpb.NewMessage(m.desc)
	if err := unmarshal(raw, pm); err != nil {
		return nil, fmt.Errorf("%s %s: %w", apiVersion, kind, err)
	}
	first := false
	dst, err := appendFields(dst, pm, m, &first)
	if err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// appendFields appends the members of m's JSON object (no braces); first
// says whether no member has been written yet.
func appendFields(dst []byte, pm protoreflect.Message, m *message, first *bool) ([]byte, error) {
	key := func(dst []byte, name string) []byte {
		if !*first {
			dst = append(dst, ',')
		}
		*first = false
		dst = appendJSONString(dst, name)
		return append(dst, ':')
	}
	var err error
	for _, f := range m.fields {
		fd := f.desc
		if f.inline {
			if dst, err = appendFields(dst, pm.Get(fd).Message(), f.msg, first); err != nil {
				return nil, err
			}
			continue
		}
		switch {
		case fd.IsMap():
			mp := pm.Get(fd).Map()
			if f.omitempty && mp.Len() == 0 {
				continue
			}
			dst = key(dst, f.json)
			if mp.Len() == 0 {
				dst = append(dst, "null"...)
				continue
			}
			if dst, err = appendMap(dst, mp, f); err != nil {
				return nil, err
			}
		case fd.IsList():
			l := pm.Get(fd).List()
			if f.omitempty && l.Len() == 0 {
				continue
			}
			dst = key(dst, f.json)
			if l.Len() == 0 {
				dst = append(dst, "null"...)
				continue
			}
			dst = append(dst, '[')
			for i := range l.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				if dst, err = appendValue(dst, fd, f.msg, l.Get(i)); err != nil {
					return nil, err
				}
			}
			dst = append(dst, ']')
		default:
			has := pm.Has(fd)
			v := pm.Get(fd)
			if has && (f.ptr || f.omitzero) && f.msg != nil && f.msg.custom != nil {
				// A pointer to a zero Time is null in JSON, which reads
				// back as no pointer at all: write it as none, so that
				// protobuf -> JSON -> protobuf -> JSON is a fixed point.
				// An omitzero Time (creationTimestamp) that is zero is
				// left out the same way.
				b, err := f.msg.customToJSON(nil, v.Message())
				has = err != nil || string(b) != "null"
			}
			if f.omitzero && !has {
				continue
			}
			isNil := (f.ptr || fd.Kind() == protoreflect.BytesKind) && !has
			switch {
			case isNil && f.omitempty:
				continue
			case isNil:
				dst = append(key(dst, f.json), "null"...)
				continue
			case f.omitempty && f.msg == nil && !f.ptr && isZero(fd, v):
				continue
			}
			dst = key(dst, f.json)
			if dst, err = appendValue(dst, fd, f.msg, v); err != nil {
				return nil, err
			}
		}
	}
	return dst, nil
}

func appendMap(dst []byte, mp protoreflect.Map, f *field) ([]byte, error) {
	keys := make([]string, 0, mp.Len())
	mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
		keys = append(keys, k.String())
		return true
	})
	slices.Sort(keys)
	dst = append(dst, '{')
	var err error
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		v := mp.Get(protoreflect.ValueOfString(k).MapKey())
		if dst, err = appendValue(dst, f.desc.MapValue(), f.msg, v); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendValue appends one value: a message (m not nil) or a scalar.
func appendValue(dst []byte, fd protoreflect.FieldDescriptor, m *message, v protoreflect.Value) ([]byte, error) {
	if m != nil {
		pm := v.Message()
		if m.custom != nil {
			return m.customToJSON(dst, pm)
		}
		first := true
		dst = append(dst, '{')
		dst, err := appendFields(dst, pm, m, &first)
		if err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return appendJSONString(dst, v.String()), nil
	case protoreflect.BytesKind:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
		return append(dst, '"'), nil
	case protoreflect.BoolKind:
		return strconv.AppendBool(dst, v.Bool()), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendUint(dst, v.Uint(), 10), nil
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		x := v.Float()
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%s: %v cannot be written as JSON", fd.Name(), x)
		}
		b, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	}
	return nil, fmt.Errorf("%s: unsupported protobuf kind %s", fd.Name(), fd.Kind())
}

// isZero is encoding/json's "empty" for a scalar.
func isZero(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return v.String() == ""
	case protoreflect.BytesKind:
		return len(v.Bytes()) == 0
	case protoreflect.BoolKind:
		return !v.Bool()
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		return v.Float() == 0
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return v.Uint() == 0
	}
	return v.Int() == 0
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// (which is how kube-apiserver writes strings), except that each invalid
// UTF-8 byte becomes U+FFFD as a character, not as encoding/json's
// "\ufffd" escape (api.ReplaceInvalidUTF8).
func appendJSONString(dst []byte, s string) []byte {
	return api.AppendJSONString(dst, s, api.ReplaceInvalidUTF8)
}

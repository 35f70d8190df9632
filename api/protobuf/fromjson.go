package protobuf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FieldError is a JSON value that does not fit its field's type.
type FieldError struct {
	// Path is the field in JSONPath-like form: .data.k, .spec.ports[0].port.
	Path string
	Err  error
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Marshal converts a JSON object of apiVersion/kind into the bytes of its
// protobuf message (no envelope), exactly as Kubernetes' generated
// marshallers write the same object: fields in number order, map entries
// sorted by key, every non-pointer field written even when zero. JSON keys
// that are not fields of the kind (kind, apiVersion, unknown fields) are
// ignored; a value of the wrong type is a *FieldError.
func (s *Schema) Marshal(apiVersion, kind string, js []byte) ([]byte, error) {
	m, err := s.kind(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	return s.appendMarshal(nil, m, js)
}

// marshalDynamic is Marshal the plain way: fill a dynamicpb message from
// the JSON, then let protobuf-go marshal it. The wire writer
// (wirewriter.go) does the same in one pass; the tests hold it to these
// bytes.
func marshalDynamic(m *message, js []byte) ([]byte, error) {
	pm := dynamicpb.NewMessage(m.desc)
	if err := fillMessage(pm, m, js, ""); err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(pm)
}

// fillMessage sets pm from the JSON value v (not null).
func fillMessage(pm protoreflect.Message, m *message, v json.RawMessage, path string) error {
	if m.custom != nil {
		err := m.customFromJSON(pm, v, path)
		if fe := (*FieldError)(nil); err != nil && !errors.As(err, &fe) {
			err = &FieldError{Path: pathOrRoot(path), Err: err}
		}
		return err
	}
	var obj map[string]json.RawMessage
	if err := decodeJSON(v, &obj); err != nil || obj == nil {
		return &FieldError{Path: pathOrRoot(path), Err: fmt.Errorf("expected an object, not %s", jsonKind(v))}
	}
	return fillFields(pm, m, obj, path)
}

// fillFields sets the fields of m from the members of one JSON object
// (obj may be nil: then only the always-written zero values are set).
func fillFields(pm protoreflect.Message, m *message, obj map[string]json.RawMessage, path string) error {
	for _, f := range m.fields {
		fd := f.desc
		if f.inline {
			if err := fillFields(pm.Mutable(fd).Message(), f.msg, obj, path); err != nil {
				return err
			}
			continue
		}
		v, present := obj[f.json]
		if present && isNull(v) {
			present = false
		}
		fpath := path + "." + f.json
		switch {
		case fd.IsMap():
			if present {
				if err := fillMap(pm.Mutable(fd).Map(), f, v, fpath); err != nil {
					return err
				}
			}
		case fd.IsList():
			if present {
				if err := fillList(pm.Mutable(fd).List(), f, v, fpath); err != nil {
					return err
				}
			}
		case f.msg != nil:
			switch {
			case present:
				if err := fillMessage(pm.Mutable(fd).Message(), f.msg, v, fpath); err != nil {
					return err
				}
			case !f.ptr:
				zeroMessage(pm.Mutable(fd).Message(), f.msg)
			}
		default:
			switch {
			case present:
				val, err := scalar(fd, v)
				if err != nil {
					return &FieldError{Path: fpath, Err: err}
				}
				pm.Set(fd, val)
			case !f.ptr && fd.Kind() != protoreflect.BytesKind:
				// A nil []byte is not written; every other zero is.
				pm.Set(fd, zeroScalar(fd))
			}
		}
	}
	return nil
}

// zeroMessage fills pm as Kubernetes writes the Go zero value of m.
func zeroMessage(pm protoreflect.Message, m *message) {
	if m.custom != nil {
		if m.custom.zero != nil {
			m.custom.zero(pm)
		}
		return
	}
	// Cannot fail: with no JSON there is nothing to mistype.
	_ = fillFields(pm, m, nil, "")
}

func fillMap(mp protoreflect.Map, f *field, v json.RawMessage, path string) error {
	var obj map[string]json.RawMessage
	if err := decodeJSON(v, &obj); err != nil {
		return &FieldError{Path: path, Err: fmt.Errorf("expected an object, not %s", jsonKind(v))}
	}
	vd := f.desc.MapValue()
	for k, ev := range obj {
		key := protoreflect.ValueOfString(k).MapKey()
		epath := path + "." + k
		if f.msg != nil {
			em := mp.NewValue()
			if isNull(ev) {
				zeroMessage(em.Message(), f.msg)
			} else if err := fillMessage(em.Message(), f.msg, ev, epath); err != nil {
				return err
			}
			mp.Set(key, em)
			continue
		}
		if isNull(ev) {
			mp.Set(key, zeroScalar(vd))
			continue
		}
		val, err := scalar(vd, ev)
		if err != nil {
			return &FieldError{Path: epath, Err: err}
		}
		mp.Set(key, val)
	}
	return nil
}

func fillList(l protoreflect.List, f *field, v json.RawMessage, path string) error {
	var arr []json.RawMessage
	if err := decodeJSON(v, &arr); err != nil {
		return &FieldError{Path: path, Err: fmt.Errorf("expected an array, not %s", jsonKind(v))}
	}
	for i, ev := range arr {
		epath := path + "[" + strconv.Itoa(i) + "]"
		if f.msg != nil {
			em := l.NewElement()
			if isNull(ev) {
				zeroMessage(em.Message(), f.msg)
			} else if err := fillMessage(em.Message(), f.msg, ev, epath); err != nil {
				return err
			}
			l.Append(em)
			continue
		}
		if isNull(ev) {
			l.Append(zeroScalar(f.desc))
			continue
		}
		val, err := scalar(f.desc, ev)
		if err != nil {
			return &FieldError{Path: epath, Err: err}
		}
		l.Append(val)
	}
	return nil
}

// scalar converts a JSON value to a scalar field's value with Go's
// encoding/json rules: strings are strings, integers are integer
// literals in range, bytes are standard base64.
func scalar(fd protoreflect.FieldDescriptor, v json.RawMessage) (protoreflect.Value, error) {
	lit := string(bytes.TrimSpace(v))
	wrong := func(want string) (protoreflect.Value, error) {
		return protoreflect.Value{}, fmt.Errorf("expected %s, not %s", want, jsonKind(v))
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		s, err := jsonString(v)
		if err != nil {
			return wrong("a string")
		}
		return protoreflect.ValueOfString(s), nil
	case protoreflect.BytesKind:
		s, err := jsonString(v)
		if err != nil {
			return wrong("a base64 string")
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return protoreflect.Value{}, fmt.Errorf("illegal base64 data: %w", err)
		}
		return protoreflect.ValueOfBytes(b), nil
	case protoreflect.BoolKind:
		switch lit {
		case "true":
			return protoreflect.ValueOfBool(true), nil
		case "false":
			return protoreflect.ValueOfBool(false), nil
		}
		return wrong("a boolean")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(lit, 10, 32)
		if err != nil {
			return wrong("a 32-bit integer")
		}
		return protoreflect.ValueOfInt32(int32(n)), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return wrong("a 64-bit integer")
		}
		return protoreflect.ValueOfInt64(n), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(lit, 10, 32)
		if err != nil {
			return wrong("an unsigned 32-bit integer")
		}
		return protoreflect.ValueOfUint32(uint32(n)), nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n, err := strconv.ParseUint(lit, 10, 64)
		if err != nil {
			return wrong("an unsigned 64-bit integer")
		}
		return protoreflect.ValueOfUint64(n), nil
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		var n json.Number
		if json.Unmarshal(v, &n) != nil {
			return wrong("a number")
		}
		bits := 64
		if fd.Kind() == protoreflect.FloatKind {
			bits = 32
		}
		x, err := strconv.ParseFloat(n.String(), bits)
		if err != nil {
			return wrong("a number in range")
		}
		if bits == 32 {
			return protoreflect.ValueOfFloat32(float32(x)), nil
		}
		return protoreflect.ValueOfFloat64(x), nil
	}
	return protoreflect.Value{}, fmt.Errorf("unsupported protobuf kind %s", fd.Kind())
}

// zeroScalar is the zero value of a scalar field (the .proto files declare
// no defaults, so it is Go's zero).
func zeroScalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString("")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(nil)
	}
	return fd.Default()
}

// decodeJSON unmarshals with numbers kept as text.
func decodeJSON(v json.RawMessage, dst any) error {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if err := d.Decode(dst); err != nil {
		return err
	}
	if d.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// jsonString decodes a JSON string (invalid UTF-8 becomes U+FFFD, as in
// Go's encoding/json).
func jsonString(v json.RawMessage) (string, error) {
	var s string
	if len(v) == 0 || bytes.TrimSpace(v)[0] != '"' {
		return "", fmt.Errorf("expected a string, not %s", jsonKind(v))
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", err
	}
	return s, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// jsonKind names the type of a JSON value for error messages.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func pathOrRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

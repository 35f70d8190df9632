package protobuf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Conforming a JSON object to its kind's typed schema, the way
// kube-apiserver's decoding into a Go struct does it for built-in kinds:
// a value of the wrong type fails the whole object, a member the type does
// not have is dropped (and reported, for the fieldValidation directive),
// and each invalid UTF-8 byte becomes U+FFFD. What passes can be decoded
// by every typed client: it is exactly what the Go structs hold.
//
// The schema is the one the transcoder uses (the official generated.proto
// descriptors plus tools/protogen's field table), so there is no second,
// hand-written description of any kind. Kubernetes does this in
// sigs.k8s.io/json's case-sensitive decoder (UnmarshalCaseSensitivePreserveInts
// with strict errors) and k8s.io/apimachinery/pkg/runtime/serializer/json.

// TypeError is a JSON value that the kind's Go struct cannot hold. Its
// message is encoding/json's UnmarshalTypeError, which is what
// kube-apiserver quotes: "json: cannot unmarshal number into Go struct
// field ConfigMap.data of type string".
type TypeError struct {
	// Value is the JSON type ("number", "string", "array", "object",
	// "bool"), followed by the literal for a number that does not fit.
	Value string
	// Struct is the Go type of the innermost struct holding the field.
	Struct string
	// Field is the path of JSON names from the object's root, without
	// list indices or map keys ("spec.containers.name").
	Field string
	// Type is the Go type of the field ("string", "int32", "[]string").
	Type string
}

func (e *TypeError) Error() string {
	return "json: cannot unmarshal " + e.Value + " into Go struct field " + e.Struct + "." + e.Field + " of type " + e.Type
}

// Conformed is what Conform returns for an object that fits its kind.
type Conformed struct {
	// JSON is the object with unknown members dropped and invalid UTF-8
	// replaced; members keep their order.
	JSON []byte
	// Strict are the strict decoding errors, in the order met: `unknown
	// field "spec.extra"` and `duplicate field "data"`, as kube-apiserver
	// words them for the Warning header and for fieldValidation=Strict.
	Strict []string
}

// Conform checks the JSON object js against the schema of apiVersion/kind
// and returns it pruned. A value of the wrong type is a *TypeError (or the
// error of a Kubernetes type's own JSON form: Time, Quantity, base64 bytes);
// a kind the schema does not know is ErrUnknownKind.
func (s *Schema) Conform(apiVersion, kind string, js []byte) (Conformed, error) {
	m, err := s.kind(apiVersion, kind)
	if err != nil {
		return Conformed{}, err
	}
	c := &conformer{}
	out, err := c.object(nil, ValidUTF8(js), m, "", "", true)
	if err != nil {
		return Conformed{}, err
	}
	return Conformed{JSON: out, Strict: c.strict}, nil
}

// ValidUTF8 replaces each byte of b that is not part of valid UTF-8 with
// U+FFFD, as encoding/json does when it decodes a string. In valid JSON
// such bytes can only sit inside strings, so the result is still the same
// JSON, now readable by every client. b itself is returned when valid.
func ValidUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

type conformer struct {
	strict []string
}

// member is one member of a JSON object, in order.
type member struct {
	key string
	val json.RawMessage
}

// members splits a JSON object into its members; ok is false when v is not
// an object.
func members(v json.RawMessage) (ms []member, ok bool) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		key, _ := t.(string)
		var val json.RawMessage
		if err := d.Decode(&val); err != nil {
			return nil, false
		}
		ms = append(ms, member{key: key, val: val})
	}
	if t, err := d.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	return ms, true
}

// lookup finds the field with JSON name key in m, looking through inline
// fields, and the message that declares it (the Go struct it belongs to).
func lookup(m *message, key string) (*field, *message) {
	for _, f := range m.fields {
		if f.inline {
			if g, owner := lookup(f.msg, key); g != nil {
				return g, owner
			}
			continue
		}
		if f.json == key {
			return f, m
		}
	}
	return nil, nil
}

// object conforms a JSON object of message m and appends it to dst. path
// is the JSONPath-like path of strict errors (with indices), goPath the
// encoding/json field path (without); top says kind and apiVersion are
// members of this object.
func (c *conformer) object(dst []byte, v json.RawMessage, m *message, path, goPath string, top bool) ([]byte, error) {
	if m.custom != nil {
		if err := m.customFromJSON(dynamicpb.NewMessage(m.desc), v, path); err != nil {
			return nil, err
		}
		return append(dst, bytes.TrimSpace(v)...), nil
	}
	ms, ok := members(v)
	if !ok {
		// Only the root can get here (element checks nested objects, naming
		// the struct that holds them).
		return nil, &TypeError{Value: jsonType(v), Struct: goStructName(m), Field: "", Type: goTypeName(m)}
	}
	seen := make(map[string]int, len(ms))
	kept := make([]member, 0, len(ms))
	for _, mb := range ms {
		fpath := joinPath(path, mb.key)
		if i, dup := seen[mb.key]; dup {
			c.strict = append(c.strict, fmt.Sprintf("duplicate field %q", fpath))
			kept[i].val = nil // the last one wins, as in encoding/json
		}
		if top && (mb.key == "kind" || mb.key == "apiVersion") {
			if !isNull(mb.val) {
				if _, err := jsonString(mb.val); err != nil {
					return nil, &TypeError{Value: jsonType(mb.val), Struct: goStructName(m), Field: mb.key, Type: "string"}
				}
			}
			seen[mb.key] = len(kept)
			kept = append(kept, mb)
			continue
		}
		f, owner := lookup(m, mb.key)
		if f == nil {
			c.strict = append(c.strict, fmt.Sprintf("unknown field %q", fpath))
			continue
		}
		out, err := c.value(mb.val, f, owner, fpath, joinPath(goPath, mb.key))
		if err != nil {
			return nil, err
		}
		if f.omitzero && isNull(out) {
			// A zero omitzero field is not written back: a null
			// creationTimestamp, in any ObjectMeta (a Pod template's too),
			// disappears as it does in kube-apiserver 1.37.
			out = nil
		}
		seen[mb.key] = len(kept)
		kept = append(kept, member{key: mb.key, val: out})
	}
	dst = append(dst, '{')
	first := true
	for _, mb := range kept {
		if mb.val == nil {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, mb.key)
		dst = append(dst, ':')
		dst = append(dst, mb.val...)
	}
	return append(dst, '}'), nil
}

// value conforms the value of field f (declared by owner).
func (c *conformer) value(v json.RawMessage, f *field, owner *message, path, goPath string) ([]byte, error) {
	v = bytes.TrimSpace(v)
	if isNull(v) {
		return v, nil // null leaves a Go field at its zero value
	}
	fd := f.desc
	wrong := func(typ string) error {
		return &TypeError{Value: jsonType(v), Struct: goStructName(owner), Field: goPath, Type: typ}
	}
	switch {
	case fd.IsMap():
		ms, ok := members(v)
		if !ok {
			return nil, wrong(goFieldType(f))
		}
		out := []byte{'{'}
		for i, mb := range ms {
			ev, err := c.element(mb.val, f, owner, path+"."+mb.key, goPath)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = appendJSONString(out, mb.key)
			out = append(out, ':')
			out = append(out, ev...)
		}
		return append(out, '}'), nil
	case fd.IsList():
		var arr []json.RawMessage
		if v[0] != '[' || decodeJSON(v, &arr) != nil {
			return nil, wrong(goFieldType(f))
		}
		out := []byte{'['}
		for i, e := range arr {
			ev, err := c.element(e, f, owner, path+"["+strconv.Itoa(i)+"]", goPath)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, ev...)
		}
		return append(out, ']'), nil
	}
	return c.element(v, f, owner, path, goPath)
}

// element conforms one value of f's element type: the field itself, or
// one list item or map value.
func (c *conformer) element(v json.RawMessage, f *field, owner *message, path, goPath string) ([]byte, error) {
	v = bytes.TrimSpace(v)
	if isNull(v) {
		return v, nil
	}
	if f.msg != nil {
		if f.msg.custom == nil && v[0] != '{' {
			return nil, &TypeError{Value: jsonType(v), Struct: goStructName(owner), Field: goPath, Type: goTypeName(f.msg)}
		}
		return c.object(nil, v, f.msg, path, goPath, false)
	}
	fd := f.desc
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Kind() == protoreflect.BytesKind {
		s, err := jsonString(v)
		if err != nil {
			return nil, &TypeError{Value: jsonType(v), Struct: goStructName(owner), Field: goPath, Type: "[]uint8"}
		}
		if _, err := base64.StdEncoding.DecodeString(s); err != nil {
			return nil, err // "illegal base64 data at input byte N", as encoding/json says
		}
		return v, nil
	}
	if _, err := scalar(fd, v); err != nil {
		val := jsonType(v)
		if val == "number" && isNumeric(fd) {
			val += " " + string(v) // encoding/json quotes a number that does not fit
		}
		return nil, &TypeError{Value: val, Struct: goStructName(owner), Field: goPath, Type: goScalarType(fd)}
	}
	return v, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// jsonType names a JSON value's type as encoding/json's errors do.
func jsonType(v json.RawMessage) string {
	switch jsonKind(v) {
	case "a string":
		return "string"
	case "an object":
		return "object"
	case "an array":
		return "array"
	case "a boolean":
		return "bool"
	}
	return "number"
}

func isNumeric(fd protoreflect.FieldDescriptor) bool {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.BoolKind:
		return false
	}
	return true
}

// goStructName is the Go type name of m, which Kubernetes names as its
// protobuf message (ConfigMap, PodSpec, ObjectMeta).
func goStructName(m *message) string { return string(m.desc.Name()) }

// goTypeName is the qualified Go type of m as reflect prints it
// ("v1.PodSpec", "resource.Quantity").
func goTypeName(m *message) string {
	pkg := m.desc.ParentFile().Package()
	if i := strings.LastIndexByte(string(pkg), '.'); i >= 0 {
		pkg = pkg[i+1:]
	}
	return string(pkg) + "." + string(m.desc.Name())
}

// goFieldType is the Go type of a list or map field ("[]string",
// "map[string]string", "[]v1.Container").
func goFieldType(f *field) string {
	elem := func(fd protoreflect.FieldDescriptor) string {
		if f.msg != nil {
			return goTypeName(f.msg)
		}
		if fd.Kind() == protoreflect.BytesKind {
			return "[]uint8"
		}
		return goScalarType(fd)
	}
	if f.desc.IsMap() {
		return "map[string]" + elem(f.desc.MapValue())
	}
	return "[]" + elem(f.desc)
}

func goScalarType(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return "string"
	case protoreflect.BytesKind:
		return "[]uint8"
	case protoreflect.BoolKind:
		return "bool"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return "int32"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "int64"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return "uint32"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "uint64"
	case protoreflect.FloatKind:
		return "float32"
	}
	return "float64"
}

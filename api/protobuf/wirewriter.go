package protobuf

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// JSON straight to protobuf wire bytes, in one pass over the JSON, without
// building a message first: the fast path of Marshal, EncodeObject and the
// streamed LIST.
//
// Kubernetes does not transcode at all: kube-apiserver holds typed Go
// structs, and each kind's generated code (k8s.io/api's generated.pb.go,
// Size and MarshalToSizedBuffer) writes the wire bytes from the struct's
// fields. We hold JSON, so this writer walks the JSON, guided by the
// schema, and writes what the generated code writes for the same object:
// fields in number order, map entries sorted by key, every non-pointer
// field even when zero. fromjson.go says the same thing the plain way
// (fill a dynamicpb message, let protobuf-go marshal it), and the tests
// hold the two to the same bytes (wirewriter_test.go); this file exists
// because the plain way costs hundreds of allocations per object, and
// this one a handful.

// wireWriter writes one object. members is a stack of JSON object members:
// each object being written has its members above its parent's.
type wireWriter struct {
	members []jsonMember
}

// jsonMember is one member of a JSON object: its key (unescaped) and its
// value (raw JSON, never surrounded by space).
type jsonMember struct {
	key, val []byte
}

// appendMarshal appends the protobuf message of m converted from the JSON
// object js. A value of the wrong type is a *FieldError.
func appendMarshal(dst []byte, m *message, js []byte) ([]byte, error) {
	var w wireWriter
	return w.marshal(dst, m, js)
}

// marshal is appendMarshal on w's stack, which it reuses.
func (w *wireWriter) marshal(dst []byte, m *message, js []byte) ([]byte, error) {
	if !json.Valid(js) {
		return nil, &FieldError{Path: ".", Err: fmt.Errorf("expected an object, not %s", jsonKind(js))}
	}
	w.members = w.members[:0]
	out, err := w.message(dst, m, bytes.TrimSpace(js))
	if err != nil {
		return nil, rooted(err)
	}
	return out, nil
}

// maxPooledStack bounds the stacks a Schema keeps for reuse: one huge
// object's stack is left to the garbage collector.
const maxPooledStack = 1024

// appendMarshal is appendMarshal with a writer from the schema's pool, so
// that a server transcoding object after object reuses a few stacks.
func (s *Schema) appendMarshal(dst []byte, m *message, js []byte) ([]byte, error) {
	w, _ := s.writers.Get().(*wireWriter)
	if w == nil {
		w = &wireWriter{}
	}
	out, err := w.marshal(dst, m, js)
	if cap(w.members) <= maxPooledStack {
		clear(w.members[:cap(w.members)]) // keep no JSON alive
		s.writers.Put(w)
	}
	return out, err
}

// prepareWire computes what the writer needs of m once: its fields in
// number order, the bytes of its zero value, its custom writer.
func (m *message) prepareWire() error {
	m.byNumber = slices.Clone(m.fields)
	slices.SortFunc(m.byNumber, func(a, b *field) int { return int(a.desc.Number()) - int(b.desc.Number()) })
	for _, f := range m.fields {
		n := int(f.desc.Number())
		if n >= len(m.byWireNumber) {
			m.byWireNumber = append(m.byWireNumber, make([]*field, n+1-len(m.byWireNumber))...)
		}
		m.byWireNumber[n] = f
		if f.desc.IsPacked() {
			return fmt.Errorf("%s.%s: packed fields are not written", m.desc.FullName(), f.desc.Name())
		}
	}
	pm := dynamicpb.NewMessage(m.desc)
	zeroMessage(pm, m)
	var err error
	m.zero, err = proto.MarshalOptions{Deterministic: true}.Marshal(pm)
	if m.custom != nil {
		m.wire = wireCustom[m.desc.FullName()]
	}
	return err
}

// message appends the fields of m (no tag or length) from v, a JSON value
// that is not null.
func (w *wireWriter) message(dst []byte, m *message, v []byte) ([]byte, error) {
	if m.custom != nil {
		return w.custom(dst, m, v)
	}
	if v[0] != '{' {
		return nil, &FieldError{Err: fmt.Errorf("expected an object, not %s", jsonKind(v))}
	}
	base := len(w.members)
	w.collect(v)
	dst, err := w.fields(dst, m, base, len(w.members))
	w.members = w.members[:base]
	return dst, err
}

// fields appends the fields of m from the members lo to hi of the stack
// (an inline field's message reads the same members).
func (w *wireWriter) fields(dst []byte, m *message, lo, hi int) ([]byte, error) {
	for _, f := range m.byNumber {
		num := f.desc.Number()
		var err error
		if f.inline {
			var at int
			dst, at = openLength(dst, num)
			if dst, err = w.fields(dst, f.msg, lo, hi); err != nil {
				return nil, err
			}
			dst = closeLength(dst, at)
			continue
		}
		v := w.lookup(f.json, lo, hi)
		switch {
		case f.desc.IsMap():
			if v != nil {
				dst, err = w.mapField(dst, f, v)
			}
		case f.desc.IsList():
			if v != nil {
				dst, err = w.listField(dst, f, v)
			}
		case f.msg != nil && v != nil:
			dst, err = w.messageField(dst, num, f.msg, v)
		case f.msg != nil && !f.ptr:
			dst = protowire.AppendTag(dst, num, protowire.BytesType)
			dst = protowire.AppendBytes(dst, f.msg.zero)
		case v != nil:
			dst, err = appendScalar(dst, f.desc, num, v)
		case !f.ptr && f.desc.Kind() != protoreflect.BytesKind:
			// A nil []byte is not written; every other zero is.
			dst = appendZeroScalar(dst, f.desc, num)
		}
		if err != nil {
			return nil, under("."+f.json, err)
		}
	}
	return dst, nil
}

// lookup returns the value of the member named key, the last one if the
// key repeats (as encoding/json keeps the last), or nil when it is absent
// or null.
func (w *wireWriter) lookup(key string, lo, hi int) []byte {
	for i := hi - 1; i >= lo; i-- {
		if string(w.members[i].key) == key {
			if isNullLiteral(w.members[i].val) {
				return nil
			}
			return w.members[i].val
		}
	}
	return nil
}

// messageField appends field num, message m, from v (or m's zero when v is
// null, as a null list element or map value is).
func (w *wireWriter) messageField(dst []byte, num protoreflect.FieldNumber, m *message, v []byte) ([]byte, error) {
	if isNullLiteral(v) {
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return protowire.AppendBytes(dst, m.zero), nil
	}
	dst, at := openLength(dst, num)
	dst, err := w.message(dst, m, v)
	if err != nil {
		return nil, err
	}
	return closeLength(dst, at), nil
}

// value appends field num of fd, a message (m not nil) or a scalar, from
// a list element or map value v; null is the zero value.
func (w *wireWriter) value(dst []byte, fd protoreflect.FieldDescriptor, num protoreflect.FieldNumber, m *message, v []byte) ([]byte, error) {
	switch {
	case m != nil:
		return w.messageField(dst, num, m, v)
	case isNullLiteral(v):
		return appendZeroScalar(dst, fd, num), nil
	}
	return appendScalar(dst, fd, num, v)
}

// mapField appends one entry {key = 1; value = 2} per member of the JSON
// object v, sorted by key (as the generated code and protobuf-go's
// deterministic marshalling sort them); a key given twice keeps its last
// value.
func (w *wireWriter) mapField(dst []byte, f *field, v []byte) ([]byte, error) {
	if v[0] != '{' {
		return nil, &FieldError{Err: fmt.Errorf("expected an object, not %s", jsonKind(v))}
	}
	base := len(w.members)
	w.collect(v)
	slices.SortStableFunc(w.members[base:], func(a, b jsonMember) int { return bytes.Compare(a.key, b.key) })
	vd := f.desc.MapValue()
	for i := base; i < len(w.members); i++ {
		e := w.members[i]
		if i+1 < len(w.members) && bytes.Equal(e.key, w.members[i+1].key) {
			continue
		}
		var at int
		dst, at = openLength(dst, f.desc.Number())
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendBytes(dst, e.key)
		var err error
		if dst, err = w.value(dst, vd, 2, f.msg, e.val); err != nil {
			w.members = w.members[:base]
			return nil, under("."+string(e.key), err)
		}
		dst = closeLength(dst, at)
	}
	w.members = w.members[:base]
	return dst, nil
}

// listField appends the elements of the JSON array v, one field each (no
// Kubernetes field is packed: prepareWire checks).
func (w *wireWriter) listField(dst []byte, f *field, v []byte) ([]byte, error) {
	if v[0] != '[' {
		return nil, &FieldError{Err: fmt.Errorf("expected an array, not %s", jsonKind(v))}
	}
	var err error
	for n, i := 0, skipSpace(v, 1); v[i] != ']'; n++ {
		end := skipValue(v, i)
		if dst, err = w.value(dst, f.desc, f.desc.Number(), f.msg, v[i:end]); err != nil {
			return nil, under("["+strconv.Itoa(n)+"]", err)
		}
		i = skipSpace(v, end)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
	return dst, nil
}

// wireSize is the fixed size of a scalar's value, 0 for a varint.
func wireSize(fd protoreflect.FieldDescriptor) int {
	switch fd.Kind() {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return 4
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return 8
	}
	return 0
}

// custom appends a Kubernetes type with its own JSON form. The types a
// served object is full of have a writer (wireCustom); the rest (a CRD
// schema's Or types) go through their dynamicpb mapping.
func (w *wireWriter) custom(dst []byte, m *message, v []byte) ([]byte, error) {
	if m.wire != nil {
		return m.wire(dst, v)
	}
	pm := dynamicpb.NewMessage(m.desc)
	if err := m.customFromJSON(pm, v, ""); err != nil {
		// Its paths start from "", which pathOrRoot wrote as ".".
		if fe := (*FieldError)(nil); errors.As(err, &fe) && fe.Path == "." {
			fe.Path = ""
		}
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, pm)
}

// openLength appends the tag of a length-delimited field num and a one-byte
// placeholder for its length; closeLength writes the length of what was
// appended after it, moving the bytes when the length needs more than one.
func openLength(dst []byte, num protoreflect.FieldNumber) ([]byte, int) {
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return append(dst, 0), len(dst)
}

func closeLength(dst []byte, at int) []byte {
	n := len(dst) - at - 1
	if n < 0x80 {
		dst[at] = byte(n)
		return dst
	}
	k := protowire.SizeVarint(uint64(n))
	dst = append(dst, make([]byte, k-1)...)
	copy(dst[at+k:], dst[at+1:at+1+n])
	protowire.AppendVarint(dst[:at], uint64(n))
	return dst
}

// under puts a path segment in front of a FieldError's path, or makes a
// plain error a FieldError at the segment.
func under(segment string, err error) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return &FieldError{Path: segment, Err: err}
	}
	fe.Path = segment + fe.Path
	return fe
}

// rooted gives an error at the object itself the path ".".
func rooted(err error) error {
	var fe *FieldError
	if errors.As(err, &fe) && fe.Path == "" {
		fe.Path = "."
	}
	return err
}

// appendScalar appends field num of the scalar fd from the JSON value v
// (not null), with Go's encoding/json rules: strings are strings,
// integers are integer literals in range, bytes are standard base64.
func appendScalar(dst []byte, fd protoreflect.FieldDescriptor, num protoreflect.FieldNumber, v []byte) ([]byte, error) {
	wrong := func(want string) ([]byte, error) {
		return nil, fmt.Errorf("expected %s, not %s", want, jsonKind(v))
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		if v[0] != '"' {
			return wrong("a string")
		}
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return appendStringValue(dst, v)
	case protoreflect.BytesKind:
		if v[0] != '"' {
			return wrong("a base64 string")
		}
		return appendBase64Value(dst, num, v)
	case protoreflect.BoolKind:
		b, ok := boolLiteral(v)
		if !ok {
			return wrong("a boolean")
		}
		dst = protowire.AppendTag(dst, num, protowire.VarintType)
		return protowire.AppendVarint(dst, protowire.EncodeBool(b)), nil
	case protoreflect.DoubleKind, protoreflect.FloatKind:
		return appendFloat(dst, fd, num, v)
	}
	return appendInteger(dst, fd, num, v)
}

// appendInteger appends an integer field from an integer literal.
func appendInteger(dst []byte, fd protoreflect.FieldDescriptor, num protoreflect.FieldNumber, v []byte) ([]byte, error) {
	var (
		bits   = 64
		signed = true
		want   string
	)
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		bits, want = 32, "a 32-bit integer"
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		want = "a 64-bit integer"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		bits, signed, want = 32, false, "an unsigned 32-bit integer"
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		signed, want = false, "an unsigned 64-bit integer"
	default:
		return nil, fmt.Errorf("unsupported protobuf kind %s", fd.Kind())
	}
	n, ok := parseInteger(v, bits, signed)
	if !ok {
		return nil, fmt.Errorf("expected %s, not %s", want, jsonKind(v))
	}
	switch fd.Kind() {
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		dst = protowire.AppendTag(dst, num, protowire.VarintType)
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(int64(n))), nil
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind:
		dst = protowire.AppendTag(dst, num, protowire.Fixed32Type)
		return protowire.AppendFixed32(dst, uint32(n)), nil
	case protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind:
		dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(dst, n), nil
	}
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return protowire.AppendVarint(dst, n), nil
}

// parseInteger reads a JSON integer literal that fits bits (signed or
// not), as strconv.ParseInt and ParseUint would, returning its two's
// complement 64 bits (a negative int32 is sign-extended, as protobuf
// writes it).
func parseInteger(v []byte, bits int, signed bool) (uint64, bool) {
	neg := len(v) > 0 && v[0] == '-'
	digits := v
	if neg {
		digits = v[1:]
	}
	if len(digits) == 0 || len(digits) > 20 {
		return 0, false
	}
	var u uint64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (math.MaxUint64-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	switch {
	case !signed && neg:
		return 0, false // strconv.ParseUint refuses even "-0"
	case !signed:
		return u, bits == 64 || u <= math.MaxUint32
	case neg:
		limit := uint64(1) << (bits - 1)
		return uint64(-int64(u)), u <= limit
	}
	return u, u < uint64(1)<<(bits-1)
}

// appendFloat appends a float or double field from a number literal.
func appendFloat(dst []byte, fd protoreflect.FieldDescriptor, num protoreflect.FieldNumber, v []byte) ([]byte, error) {
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		return nil, fmt.Errorf("expected a number, not %s", jsonKind(v))
	}
	bits := 64
	if fd.Kind() == protoreflect.FloatKind {
		bits = 32
	}
	x, err := strconv.ParseFloat(string(v), bits)
	if err != nil {
		return nil, fmt.Errorf("expected a number in range, not %s", jsonKind(v))
	}
	if bits == 32 {
		dst = protowire.AppendTag(dst, num, protowire.Fixed32Type)
		return protowire.AppendFixed32(dst, math.Float32bits(float32(x))), nil
	}
	dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(dst, math.Float64bits(x)), nil
}

// appendZeroScalar appends field num of fd with its zero value.
func appendZeroScalar(dst []byte, fd protoreflect.FieldDescriptor, num protoreflect.FieldNumber) []byte {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		return append(dst, 0)
	}
	switch wireSize(fd) {
	case 4:
		dst = protowire.AppendTag(dst, num, protowire.Fixed32Type)
		return protowire.AppendFixed32(dst, 0)
	case 8:
		dst = protowire.AppendTag(dst, num, protowire.Fixed64Type)
		return protowire.AppendFixed64(dst, 0)
	}
	dst = protowire.AppendTag(dst, num, protowire.VarintType)
	return append(dst, 0)
}

// appendStringValue appends the length and bytes of the JSON string v.
// A string without escapes is copied as it is; one with escapes or invalid
// UTF-8 is decoded by encoding/json (each invalid byte becomes U+FFFD).
func appendStringValue(dst []byte, v []byte) ([]byte, error) {
	if raw := v[1 : len(v)-1]; bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return protowire.AppendBytes(dst, raw), nil
	}
	s, err := jsonString(v)
	if err != nil {
		return nil, err
	}
	return protowire.AppendString(dst, s), nil
}

// appendBase64Value appends bytes field num from a JSON string of standard
// base64, as encoding/json reads a []byte.
func appendBase64Value(dst []byte, num protoreflect.FieldNumber, v []byte) ([]byte, error) {
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') >= 0 || !utf8.Valid(raw) {
		s, err := jsonString(v)
		if err != nil {
			return nil, err
		}
		raw = []byte(s)
	}
	dst, at := openLength(dst, num)
	dst, err := base64.StdEncoding.AppendDecode(dst, raw)
	if err != nil {
		return nil, fmt.Errorf("illegal base64 data: %w", err)
	}
	return closeLength(dst, at), nil
}

func boolLiteral(v []byte) (value, ok bool) {
	switch string(v) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

func isNullLiteral(v []byte) bool { return string(v) == "null" }

// collect pushes the members of the JSON object v (valid JSON) onto the
// stack, keys unescaped.
func (w *wireWriter) collect(v []byte) {
	for i := skipSpace(v, 1); v[i] != '}'; {
		keyEnd := skipString(v, i)
		key := v[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 || !utf8.Valid(key) {
			s, _ := jsonString(v[i:keyEnd]) // valid JSON: cannot fail
			key = []byte(s)
		}
		i = skipSpace(v, keyEnd)
		i = skipSpace(v, i+1) // the colon
		end := skipValue(v, i)
		w.members = append(w.members, jsonMember{key: key, val: v[i:end]})
		i = skipSpace(v, end)
		if v[i] == ',' {
			i = skipSpace(v, i+1)
		}
	}
}

// The scanners below read JSON already checked by json.Valid.

func skipSpace(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at v[i].
func skipString(v []byte, i int) int {
	for i++; ; i++ {
		switch v[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
}

// skipValue returns the index after the value starting at v[i].
func skipValue(v []byte, i int) int {
	switch v[i] {
	case '"':
		return skipString(v, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch v[i] {
			case '"':
				i = skipString(v, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	// A number, true, false or null runs to the next delimiter.
	for i < len(v) {
		switch v[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

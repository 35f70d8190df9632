package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Protobuf wire bytes straight to JSON, without building a message first:
// the fast path of Unmarshal, for the bodies clients send.
//
// Kubernetes does not transcode: kube-apiserver unmarshals a request body
// into the kind's Go struct with the generated code (k8s.io/api's
// generated.pb.go, Unmarshal), and works on the struct. We keep JSON, so
// this reader reads the fields of each message from the wire and writes
// them in Go struct order with encoding/json's rules, as tojson.go does
// from a dynamicpb message. It reads only the plain form every
// generated marshaller writes (each field once, with its declared wire
// type, nothing unknown, map entries of one key and one value); anything
// else (unknown fields, merged messages, packed repeats, malformed bytes)
// makes it give up, and Unmarshal goes the plain way, whose rules and
// error messages are protobuf-go's. The tests hold the two to the same
// JSON (wirereader_test.go).

// errNotPlain is the reader giving up on a body it does not read.
var errNotPlain = errors.New("not the plain wire form")

// wireValue is one field read from the wire: a varint or fixed value, or
// a length-delimited payload.
type wireValue struct {
	f   *field
	n   uint64
	b   []byte
	typ protowire.Type
}

// wireReader reads one object. values is a stack: each message being
// written has its fields above its parent's.
type wireReader struct {
	values []wireValue
}

// readPlain appends the JSON members of the message m read from b (no
// braces), or returns errNotPlain.
func readPlain(dst []byte, m *message, b []byte) ([]byte, error) {
	var r wireReader
	return r.read(dst, m, b)
}

// read is readPlain on r's stack, which it reuses.
func (r *wireReader) read(dst []byte, m *message, b []byte) ([]byte, error) {
	r.values = r.values[:0]
	first := false
	return r.fields(dst, m, b, &first)
}

// readPlain is readPlain with a reader from the schema's pool.
func (s *Schema) readPlain(dst []byte, m *message, b []byte) ([]byte, error) {
	r, _ := s.readers.Get().(*wireReader)
	if r == nil {
		r = &wireReader{}
	}
	out, err := r.read(dst, m, b)
	if cap(r.values) <= maxPooledStack {
		clear(r.values[:cap(r.values)]) // keep no body alive
		s.readers.Put(r)
	}
	return out, err
}

// scan pushes the fields of the message m in b onto the stack.
func (r *wireReader) scan(m *message, b []byte) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || int(num) >= len(m.byWireNumber) || m.byWireNumber[num] == nil {
			return errNotPlain
		}
		f := m.byWireNumber[num]
		b = b[n:]
		v := wireValue{f: f, typ: typ}
		switch {
		case typ != wireTypeOf(f.desc):
			return errNotPlain
		case typ == protowire.BytesType:
			v.b, n = protowire.ConsumeBytes(b)
		case typ == protowire.VarintType:
			v.n, n = protowire.ConsumeVarint(b)
		case typ == protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v.n = uint64(x)
		default:
			v.n, n = protowire.ConsumeFixed64(b)
		}
		if n < 0 {
			return errNotPlain
		}
		b = b[n:]
		r.values = append(r.values, v)
	}
	return nil
}

// wireTypeOf is the wire type the generated code writes a field with.
func wireTypeOf(fd protoreflect.FieldDescriptor) protowire.Type {
	switch {
	case fd.IsMap(), fd.Message() != nil:
		return protowire.BytesType
	}
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return protowire.BytesType
	}
	switch wireSize(fd) {
	case 4:
		return protowire.Fixed32Type
	case 8:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// fields appends the JSON members of m read from b, in Go struct order
// (first: no member written yet, for inline messages).
func (r *wireReader) fields(dst []byte, m *message, b []byte, first *bool) ([]byte, error) {
	base := len(r.values)
	defer func() { r.values = r.values[:base] }()
	if err := r.scan(m, b); err != nil {
		return nil, err
	}
	hi := len(r.values)
	var err error
	for _, f := range m.fields {
		count, last := r.find(f, base, hi)
		if f.inline {
			if count > 1 {
				return nil, errNotPlain
			}
			if dst, err = r.fields(dst, f.msg, r.payload(last), first); err != nil {
				return nil, err
			}
			continue
		}
		if f.desc.IsList() || f.desc.IsMap() {
			if f.omitempty && count == 0 {
				continue
			}
			dst = appendKey(dst, f.json, first)
			switch {
			case count == 0:
				dst = append(dst, "null"...)
			case f.desc.IsMap():
				dst, err = r.mapValue(dst, f, base, hi, count)
			default:
				dst, err = r.listValue(dst, f, base, hi)
			}
		} else {
			if count > 1 {
				return nil, errNotPlain
			}
			dst, err = r.singular(dst, f, r.at(last), first)
		}
		if err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// find counts the values of f among the stack's lo to hi, and gives the
// index of the last (-1 for none).
func (r *wireReader) find(f *field, lo, hi int) (count, last int) {
	last = -1
	for i := lo; i < hi; i++ {
		if r.values[i].f == f {
			count, last = count+1, i
		}
	}
	return count, last
}

func (r *wireReader) at(i int) *wireValue {
	if i < 0 {
		return nil
	}
	return &r.values[i]
}

func (r *wireReader) payload(i int) []byte {
	if i < 0 {
		return nil
	}
	return r.values[i].b
}

func appendKey(dst []byte, name string, first *bool) []byte {
	if !*first {
		dst = append(dst, ',')
	}
	*first = false
	dst = appendJSONString(dst, name)
	return append(dst, ':')
}

// singular appends a field that is not a list or a map (v nil: absent),
// with tojson.go's appendFields rules: a pointer or []byte absent is null
// (or left out with omitempty), omitempty leaves out a zero scalar,
// omitzero a zero time.
func (r *wireReader) singular(dst []byte, f *field, v *wireValue, first *bool) ([]byte, error) {
	var b []byte
	var n uint64
	has := v != nil
	if has {
		b, n = v.b, v.n
	}
	if has && (f.ptr || f.omitzero) && f.msg != nil && f.msg.custom != nil {
		// A zero Time, pointer or omitzero, is none (tojson.go says why).
		has = !r.customIsNull(f.msg, b)
	}
	if f.omitzero && !has {
		return dst, nil
	}
	isNil := (f.ptr || f.desc.Kind() == protoreflect.BytesKind) && !has
	switch {
	case isNil && f.omitempty:
		return dst, nil
	case isNil:
		return append(appendKey(dst, f.json, first), "null"...), nil
	case f.omitempty && f.msg == nil && !f.ptr && r.isZero(f.desc, b, n):
		return dst, nil
	}
	dst = appendKey(dst, f.json, first)
	return r.value(dst, f.desc, f.msg, b, n)
}

// isZero is encoding/json's "empty" for a scalar read as b or n.
func (r *wireReader) isZero(fd protoreflect.FieldDescriptor, b []byte, n uint64) bool {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		return len(b) == 0
	}
	return isZero(fd, scalarValue(fd, n))
}

// value appends one value: a message (m not nil) read from b, or a
// scalar read as b (strings, bytes) or n.
func (r *wireReader) value(dst []byte, fd protoreflect.FieldDescriptor, m *message, b []byte, n uint64) ([]byte, error) {
	if m != nil {
		if m.custom != nil {
			return r.custom(dst, m, b)
		}
		first := true
		dst = append(dst, '{')
		dst, err := r.fields(dst, m, b, &first)
		if err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	}
	switch fd.Kind() {
	case protoreflect.StringKind:
		return appendJSONBytes(dst, b), nil
	case protoreflect.BytesKind:
		return appendValue(dst, fd, nil, protoreflect.ValueOfBytes(b))
	}
	return appendValue(dst, fd, nil, scalarValue(fd, n))
}

// scalarValue is the Value of a varint or fixed scalar read as n, as
// protobuf-go decodes it (an int32 sent as a wider varint is truncated).
func scalarValue(fd protoreflect.FieldDescriptor, n uint64) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(n != 0)
	case protoreflect.Int32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Sint32Kind:
		return protoreflect.ValueOfInt32(int32(protowire.DecodeZigZag(n & math.MaxUint32)))
	case protoreflect.Sint64Kind:
		return protoreflect.ValueOfInt64(protowire.DecodeZigZag(n))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(n)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(math.Float32frombits(uint32(n)))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(math.Float64frombits(n))
	}
	return protoreflect.ValueOfInt64(int64(n))
}

// listValue appends the elements of list field f, in wire order.
func (r *wireReader) listValue(dst []byte, f *field, lo, hi int) ([]byte, error) {
	dst = append(dst, '[')
	n := 0
	var err error
	for i := lo; i < hi; i++ {
		if r.values[i].f != f {
			continue
		}
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		v := r.values[i]
		if dst, err = r.value(dst, f.desc, f.msg, v.b, v.n); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// mapEntry is one map entry read from the wire.
type mapEntry struct {
	key, b []byte
	n      uint64
}

// mapValue appends map field f as a JSON object, keys sorted; a key sent
// twice keeps its last value.
func (r *wireReader) mapValue(dst []byte, f *field, lo, hi, count int) ([]byte, error) {
	var stack [16]mapEntry
	entries := stack[:0]
	if count > len(stack) {
		entries = make([]mapEntry, 0, count)
	}
	vd := f.desc.MapValue()
	for i := lo; i < hi; i++ {
		if r.values[i].f != f {
			continue
		}
		e, err := readEntry(r.values[i].b, vd)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	slices.SortStableFunc(entries, func(a, b mapEntry) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst, '{')
	n := 0
	var err error
	for i, e := range entries {
		if i+1 < len(entries) && bytes.Equal(entries[i+1].key, e.key) {
			continue
		}
		if n++; n > 1 {
			dst = append(dst, ',')
		}
		dst = appendJSONBytes(dst, e.key)
		dst = append(dst, ':')
		if dst, err = r.value(dst, vd, f.msg, e.b, e.n); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// readEntry reads a map entry {string key = 1; value = 2}, each exactly
// once with its declared wire type.
func readEntry(b []byte, vd protoreflect.FieldDescriptor) (mapEntry, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != 1 || typ != protowire.BytesType {
		return mapEntry{}, errNotPlain
	}
	key, m := protowire.ConsumeBytes(b[n:])
	if m < 0 {
		return mapEntry{}, errNotPlain
	}
	b = b[n+m:]
	num, typ, n = protowire.ConsumeTag(b)
	if n < 0 || num != 2 || typ != wireTypeOf(vd) {
		return mapEntry{}, errNotPlain
	}
	e := mapEntry{key: key}
	b = b[n:]
	switch typ {
	case protowire.BytesType:
		e.b, m = protowire.ConsumeBytes(b)
	case protowire.VarintType:
		e.n, m = protowire.ConsumeVarint(b)
	default:
		return mapEntry{}, errNotPlain
	}
	if m < 0 || m != len(b) {
		return mapEntry{}, errNotPlain
	}
	return e, nil
}

// custom appends a Kubernetes type with its own JSON form from its
// message's bytes b, by kubetypes.go's toJSON rules: the common ones read
// here, the rest through their dynamicpb mapping.
func (r *wireReader) custom(dst []byte, m *message, b []byte) ([]byte, error) {
	switch name := m.desc.FullName(); name {
	case timeName, metaV1 + "MicroTime":
		layout, precision := time.RFC3339, time.Second
		if name != timeName {
			layout, precision = rfc3339Micro, time.Microsecond
		}
		t, null, err := readTimestamp(b, precision)
		if err != nil {
			return nil, err
		}
		if null {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '"')
		dst = t.AppendFormat(dst, layout)
		return append(dst, '"'), nil
	case metaV1 + "FieldsV1", "k8s.io.apimachinery.pkg.runtime.RawExtension", apiextensionsV1 + "JSON":
		f, err := readFlat(b, protowire.BytesType)
		switch {
		case err != nil:
			return nil, err
		case !f.has[0]:
			return append(dst, "null"...), nil
		case !json.Valid(f.bytes[0]):
			return nil, fmt.Errorf("%s holds %d bytes that are not JSON", m.desc.Name(), len(f.bytes[0]))
		}
		return append(dst, f.bytes[0]...), nil
	case "k8s.io.apimachinery.pkg.api.resource.Quantity":
		f, err := readFlat(b, protowire.BytesType)
		switch {
		case err != nil:
			return nil, err
		case len(f.bytes[0]) == 0:
			return append(dst, `"0"`...), nil
		}
		return appendJSONBytes(dst, f.bytes[0]), nil
	case "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
		f, err := readFlat(b, protowire.VarintType, protowire.VarintType, protowire.BytesType)
		switch {
		case err != nil:
			return nil, err
		case int64(f.n[0]) == 1:
			return appendJSONBytes(dst, f.bytes[2]), nil
		}
		return strconv.AppendInt(dst, int64(int32(f.n[1])), 10), nil
	}
	pm := dynamicpb.NewMessage(m.desc)
	if err := unmarshal(b, pm); err != nil {
		return nil, errNotPlain
	}
	return m.customToJSON(dst, pm)
}

// customIsNull reports whether the JSON of the custom type m read from b
// is null, without writing it where that is known.
func (r *wireReader) customIsNull(m *message, b []byte) bool {
	switch m.desc.FullName() {
	case timeName:
		_, null, err := readTimestamp(b, time.Second)
		return err == nil && null
	case metaV1 + "MicroTime":
		_, null, err := readTimestamp(b, time.Microsecond)
		return err == nil && null
	case "k8s.io.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
		return false
	}
	out, err := r.custom(nil, m, b)
	return err == nil && string(out) == "null"
}

// readTimestamp reads a Time or MicroTime {int64 seconds = 1; int32 nanos
// = 2}: null when neither is sent or the time is Go's zero time, as
// timestampToJSON.
func readTimestamp(b []byte, precision time.Duration) (t time.Time, null bool, err error) {
	f, err := readFlat(b, protowire.VarintType, protowire.VarintType)
	if err != nil {
		return t, false, err
	}
	if !f.has[0] && !f.has[1] {
		return t, true, nil
	}
	ns := int64(0)
	if precision < time.Second {
		ns = int64(time.Duration(int32(f.n[1])).Truncate(precision))
	}
	t = time.Unix(int64(f.n[0]), ns).UTC()
	return t, t.IsZero(), nil
}

// flatMessage is a small message of scalar fields 1 to 4 read by readFlat.
type flatMessage struct {
	n     [4]uint64
	bytes [4][]byte
	has   [4]bool
}

// readFlat reads a message whose fields 1, 2, ... have the given wire
// types (varint or length-delimited), each sent at most once.
func readFlat(b []byte, types ...protowire.Type) (flatMessage, error) {
	var f flatMessage
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || num < 1 || int(num) > len(types) || typ != types[num-1] || f.has[num-1] {
			return f, errNotPlain
		}
		var m int
		if typ == protowire.BytesType {
			f.bytes[num-1], m = protowire.ConsumeBytes(b[k:])
		} else {
			f.n[num-1], m = protowire.ConsumeVarint(b[k:])
		}
		if m < 0 {
			return f, errNotPlain
		}
		f.has[num-1] = true
		b = b[k+m:]
	}
	return f, nil
}

// appendJSONBytes is appendJSONString of b, read in place.
func appendJSONBytes(dst, b []byte) []byte {
	return appendJSONString(dst, unsafe.String(unsafe.SliceData(b), len(b)))
}

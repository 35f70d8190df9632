package negotiation

import (
	"errors"
	"fmt"
)

// The protocol buffers wire format, just enough of it to read the bodies
// kubectl's create generators send (see protobuf_decode.go). A message is a
// sequence of fields; each starts with a varint tag, field number << 3 |
// wire type, and the wire type says how long the value is:
//
//	0 varint            1..10 bytes, 7 bits each, low group first
//	1 fixed64           8 bytes
//	2 length-delimited  a varint length, then that many bytes
//	                    (strings, bytes, embedded messages, map entries)
//	3 start group       fields up to the matching end group (deprecated)
//	4 end group
//	5 fixed32           4 bytes
//
// Every read checks its bounds first: the input is whatever a client sent.
// This mirrors what gogo/protobuf generates for Kubernetes' types
// (generated.pb.go, its skipGenerated function) and google.golang.org/
// protobuf's protowire package; we need no library for so little.

// wireType is the low three bits of a field's tag.
type wireType uint8

const (
	wireVarint     wireType = 0
	wireFixed64    wireType = 1
	wireBytes      wireType = 2
	wireStartGroup wireType = 3
	wireEndGroup   wireType = 4
	wireFixed32    wireType = 5
)

// maxFieldNumber is the largest field number protobuf allows (2^29-1).
const maxFieldNumber = 1<<29 - 1

// Errors for malformed input; each is wrapped with where it happened.
var (
	// errTruncated: a value runs past the end of its message.
	errTruncated = errors.New("unexpected end of data")
	// errVarintOverflow: a varint longer than 64 bits.
	errVarintOverflow = errors.New("varint overflows 64 bits")
	// errBadTag: field number 0 or too large, or wire type 6 or 7.
	errBadTag = errors.New("invalid field tag")
	// errGroupMismatch: an end group without its start group, or the reverse.
	errGroupMismatch = errors.New("unmatched group")
	// errWrongWireType: a known field sent with a wire type it cannot have.
	errWrongWireType = errors.New("wrong wire type")
)

// wireReader reads one message's fields from buf. The zero value reads an
// empty message.
type wireReader struct {
	buf []byte
	pos int
}

// done reports whether every field has been read.
func (r *wireReader) done() bool { return r.pos >= len(r.buf) }

// next reads a field's tag.
func (r *wireReader) next() (field int32, wt wireType, err error) {
	tag, err := r.varint()
	if err != nil {
		return 0, 0, err
	}
	num, wt := tag>>3, wireType(tag&7)
	if num == 0 || num > maxFieldNumber || wt > wireFixed32 {
		return 0, 0, fmt.Errorf("%w: field %d, wire type %d", errBadTag, num, wt)
	}
	return int32(num), wt, nil
}

// varint reads a base-128 varint. Like protowire, a tenth byte may only
// carry the 64th bit.
func (r *wireReader) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 10; i++ {
		if r.pos >= len(r.buf) {
			return 0, errTruncated
		}
		b := r.buf[r.pos]
		r.pos++
		if i == 9 && b > 1 {
			return 0, errVarintOverflow
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			return v, nil
		}
	}
	return 0, errVarintOverflow
}

// bytes reads a length-delimited value. The result aliases the input.
func (r *wireReader) bytes() ([]byte, error) {
	n, err := r.varint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.buf)-r.pos) {
		return nil, errTruncated
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// skip passes over the value of a field we do not read, of any wire type.
// A group is skipped to its matching end, counting nested groups instead of
// recursing so that deep nesting cannot exhaust the stack.
func (r *wireReader) skip(field int32, wt wireType) error {
	depth := 0
	for {
		switch wt {
		case wireVarint:
			if _, err := r.varint(); err != nil {
				return err
			}
		case wireFixed64:
			if err := r.advance(8); err != nil {
				return err
			}
		case wireFixed32:
			if err := r.advance(4); err != nil {
				return err
			}
		case wireBytes:
			if _, err := r.bytes(); err != nil {
				return err
			}
		case wireStartGroup:
			depth++
		case wireEndGroup:
			depth--
			if depth < 0 {
				return fmt.Errorf("%w: end group for field %d", errGroupMismatch, field)
			}
		}
		if depth == 0 {
			return nil
		}
		if r.done() {
			return fmt.Errorf("%w: group for field %d never ends", errGroupMismatch, field)
		}
		var err error
		if _, wt, err = r.next(); err != nil {
			return err
		}
	}
}

// advance skips n bytes.
func (r *wireReader) advance(n int) error {
	if n > len(r.buf)-r.pos {
		return errTruncated
	}
	r.pos += n
	return nil
}

// Typed reads: each checks the wire type the schema gives the field, as
// gogo's generated code does.

func (r *wireReader) readVarint(name string, wt wireType) (uint64, error) {
	if wt != wireVarint {
		return 0, fmt.Errorf("%s: %w %d", name, errWrongWireType, wt)
	}
	v, err := r.varint()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

func (r *wireReader) readBytes(name string, wt wireType) ([]byte, error) {
	if wt != wireBytes {
		return nil, fmt.Errorf("%s: %w %d", name, errWrongWireType, wt)
	}
	b, err := r.bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

func (r *wireReader) readString(name string, wt wireType) (string, error) {
	b, err := r.readBytes(name, wt)
	return string(b), err
}

func (r *wireReader) readBool(name string, wt wireType) (bool, error) {
	v, err := r.readVarint(name, wt)
	return v != 0, err
}

func (r *wireReader) readInt64(name string, wt wireType) (int64, error) {
	v, err := r.readVarint(name, wt)
	return int64(v), err
}

// eachField calls fn for every field of msg; fn reads the value of the
// fields it knows (through r) and returns handled=false for the rest, which
// are skipped, whatever their wire type: a newer client may send fields
// this server has never heard of, and protobuf's rule is to ignore them.
func eachField(msg []byte, fn func(r *wireReader, field int32, wt wireType) (handled bool, err error)) error {
	r := &wireReader{buf: msg}
	for !r.done() {
		field, wt, err := r.next()
		if err != nil {
			return err
		}
		if wt == wireEndGroup {
			return fmt.Errorf("%w: end group for field %d", errGroupMismatch, field)
		}
		handled, err := fn(r, field, wt)
		if err != nil {
			return err
		}
		if !handled {
			if err := r.skip(field, wt); err != nil {
				return fmt.Errorf("skipping field %d: %w", field, err)
			}
		}
	}
	return nil
}

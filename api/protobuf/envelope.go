package protobuf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// ContentType is Kubernetes' protobuf media type; a protobuf watch answers
// with WatchContentType.
const (
	ContentType      = "application/vnd.kubernetes.protobuf"
	WatchContentType = ContentType + ";stream=watch"
)

// Magic starts every Kubernetes protobuf body ("k8s" and a zero byte).
var Magic = []byte("k8s\x00")

// Envelope is a decoded body: the runtime.Unknown around an object.
//
//	Unknown  { TypeMeta typeMeta = 1; bytes raw = 2; string contentEncoding = 3; string contentType = 4 }
//	TypeMeta { string apiVersion = 1; string kind = 2 }
type Envelope struct {
	APIVersion, Kind string
	// Raw is the object's own message.
	Raw []byte
}

// Errors of DecodeEnvelope, worded as Kubernetes' protobuf serializer
// words them.
var (
	ErrNotProtobuf   = errors.New(`provided data does not appear to be a protobuf message, expected prefix "k8s\x00"`)
	ErrEmptyProtobuf = errors.New("empty body")
)

const runtimePkg = "k8s.io.apimachinery.pkg.runtime."

func (s *Schema) messageDesc(name protoreflect.FullName) protoreflect.MessageDescriptor {
	d, err := s.files.FindDescriptorByName(name)
	if err != nil {
		panic(fmt.Sprintf("protobuf: %s missing from the descriptor set: %v", name, err))
	}
	return d.(protoreflect.MessageDescriptor)
}

// AppendEnvelope appends the magic and the runtime.Unknown around raw. The
// empty contentEncoding and contentType are written, as the real server
// writes them (the recordings end 1a 00 22 00).
func (s *Schema) AppendEnvelope(dst []byte, apiVersion, kind string, raw []byte) []byte {
	dst = appendEnvelopeHead(dst, apiVersion, kind, len(raw))
	dst = append(dst, raw...)
	return appendEnvelopeTail(dst)
}

// appendEnvelopeHead appends the magic and the runtime.Unknown up to its
// raw field's bytes, which are rawSize long and follow. The fields are in
// number order, as Kubernetes' generated Marshal writes them; TypeMeta's
// two strings are written even when empty.
func appendEnvelopeHead(dst []byte, apiVersion, kind string, rawSize int) []byte {
	dst = append(dst, Magic...)
	tmSize := 2 + protowire.SizeBytes(len(apiVersion)) + protowire.SizeBytes(len(kind))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(tmSize))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendString(dst, apiVersion)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendString(dst, kind)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	return protowire.AppendVarint(dst, uint64(rawSize))
}

// appendEnvelopeTail appends what follows raw: the empty contentEncoding
// (field 3) and contentType (field 4).
func appendEnvelopeTail(dst []byte) []byte {
	return append(dst, 3<<3|byte(protowire.BytesType), 0, 4<<3|byte(protowire.BytesType), 0)
}

// DecodeEnvelope checks the magic and reads the runtime.Unknown.
// contentEncoding and contentType are ignored, as Kubernetes ignores them
// when it decodes a request.
func (s *Schema) DecodeEnvelope(body []byte) (Envelope, error) {
	switch {
	case len(body) == 0 || bytes.Equal(body, Magic):
		return Envelope{}, ErrEmptyProtobuf
	case !bytes.HasPrefix(body, Magic):
		return Envelope{}, ErrNotProtobuf
	}
	if env, ok := decodePlainEnvelope(body[len(Magic):]); ok {
		return env, nil
	}
	return s.decodeEnvelopeDynamic(body[len(Magic):])
}

// decodeEnvelopeDynamic reads the runtime.Unknown b the plain way, through
// a dynamicpb message, with protobuf-go's rules and errors.
func (s *Schema) decodeEnvelopeDynamic(b []byte) (Envelope, error) {
	u := dynamicpb.NewMessage(s.messageDesc(runtimePkg + "Unknown"))
	if err := unmarshal(b, u); err != nil {
		return Envelope{}, err
	}
	tm := u.Get(fieldByNumber(u, 1)).Message()
	return Envelope{
		APIVersion: tm.Get(fieldByNumber(tm, 1)).String(),
		Kind:       tm.Get(fieldByNumber(tm, 2)).String(),
		Raw:        u.Get(fieldByNumber(u, 2)).Bytes(),
	}, nil
}

// decodePlainEnvelope reads a runtime.Unknown in the plain form the
// generated code writes (each field once, nothing unknown) without a
// dynamicpb message, as the wire reader reads objects; ok is false for any
// other form, which DecodeEnvelope reads the plain way.
func decodePlainEnvelope(b []byte) (env Envelope, ok bool) {
	u, err := readFlat(b, protowire.BytesType, protowire.BytesType, protowire.BytesType, protowire.BytesType)
	if err != nil {
		return Envelope{}, false
	}
	tm, err := readFlat(u.bytes[0], protowire.BytesType, protowire.BytesType)
	if err != nil {
		return Envelope{}, false
	}
	// Raw is a copy, as protobuf-go's is: the body may be reused.
	return Envelope{APIVersion: string(tm.bytes[0]), Kind: string(tm.bytes[1]), Raw: bytes.Clone(u.bytes[1])}, true
}

// EncodeObject converts a JSON object of apiVersion/kind into a complete
// protobuf body: magic, envelope, message.
func (s *Schema) EncodeObject(apiVersion, kind string, js []byte) ([]byte, error) {
	m, err := s.kind(apiVersion, kind)
	if err != nil {
		return nil, err
	}
	// The message is written straight after the envelope's head, whose
	// last byte is the placeholder of raw's length (0).
	dst := appendEnvelopeHead(make([]byte, 0, len(js)+len(apiVersion)+len(kind)+32), apiVersion, kind, 0)
	at := len(dst) - 1
	if dst, err = s.appendMarshal(dst, m, js); err != nil {
		return nil, err
	}
	return appendEnvelopeTail(closeLength(dst, at)), nil
}

// DecodeObject converts a complete protobuf body into the object's JSON.
// An envelope without apiVersion or kind takes the given defaults (the
// path's, as Kubernetes' decoder does).
func (s *Schema) DecodeObject(body []byte, defaultAPIVersion, defaultKind string) (Envelope, []byte, error) {
	env, err := s.DecodeEnvelope(body)
	if err != nil {
		return env, nil, err
	}
	if env.APIVersion == "" {
		env.APIVersion = defaultAPIVersion
	}
	if env.Kind == "" {
		env.Kind = defaultKind
	}
	js, err := s.Unmarshal(env.APIVersion, env.Kind, env.Raw)
	return env, js, err
}

// AppendWatchFrame appends one protobuf watch frame: a 4-byte big-endian
// length, then the bare meta/v1 WatchEvent {string type = 1; RawExtension
// object = 2 {bytes raw = 1}} whose raw is object, the object's complete
// body (magic and envelope included).
func (s *Schema) AppendWatchFrame(dst []byte, eventType string, object []byte) []byte {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendString(dst, eventType)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(protowire.SizeTag(1)+protowire.SizeBytes(len(object))))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendBytes(dst, object)
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// WatchEvent is one decoded protobuf watch frame.
type WatchEvent struct {
	Type string
	// Object is the event object's complete body (magic and envelope).
	Object []byte
}

// MaxFrameSize bounds one watch frame, as client-go's length-delimited
// reader bounds it.
const MaxFrameSize = 16 << 20

// ReadWatchFrame reads one frame from r. io.EOF means the stream ended
// cleanly between frames.
func (s *Schema) ReadWatchFrame(r io.Reader) (WatchEvent, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return WatchEvent{}, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > MaxFrameSize {
		return WatchEvent{}, fmt.Errorf("watch frame of %d bytes is larger than %d", size, MaxFrameSize)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return WatchEvent{}, fmt.Errorf("watch frame: %w", io.ErrUnexpectedEOF)
	}
	ev := dynamicpb.NewMessage(s.messageDesc(metaPackage + ".WatchEvent"))
	if err := unmarshal(buf, ev); err != nil {
		return WatchEvent{}, fmt.Errorf("watch frame: %w", err)
	}
	obj := ev.Get(fieldByNumber(ev, 2)).Message()
	return WatchEvent{Type: ev.Get(fieldByNumber(ev, 1)).String(), Object: obj.Get(fieldByNumber(obj, 1)).Bytes()}, nil
}

// unmarshal decodes b into m. protobuf-go v1.36 panics on one malformed
// map entry (a key field given twice, the second time with the wrong wire
// type: "cannot convert nil to map key"); a request body must never crash
// the server, so a panic is turned into an error here.
func unmarshal(b []byte, m protoreflect.Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("malformed protobuf: %v", r)
		}
	}()
	if err := (proto.UnmarshalOptions{}).Unmarshal(b, m.Interface()); err != nil {
		return err
	}
	return checkWireTypes(m)
}

// checkWireTypes walks a decoded message and refuses a field sent with the
// wrong wire type (a string where a varint belongs, ...). protobuf-go keeps
// such a field as unknown, as the protobuf spec allows; Kubernetes'
// generated decoders refuse it ("proto: wrong wireType"), and so do we, so
// that a mistyped field is a 400, not a silently missing value.
func checkWireTypes(m protoreflect.Message) error {
	fields := m.Descriptor().Fields()
	for b := m.GetUnknown(); len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if fd := fields.ByNumber(num); fd != nil {
			return fmt.Errorf("%s.%s: wrong wire type %d", m.Descriptor().Name(), fd.Name(), typ)
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if fd.MapValue().Message() != nil {
				v.Map().Range(func(_ protoreflect.MapKey, mv protoreflect.Value) bool {
					err = checkWireTypes(mv.Message())
					return err == nil
				})
			}
		case fd.IsList():
			if fd.Message() != nil {
				for i := range v.List().Len() {
					if err = checkWireTypes(v.List().Get(i).Message()); err != nil {
						break
					}
				}
			}
		case fd.Message() != nil:
			err = checkWireTypes(v.Message())
		}
		return err == nil
	})
	return err
}

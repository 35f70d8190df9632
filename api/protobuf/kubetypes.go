package protobuf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// The Kubernetes types whose JSON is not their protobuf message's shape.
// Each one's Go type has its own MarshalJSON/UnmarshalJSON in
// k8s.io/apimachinery; these are the same rules, written against the
// protobuf message. tools/protogen lists every such type it meets ("custom"
// lines in fields.txt) and NewSchema refuses a table naming one that has no
// mapping here.

// customType is the JSON mapping of one such message.
type customType struct {
	// fromJSON fills the empty message m from a JSON value that is not null.
	fromJSON func(m protoreflect.Message, v json.RawMessage) error
	// toJSON appends the JSON of m.
	toJSON func(dst []byte, m protoreflect.Message) ([]byte, error)
	// zero fills m as Kubernetes writes the type's zero value where the Go
	// field is not a pointer; nil means an empty message.
	zero func(m protoreflect.Message)
	// wraps names the ordinary message this type holds (JSONSchemaProps);
	// a type with wraps converts through fromJSONIn and toJSONIn, which
	// are handed that message's schema, instead of fromJSON and toJSON.
	wraps      protoreflect.FullName
	fromJSONIn func(m protoreflect.Message, v json.RawMessage, inner *message, path string) error
	toJSONIn   func(dst []byte, m protoreflect.Message, inner *message) ([]byte, error)
}

// customFromJSON fills pm, a message of the custom type m, from v.
func (m *message) customFromJSON(pm protoreflect.Message, v json.RawMessage, path string) error {
	if m.custom.fromJSONIn != nil {
		return m.custom.fromJSONIn(pm, v, m.inner, path)
	}
	return m.custom.fromJSON(pm, v)
}

// customToJSON appends the JSON of pm, a message of the custom type m.
func (m *message) customToJSON(dst []byte, pm protoreflect.Message) ([]byte, error) {
	if m.custom.toJSONIn != nil {
		return m.custom.toJSONIn(dst, pm, m.inner)
	}
	return m.custom.toJSON(dst, pm)
}

const (
	metaV1   = "k8s.io.apimachinery.pkg.apis.meta.v1."
	timeName = metaV1 + "Time"
)

// customTypes maps each message to its mapping. It is never modified.
var customTypes = map[protoreflect.FullName]*customType{
	// meta/v1 Time: RFC 3339 in UTC, whole seconds; the zero time is null
	// in JSON and an empty message in protobuf. Its protobuf is Timestamp
	// {int64 seconds = 1; int32 nanos = 2}, and Kubernetes writes nanos 0
	// whatever the time (JSON has only seconds).
	timeName: {
		fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
			return timestampFromJSON(m, v, time.RFC3339, time.Second)
		},
		toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
			return timestampToJSON(dst, m, time.RFC3339, time.Second), nil
		},
	},
	// meta/v1 MicroTime: the same with microseconds.
	metaV1 + "MicroTime": {
		fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
			return timestampFromJSON(m, v, rfc3339Micro, time.Microsecond)
		},
		toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
			return timestampToJSON(dst, m, rfc3339Micro, time.Microsecond), nil
		},
	},
	// meta/v1 Duration: Go's duration string ("1h2m0s"); protobuf
	// {int64 duration = 1} in nanoseconds.
	metaV1 + "Duration": {
		fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
			s, err := jsonString(v)
			if err != nil {
				return err
			}
			d, err := time.ParseDuration(s)
			if err != nil {
				return err
			}
			m.Set(fieldByNumber(m, 1), protoreflect.ValueOfInt64(int64(d)))
			return nil
		},
		toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
			return appendJSONString(dst, time.Duration(m.Get(fieldByNumber(m, 1)).Int()).String()), nil
		},
		zero: func(m protoreflect.Message) { m.Set(fieldByNumber(m, 1), protoreflect.ValueOfInt64(0)) },
	},
	// resource.Quantity: a JSON string ("100m", "1Gi"), or a bare number,
	// which Kubernetes also accepts; protobuf {string string = 1}. The real
	// server rewrites a quantity into canonical form ("0.1" becomes "100m");
	// this mapping keeps the text it is given.
	"k8s.io.apimachinery.pkg.api.resource.Quantity": {
		fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
			s, err := jsonString(v)
			if err != nil {
				var n json.Number
				if json.Unmarshal(v, &n) != nil {
					return fmt.Errorf("quantity must be a string or a number, not %s", jsonKind(v))
				}
				s = n.String()
			}
			if s == "" {
				return fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
			}
			m.Set(fieldByNumber(m, 1), protoreflect.ValueOfString(s))
			return nil
		},
		toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
			s := m.Get(fieldByNumber(m, 1)).String()
			if s == "" {
				s = "0"
			}
			return appendJSONString(dst, s), nil
		},
		zero: func(m protoreflect.Message) { m.Set(fieldByNumber(m, 1), protoreflect.ValueOfString("0")) },
	},
	// intstr.IntOrString: a JSON number or string; protobuf {int64 type = 1
	// (0 int, 1 string); int32 intVal = 2; string strVal = 3}, all three
	// always written.
	"k8s.io.apimachinery.pkg.util.intstr.IntOrString": {
		fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
			typ, iv, sv := int64(0), int64(0), ""
			if s, err := jsonString(v); err == nil {
				typ, sv = 1, s
			} else {
				n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 32)
				if err != nil {
					return fmt.Errorf("an int or a string is required, not %s", jsonKind(v))
				}
				iv = n
			}
			setIntOrString(m, typ, int32(iv), sv)
			return nil
		},
		toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
			if m.Get(fieldByNumber(m, 1)).Int() == 1 {
				return appendJSONString(dst, m.Get(fieldByNumber(m, 3)).String()), nil
			}
			return strconv.AppendInt(dst, m.Get(fieldByNumber(m, 2)).Int(), 10), nil
		},
		zero: func(m protoreflect.Message) { setIntOrString(m, 0, 0, "") },
	},
	// runtime.RawExtension: any JSON value, kept as its bytes in {bytes raw
	// = 1}; null is no bytes.
	"k8s.io.apimachinery.pkg.runtime.RawExtension": rawJSON,
	// meta/v1 FieldsV1 (managedFields): the same, in {bytes Raw = 1}.
	metaV1 + "FieldsV1": rawJSON,
	// apiextensions/v1 JSON (a schema's default, enum, example): the same,
	// in {bytes raw = 1}.
	apiextensionsV1 + "JSON":                         rawJSON,
	apiextensionsV1 + "JSONSchemaPropsOrArray":       schemaOrArray,
	apiextensionsV1 + "JSONSchemaPropsOrBool":        schemaOrBool,
	apiextensionsV1 + "JSONSchemaPropsOrStringArray": schemaOrStringArray,
}

// rawJSON maps a message {bytes = 1} whose bytes are a JSON value.
var rawJSON = &customType{
	fromJSON: func(m protoreflect.Message, v json.RawMessage) error {
		m.Set(fieldByNumber(m, 1), protoreflect.ValueOfBytes(bytes.Clone(v)))
		return nil
	},
	toJSON: func(dst []byte, m protoreflect.Message) ([]byte, error) {
		fd := fieldByNumber(m, 1)
		if !m.Has(fd) {
			return append(dst, "null"...), nil
		}
		raw := m.Get(fd).Bytes()
		if !json.Valid(raw) {
			return nil, fmt.Errorf("%s holds %d bytes that are not JSON", m.Descriptor().Name(), len(raw))
		}
		return append(dst, raw...), nil
	},
}

// rfc3339Micro is MicroTime's JSON layout.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

func timestampFromJSON(m protoreflect.Message, v json.RawMessage, layout string, precision time.Duration) error {
	s, err := jsonString(v)
	if err != nil {
		return err
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return err
	}
	if t.IsZero() {
		return nil // written as an empty message, like the Go zero time
	}
	nanos := int32(0)
	if precision < time.Second {
		nanos = int32(time.Duration(t.Nanosecond()).Truncate(precision))
	}
	m.Set(fieldByNumber(m, 1), protoreflect.ValueOfInt64(t.Unix()))
	m.Set(fieldByNumber(m, 2), protoreflect.ValueOfInt32(nanos))
	return nil
}

func timestampToJSON(dst []byte, m protoreflect.Message, layout string, precision time.Duration) []byte {
	secs, nanos := fieldByNumber(m, 1), fieldByNumber(m, 2)
	if !m.Has(secs) && !m.Has(nanos) {
		return append(dst, "null"...)
	}
	ns := int64(0)
	if precision < time.Second {
		ns = int64(time.Duration(m.Get(nanos).Int()).Truncate(precision))
	}
	t := time.Unix(m.Get(secs).Int(), ns).UTC()
	if t.IsZero() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, layout)
	return append(dst, '"')
}

func setIntOrString(m protoreflect.Message, typ int64, iv int32, sv string) {
	m.Set(fieldByNumber(m, 1), protoreflect.ValueOfInt64(typ))
	m.Set(fieldByNumber(m, 2), protoreflect.ValueOfInt32(iv))
	m.Set(fieldByNumber(m, 3), protoreflect.ValueOfString(sv))
}

// fieldByNumber is the descriptor of field n of m; the custom types' field
// numbers are fixed by their generated.proto.
func fieldByNumber(m protoreflect.Message, n protoreflect.FieldNumber) protoreflect.FieldDescriptor {
	return m.Descriptor().Fields().ByNumber(n)
}

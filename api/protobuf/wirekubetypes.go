package protobuf

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The wire writer's side of kubetypes.go: the Kubernetes types with their
// own JSON form that every served object is full of, written straight to
// protobuf (no tag or length: the caller writes those). The rules are
// kubetypes.go's fromJSON, which the tests hold these to byte for byte; a
// type missing here (a CRD schema's Or types) is written through its
// dynamicpb mapping instead.

// wireCustom maps each such message to its writer. It is never modified.
var wireCustom = map[protoreflect.FullName]func(dst, v []byte) ([]byte, error){
	timeName: func(dst, v []byte) ([]byte, error) {
		return appendTimestamp(dst, v, time.RFC3339, time.Second)
	},
	metaV1 + "MicroTime": func(dst, v []byte) ([]byte, error) {
		return appendTimestamp(dst, v, rfc3339Micro, time.Microsecond)
	},
	metaV1 + "Duration": func(dst, v []byte) ([]byte, error) {
		s, err := jsonString(v)
		if err != nil {
			return nil, err
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, err
		}
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		return protowire.AppendVarint(dst, uint64(d)), nil
	},
	"k8s.io.apimachinery.pkg.api.resource.Quantity": func(dst, v []byte) ([]byte, error) {
		text := v
		switch {
		case v[0] == '"':
			if len(v) == 2 {
				return nil, fmt.Errorf("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
			}
			dst = protowire.AppendTag(dst, 1, protowire.BytesType)
			return appendStringValue(dst, v)
		case v[0] != '-' && (v[0] < '0' || v[0] > '9'):
			return nil, fmt.Errorf("quantity must be a string or a number, not %s", jsonKind(v))
		}
		// A bare number keeps its text, as json.Number does.
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		return protowire.AppendBytes(dst, text), nil
	},
	"k8s.io.apimachinery.pkg.util.intstr.IntOrString": func(dst, v []byte) ([]byte, error) {
		typ, iv := uint64(0), uint64(0)
		var str []byte
		if v[0] == '"' {
			typ, str = 1, v
		} else {
			n, ok := parseInteger(v, 32, true)
			if !ok {
				return nil, fmt.Errorf("an int or a string is required, not %s", jsonKind(v))
			}
			iv = n
		}
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, typ)
		dst = protowire.AppendTag(dst, 2, protowire.VarintType)
		dst = protowire.AppendVarint(dst, iv)
		dst = protowire.AppendTag(dst, 3, protowire.BytesType)
		if str == nil {
			return append(dst, 0), nil
		}
		return appendStringValue(dst, str)
	},
	"k8s.io.apimachinery.pkg.runtime.RawExtension": appendRawJSON,
	metaV1 + "FieldsV1":                            appendRawJSON,
	apiextensionsV1 + "JSON":                       appendRawJSON,
}

// appendRawJSON writes {bytes = 1} holding the JSON value as it is.
func appendRawJSON(dst, v []byte) ([]byte, error) {
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	return protowire.AppendBytes(dst, v), nil
}

// appendTimestamp writes a Time or MicroTime {int64 seconds = 1; int32
// nanos = 2}: nothing for the zero time, as timestampFromJSON.
func appendTimestamp(dst, v []byte, layout string, precision time.Duration) ([]byte, error) {
	t, err := parseTimestamp(v, layout)
	if err != nil {
		return nil, err
	}
	if t.IsZero() {
		return dst, nil
	}
	nanos := int64(0)
	if precision < time.Second {
		nanos = int64(time.Duration(t.Nanosecond()).Truncate(precision))
	}
	dst = protowire.AppendTag(dst, 1, protowire.VarintType)
	dst = protowire.AppendVarint(dst, uint64(t.Unix()))
	dst = protowire.AppendTag(dst, 2, protowire.VarintType)
	return protowire.AppendVarint(dst, uint64(nanos)), nil
}

// parseTimestamp reads a JSON string in layout. The form the server writes
// for a Time, "2006-01-02T15:04:05Z", is read without time.Parse (which
// allocates); anything else, and any field out of range, goes to
// time.Parse, which accepts or refuses it.
func parseTimestamp(v []byte, layout string) (time.Time, error) {
	if v[0] != '"' {
		return time.Time{}, fmt.Errorf("expected a string, not %s", jsonKind(v))
	}
	if layout == time.RFC3339 {
		if t, ok := parseUTCSeconds(v[1 : len(v)-1]); ok {
			return t, nil
		}
	}
	s, err := jsonString(json.RawMessage(v))
	if err != nil {
		return time.Time{}, err
	}
	return time.Parse(layout, s)
}

// parseUTCSeconds reads exactly "YYYY-MM-DDTHH:MM:SSZ" with every field in
// range.
func parseUTCSeconds(b []byte) (time.Time, bool) {
	if len(b) != 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[19] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 7)
	d, ok3 := num(8, 10)
	h, ok4 := num(11, 13)
	mi, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if t.Day() != d { // February 30th and the like: time.Parse refuses them
		return time.Time{}, false
	}
	return t, true
}

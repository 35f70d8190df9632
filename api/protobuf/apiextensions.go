package protobuf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// CustomResourceDefinitions (apiextensions.k8s.io/v1) in protobuf, as
// kube-apiserver's apiextensions-apiserver reads and writes them, and as
// client-go's apiextensions clientset sends them when asked for protobuf
// (Kubernetes' e2e tests do: --kube-api-content-type defaults to
// application/vnd.kubernetes.protobuf). Their package is
// k8s.io/apiextensions-apiserver's, not k8s.io/api's.
//
// An OpenAPI schema (JSONSchemaProps) is an ordinary message, except for
// four types whose JSON is not their message's shape; their rules are
// k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/marshal.go's
// MarshalJSON and UnmarshalJSON, written here against the messages.

const (
	apiextensionsPackage = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions."
	apiextensionsV1      = apiextensionsPackage + "v1."
	jsonSchemaProps      = apiextensionsV1 + "JSONSchemaProps"
)

// schemaOrArray is JSONSchemaPropsOrArray {JSONSchemaProps schema = 1;
// repeated JSONSchemaProps jSONSchemas = 2} ("items"): a schema object,
// or an array of them.
var schemaOrArray = &customType{
	wraps: jsonSchemaProps,
	fromJSONIn: func(m protoreflect.Message, v json.RawMessage, inner *message, path string) error {
		v = bytes.TrimSpace(v)
		switch firstByte(v) {
		case '{':
			return fillMessage(m.Mutable(fieldByNumber(m, 1)).Message(), inner, v, path)
		case '[':
			var items []json.RawMessage
			if err := json.Unmarshal(v, &items); err != nil {
				return &FieldError{Path: pathOrRoot(path), Err: err}
			}
			l := m.Mutable(fieldByNumber(m, 2)).List()
			for i, item := range items {
				e := l.NewElement()
				if err := fillMessage(e.Message(), inner, item, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
				l.Append(e)
			}
		}
		// Anything else leaves both empty, as UnmarshalJSON does.
		return nil
	},
	toJSONIn: func(dst []byte, m protoreflect.Message, inner *message) ([]byte, error) {
		if l := m.Get(fieldByNumber(m, 2)).List(); l.Len() > 0 {
			dst = append(dst, '[')
			for i := range l.Len() {
				if i > 0 {
					dst = append(dst, ',')
				}
				var err error
				if dst, err = appendValue(dst, nil, inner, l.Get(i)); err != nil {
					return nil, err
				}
			}
			return append(dst, ']'), nil
		}
		return appendSchemaOrNull(dst, m, 1, inner)
	},
}

// schemaOrBool is JSONSchemaPropsOrBool {bool allows = 1; JSONSchemaProps
// schema = 2} ("additionalProperties", "additionalItems"): true, false,
// or a schema object, which allows.
var schemaOrBool = &customType{
	wraps: jsonSchemaProps,
	fromJSONIn: func(m protoreflect.Message, v json.RawMessage, inner *message, path string) error {
		v = bytes.TrimSpace(v)
		allows := fieldByNumber(m, 1)
		switch {
		case firstByte(v) == '{':
			m.Set(allows, protoreflect.ValueOfBool(true))
			return fillMessage(m.Mutable(fieldByNumber(m, 2)).Message(), inner, v, path)
		case string(v) == "true", string(v) == "false":
			m.Set(allows, protoreflect.ValueOfBool(string(v) == "true"))
			return nil
		}
		return &FieldError{Path: pathOrRoot(path), Err: errors.New("boolean or JSON schema expected")}
	},
	toJSONIn: func(dst []byte, m protoreflect.Message, inner *message) ([]byte, error) {
		if schema := fieldByNumber(m, 2); m.Has(schema) {
			return appendValue(dst, nil, inner, m.Get(schema))
		}
		return strconv.AppendBool(dst, m.Get(fieldByNumber(m, 1)).Bool()), nil
	},
	// The Go zero value has Allows false, which the generated marshaller
	// writes.
	zero: func(m protoreflect.Message) { m.Set(fieldByNumber(m, 1), protoreflect.ValueOfBool(false)) },
}

// schemaOrStringArray is JSONSchemaPropsOrStringArray {JSONSchemaProps
// schema = 1; repeated string property = 2} ("dependencies"' values): an
// array of property names, or a schema object.
var schemaOrStringArray = &customType{
	wraps: jsonSchemaProps,
	fromJSONIn: func(m protoreflect.Message, v json.RawMessage, inner *message, path string) error {
		v = bytes.TrimSpace(v)
		switch firstByte(v) {
		case '{':
			return fillMessage(m.Mutable(fieldByNumber(m, 1)).Message(), inner, v, path)
		case '[':
			var names []string
			if err := json.Unmarshal(v, &names); err != nil {
				return &FieldError{Path: pathOrRoot(path), Err: err}
			}
			l := m.Mutable(fieldByNumber(m, 2)).List()
			for _, n := range names {
				l.Append(protoreflect.ValueOfString(n))
			}
		}
		return nil
	},
	toJSONIn: func(dst []byte, m protoreflect.Message, inner *message) ([]byte, error) {
		if l := m.Get(fieldByNumber(m, 2)).List(); l.Len() > 0 {
			names := make([]string, l.Len())
			for i := range l.Len() {
				names[i] = l.Get(i).String()
			}
			b, err := json.Marshal(names)
			if err != nil {
				return nil, fmt.Errorf("property names: %w", err)
			}
			return append(dst, b...), nil
		}
		return appendSchemaOrNull(dst, m, 1, inner)
	},
}

// appendSchemaOrNull appends field n of m, a JSONSchemaProps, or null.
func appendSchemaOrNull(dst []byte, m protoreflect.Message, n protoreflect.FieldNumber, inner *message) ([]byte, error) {
	if fd := fieldByNumber(m, n); m.Has(fd) {
		return appendValue(dst, nil, inner, m.Get(fd))
	}
	return append(dst, "null"...), nil
}

// firstByte is v's first byte, or 0 for a value of fewer than two bytes,
// which the Or types' UnmarshalJSON read as neither object nor array.
func firstByte(v []byte) byte {
	if len(v) < 2 {
		return 0
	}
	return v[0]
}

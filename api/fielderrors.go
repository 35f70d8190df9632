package api

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// The functions below build the StatusCause for one bad field, worded as
// k8s.io/apimachinery/pkg/util/validation/field words it, so a 422 built
// from them with NewInvalid reads exactly like the real server's:
//
//	NewInvalid(GroupKind{Kind: "ConfigMap"}, "Bad_Name", []StatusCause{
//		FieldInvalid("metadata.name", "Bad_Name", strings.Join(IsDNS1123Subdomain("Bad_Name"), "; ")),
//	})

// FieldInvalid: `Invalid value: "abc": <detail>`. Strings are quoted; numbers
// and booleans are not.
func FieldInvalid(field string, value any, detail string) StatusCause {
	return StatusCause{Type: CauseFieldValueInvalid, Field: field,
		Message: withDetail("Invalid value: "+formatBadValue(value), detail)}
}

// FieldRequired: `Required value[: <detail>]`.
func FieldRequired(field, detail string) StatusCause {
	return StatusCause{Type: CauseFieldValueRequired, Field: field, Message: withDetail("Required value", detail)}
}

// FieldForbidden: `Forbidden[: <detail>]`.
func FieldForbidden(field, detail string) StatusCause {
	return StatusCause{Type: CauseFieldValueForbidden, Field: field, Message: withDetail("Forbidden", detail)}
}

// FieldNotSupported: `Unsupported value: "x": supported values: "a", "b"`.
func FieldNotSupported(field string, value any, supported []string) StatusCause {
	detail := ""
	if len(supported) > 0 {
		quoted := make([]string, len(supported))
		for i, s := range supported {
			quoted[i] = strconv.Quote(s)
		}
		detail = "supported values: " + strings.Join(quoted, ", ")
	}
	return StatusCause{Type: CauseFieldValueNotSupported, Field: field,
		Message: withDetail("Unsupported value: "+formatBadValue(value), detail)}
}

// String is "<field>: <message>", the form the cause takes inside a
// Status message (and the text of Kubernetes' field.Error).
func (c StatusCause) String() string { return c.Field + ": " + c.Message }

func withDetail(s, detail string) string {
	if detail == "" {
		return s
	}
	return s + ": " + detail
}

// formatBadValue prints a rejected value the way field.Error does: nil as
// null, strings quoted, simple scalars plain, anything else as Go syntax.
func formatBadValue(v any) string {
	if v == nil {
		return "null"
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "null"
		}
		v = rv.Elem().Interface()
	}
	switch t := v.(type) {
	case int64, int32, float64, float32, bool:
		return fmt.Sprint(t)
	case string:
		return strconv.Quote(t)
	case fmt.Stringer:
		return t.String()
	default:
		return fmt.Sprintf("%#v", t)
	}
}

// aggregate joins error messages the way Kubernetes' errors.Aggregate does:
// duplicates dropped, a single message bare, several in [a, b].
func aggregate(msgs []string) string {
	seen := make(map[string]bool, len(msgs))
	uniq := msgs[:0:0]
	for _, m := range msgs {
		if !seen[m] {
			seen[m] = true
			uniq = append(uniq, m)
		}
	}
	if len(uniq) == 1 {
		return uniq[0]
	}
	return "[" + strings.Join(uniq, ", ") + "]"
}

package api

import (
	"encoding/json"
	"fmt"
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

// formatBadValue prints a rejected value the way field.Error's ErrorBody
// does in k8s.io/apimachinery v0.37.2 (pkg/util/validation/field/errors.go):
// simple scalars plain, strings quoted, anything else as JSON
// (`Unsupported value: ["bogus"]`, `Invalid value: {"app":"d"}`; a nil
// pointer is null), and only what JSON cannot encode as its String() or,
// last, Go syntax. (Kubernetes 1.32 printed everything that is not a
// scalar or a string as Go syntax: []string{"bogus"}.)
func formatBadValue(v any) string {
	switch t := v.(type) {
	case int64, int32, float64, float32, bool:
		return fmt.Sprint(t)
	case string:
		return strconv.Quote(t)
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprintf("%#v", v)
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

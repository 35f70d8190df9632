package api

import (
	"slices"
	"strings"
)

// FieldSelector selects objects by the values of fields:
// "metadata.name=gamma", "metadata.namespace!=kube-system". Single-object
// informers and `kubectl get NAME -w` use metadata.name=NAME.
//
// Syntactically any field name is allowed; matching knows only
// metadata.name and metadata.namespace and treats every other field as
// empty, so the apiserver should reject other fields up front (see
// ValidateMetadataFields) as a real one does for resources that index
// nothing else. Values escape '\', ',' and '=' with a backslash.
//
// The zero value is the empty selector and matches everything. It mirrors
// k8s.io/apimachinery/pkg/fields; the error messages are Kubernetes'.
type FieldSelector struct {
	// reqs are sorted by their written form, which makes String canonical.
	reqs []FieldRequirement
}

// FieldRequirement is one comma-separated term of a field selector.
type FieldRequirement struct {
	Field string
	// Operator is OpEquals (written "=" or "==") or OpNotEquals ("!=").
	Operator Operator
	// Value is unescaped.
	Value string
}

// The fields every object can be selected by.
const (
	FieldMetadataName      = "metadata.name"
	FieldMetadataNamespace = "metadata.namespace"
)

// ParseFieldSelector parses a field selector: terms "field=value",
// "field==value" or "field!=value" joined by commas, with no whitespace
// trimming (as in Kubernetes, "a = b" is field "a " and value " b"). A
// term whose field and value are both empty ("=") is dropped, as are empty
// terms. Errors wrap ErrInvalidSelector:
//
//	invalid selector: 'foo'; can't understand 'foo'
//	invalid field selector: invalid escape sequence: \x
//	invalid field selector: unescaped character in value: 61
//
// (the last is Kubernetes' way of saying a value holds a bare '=', code
// point 61).
func ParseFieldSelector(s string) (FieldSelector, error) {
	terms := splitFieldTerms(s)
	// Kubernetes parses the terms in sorted order, so when several are
	// wrong the first in that order is the one reported.
	slices.Sort(terms)
	var reqs []FieldRequirement
	for _, term := range terms {
		if term == "" {
			continue
		}
		field, op, raw, ok := splitFieldTerm(term)
		if !ok {
			return FieldSelector{}, selectorErrorf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
		value, err := unescapeFieldValue(raw)
		if err != nil {
			return FieldSelector{}, err
		}
		if field == "" && value == "" {
			continue
		}
		reqs = append(reqs, FieldRequirement{Field: field, Operator: op, Value: value})
	}
	slices.SortFunc(reqs, func(a, b FieldRequirement) int { return strings.Compare(a.String(), b.String()) })
	return FieldSelector{reqs: reqs}, nil
}

// MatchesObject reports whether the object's fields satisfy the selector.
// A nil object has every field empty.
func (s FieldSelector) MatchesObject(o *Object) bool {
	var name, namespace string
	if o != nil {
		name, namespace = o.Metadata.Name, o.Metadata.Namespace
	}
	for _, r := range s.reqs {
		var have string
		switch r.Field {
		case FieldMetadataName:
			have = name
		case FieldMetadataNamespace:
			have = namespace
		}
		matches := have == r.Value
		if r.Operator == OpNotEquals {
			matches = !matches
		}
		if !matches {
			return false
		}
	}
	return true
}

// Empty reports whether the selector selects everything.
func (s FieldSelector) Empty() bool { return len(s.reqs) == 0 }

// String returns the selector in canonical form: "==" written "=", values
// escaped, terms sorted. Parsing it again gives the same selector.
// (Kubernetes sorts the terms as they were typed, before rewriting them; the
// two orders differ only when "==" or escapes are involved.)
func (s FieldSelector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

// Requirements returns a copy of the selector's requirements, in String's
// order.
func (s FieldSelector) Requirements() []FieldRequirement { return slices.Clone(s.reqs) }

// RequiresExactMatch reports whether the selector pins field to one value
// (field=v) and returns it: metadata.name=x means at most one object.
func (s FieldSelector) RequiresExactMatch(field string) (string, bool) {
	for _, r := range s.reqs {
		if r.Field == field && r.Operator == OpEquals {
			return r.Value, true
		}
	}
	return "", false
}

// ValidateMetadataFields returns an error for the first requirement on a
// field other than metadata.name and metadata.namespace, worded as a real
// apiserver words it for a resource that supports only those two:
//
//	"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"
//
// The apiserver sends it as a 400 (NewBadRequest(err.Error())).
func (s FieldSelector) ValidateMetadataFields() error {
	for _, r := range s.reqs {
		if r.Field != FieldMetadataName && r.Field != FieldMetadataNamespace {
			return selectorErrorf("%q is not a known field selector: only %q, %q",
				r.Field, FieldMetadataName, FieldMetadataNamespace)
		}
	}
	return nil
}

// String returns the term as written in a selector, the value escaped.
func (r FieldRequirement) String() string {
	op := "="
	if r.Operator == OpNotEquals {
		op = "!="
	}
	return r.Field + op + EscapeFieldValue(r.Value)
}

// EscapeFieldValue escapes '\', ',' and '=' so a value can be put in a field
// selector: EscapeFieldValue("a=b") is `a\=b`.
func EscapeFieldValue(v string) string {
	if !strings.ContainsAny(v, `\,=`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\', ',', '=':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitFieldTerms cuts at every comma that is not escaped.
func splitFieldTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // whatever follows is escaped
		case ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

// splitFieldTerm finds the first operator in term, trying "!=", "==" and
// "=" at each position, so "a==b" is a DoubleEquals, not a="=b".
func splitFieldTerm(term string) (field string, op Operator, value string, ok bool) {
	for i := 0; i < len(term); i++ {
		rest := term[i:]
		switch {
		case strings.HasPrefix(rest, "!="):
			return term[:i], OpNotEquals, rest[2:], true
		case strings.HasPrefix(rest, "=="):
			return term[:i], OpEquals, rest[2:], true
		case strings.HasPrefix(rest, "="):
			return term[:i], OpEquals, rest[1:], true
		}
	}
	return "", "", "", false
}

// unescapeFieldValue undoes EscapeFieldValue and refuses a bare ',' or '='
// or an unknown escape. (Kubernetes walks runes here and we walk bytes; the
// results differ only for invalid UTF-8 next to an escape.)
func unescapeFieldValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 == len(s) {
				return "", selectorErrorf(`invalid field selector: invalid escape sequence: \`)
			}
			i++
			switch e := s[i]; e {
			case '\\', ',', '=':
				b.WriteByte(e)
			default:
				return "", selectorErrorf("invalid field selector: invalid escape sequence: %s", escapeSequence(s[i-1:]))
			}
		case ',', '=':
			return "", selectorErrorf("invalid field selector: unescaped character in value: %v", rune(c))
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// escapeSequence is the backslash and the whole character after it, for the
// message.
func escapeSequence(s string) string {
	for i := range s {
		if i > 1 {
			return s[:i]
		}
	}
	return s
}

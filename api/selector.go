package api

import "errors"

// Operator relates a label key or a field to values in a selector
// requirement. The values are Kubernetes' selection.Operator strings.
type Operator string

// The operators of label and field selectors. Field selectors use only
// OpEquals (for both "=" and "==") and OpNotEquals.
const (
	OpEquals       Operator = "="
	OpDoubleEquals Operator = "=="
	OpNotEquals    Operator = "!="
	OpIn           Operator = "in"
	OpNotIn        Operator = "notin"
	OpExists       Operator = "exists"
	OpDoesNotExist Operator = "!"
	OpGreaterThan  Operator = "gt"
	OpLessThan     Operator = "lt"
)

// ErrInvalidSelector is wrapped by every error ParseLabelSelector and
// ParseFieldSelector return. The error's text is exactly what Kubernetes
// says for the same input (the apiserver sends it back as a 400 message).
var ErrInvalidSelector = errors.New("invalid selector")

// selectorError carries Kubernetes' wording while matching
// ErrInvalidSelector.
type selectorError struct{ msg string }

func (e *selectorError) Error() string { return e.msg }

func (e *selectorError) Unwrap() error { return ErrInvalidSelector }

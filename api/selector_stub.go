package api

// PLACEHOLDER: replaced by the real label/field selector implementation.

// LabelSelector selects objects by their labels.
type LabelSelector struct{ raw string }

// ParseLabelSelector parses a label selector.
func ParseLabelSelector(s string) (LabelSelector, error) { return LabelSelector{raw: s}, nil }

// Matches reports whether the labels satisfy the selector.
func (s LabelSelector) Matches(labels map[string]string) bool { return true }

// Empty reports whether the selector selects everything.
func (s LabelSelector) Empty() bool { return s.raw == "" }

// String returns the selector in canonical form.
func (s LabelSelector) String() string { return s.raw }

// FieldSelector selects objects by metadata.name and metadata.namespace.
type FieldSelector struct{ raw string }

// ParseFieldSelector parses a field selector.
func ParseFieldSelector(s string) (FieldSelector, error) { return FieldSelector{raw: s}, nil }

// MatchesObject reports whether the object's fields satisfy the selector.
func (s FieldSelector) MatchesObject(o *Object) bool { return true }

// Empty reports whether the selector selects everything.
func (s FieldSelector) Empty() bool { return s.raw == "" }

// String returns the selector in canonical form.
func (s FieldSelector) String() string { return s.raw }

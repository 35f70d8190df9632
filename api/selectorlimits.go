package api

import (
	"errors"
	"fmt"
)

// Limits on the selectors a server accepts. Matching a selector costs time
// for every event and every watcher that carries it, so a server must not
// let one client bring a 400 KB selector of 57,000 terms to every event
// (docs/limits.md). kube-apiserver has no limit of its own here: a
// selector is bounded only by the 1 MiB its HTTP server allows for a
// request's headers and URL together. These limits are far above what
// kubectl and controllers send (a few terms, a set of a few hundred names)
// and far below what hurts.
const (
	// MaxSelectorLength is the longest label or field selector accepted,
	// in bytes.
	MaxSelectorLength = 32 << 10
	// MaxSelectorTerms is the most comma-separated requirements a label or
	// field selector may have. The values of one "in"/"notin" set count
	// as one requirement: they are looked up by binary search.
	MaxSelectorTerms = 256
)

// ErrSelectorTooLarge is wrapped (together with ErrInvalidSelector) by the
// errors of the Limited parsers when a selector passes a limit.
var ErrSelectorTooLarge = errors.New("selector too large")

// tooLargeError matches both ErrSelectorTooLarge and ErrInvalidSelector.
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }

func (e *tooLargeError) Is(target error) bool {
	return target == ErrSelectorTooLarge || target == ErrInvalidSelector
}

func checkSelectorLength(what, s string) error {
	if len(s) > MaxSelectorLength {
		return &tooLargeError{fmt.Sprintf("%s: Too long: may not be more than %d bytes, got %d", what, MaxSelectorLength, len(s))}
	}
	return nil
}

func checkSelectorTerms(what string, n int) error {
	if n > MaxSelectorTerms {
		return &tooLargeError{fmt.Sprintf("%s: Too many: %d requirements, must have at most %d", what, n, MaxSelectorTerms)}
	}
	return nil
}

// ParseLabelSelectorLimited is ParseLabelSelector for untrusted input: a
// selector longer than MaxSelectorLength is refused before it is read, and
// one with more than MaxSelectorTerms requirements after.
func ParseLabelSelectorLimited(s string) (LabelSelector, error) {
	if err := checkSelectorLength("labelSelector", s); err != nil {
		return LabelSelector{}, err
	}
	sel, err := ParseLabelSelector(s)
	if err != nil {
		return LabelSelector{}, err
	}
	if err := checkSelectorTerms("labelSelector", len(sel.reqs)); err != nil {
		return LabelSelector{}, err
	}
	return sel, nil
}

// ParseFieldSelectorLimited is ParseFieldSelector with the same limits.
func ParseFieldSelectorLimited(s string) (FieldSelector, error) {
	if err := checkSelectorLength("fieldSelector", s); err != nil {
		return FieldSelector{}, err
	}
	sel, err := ParseFieldSelector(s)
	if err != nil {
		return FieldSelector{}, err
	}
	if err := checkSelectorTerms("fieldSelector", len(sel.reqs)); err != nil {
		return FieldSelector{}, err
	}
	return sel, nil
}

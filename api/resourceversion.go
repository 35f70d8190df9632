package api

import (
	"errors"
	"strconv"
)

// ErrInvalidResourceVersion is wrapped by the error ParseResourceVersion
// returns for a resourceVersion that is not a number.
var ErrInvalidResourceVersion = errors.New("invalid resourceVersion")

// ParseResourceVersion reads a resourceVersion on the server side, where it
// is a store revision. "" and "0" both mean 0 ("no particular revision");
// anything that is not an unsigned decimal number is an error worded as
// Kubernetes words it:
//
//	resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax
//
// Clients must not parse resourceVersions: to them they are opaque strings.
// It mirrors the apiserver's APIObjectVersioner.ParseResourceVersion. Pass
// the error to ErrorToStatus for the 500 a real server answers with.
func ParseResourceVersion(rv string) (uint64, error) {
	if rv == "" || rv == "0" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return 0, &resourceVersionError{value: rv, err: err}
	}
	return n, nil
}

// FormatResourceVersion writes a revision as the resourceVersion string.
func FormatResourceVersion(rev uint64) string { return strconv.FormatUint(rev, 10) }

type resourceVersionError struct {
	value string
	err   error
}

func (e *resourceVersionError) Error() string {
	return FieldInvalid("resourceVersion", e.value, e.err.Error()).String()
}

// Unwrap exposes both ErrInvalidResourceVersion and strconv's error
// (strconv.ErrSyntax or strconv.ErrRange).
func (e *resourceVersionError) Unwrap() []error {
	return []error{ErrInvalidResourceVersion, e.err}
}

package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// isFuncs is every Is* check, by name.
var isFuncs = map[string]func(error) bool{
	"IsNotFound":                IsNotFound,
	"IsAlreadyExists":           IsAlreadyExists,
	"IsConflict":                IsConflict,
	"IsInvalid":                 IsInvalid,
	"IsBadRequest":              IsBadRequest,
	"IsGone":                    IsGone,
	"IsResourceExpired":         IsResourceExpired,
	"IsTooManyRequests":         IsTooManyRequests,
	"IsTimeout":                 IsTimeout,
	"IsTooLargeResourceVersion": IsTooLargeResourceVersion,
	"IsInternalError":           IsInternalError,
	"IsForbidden":               IsForbidden,
	"IsUnauthorized":            IsUnauthorized,
	"IsMethodNotSupported":      IsMethodNotSupported,
	"IsUnsupportedMediaType":    IsUnsupportedMediaType,
	"IsRequestEntityTooLarge":   IsRequestEntityTooLarge,
	"IsServiceUnavailable":      IsServiceUnavailable,
}

// Every recorded Status against every Is* check: exactly the expected ones
// say yes, directly and through a wrapping error.
func TestIsFuncsOnFixtures(t *testing.T) {
	want := map[string][]string{
		"error-400-bad-labelselector.json":                            {"IsBadRequest"},
		"error-400-continue-with-resourceversion.json":                {"IsBadRequest"},
		"error-400-malformed-json-body.json":                          {"IsBadRequest"},
		"error-404-delete-notfound.json":                              {"IsNotFound"},
		"error-404-get-notfound.json":                                 {"IsNotFound"},
		"error-404-namespace-notfound.json":                           {"IsNotFound"},
		"error-404-unknown-resource.json":                             {"IsNotFound"},
		"error-405-method-not-allowed.json":                           {"IsMethodNotSupported"},
		"error-409-alreadyexists.json":                                {"IsAlreadyExists"},
		"error-409-conflict-stale-rv.json":                            {"IsConflict"},
		"error-409-delete-precondition.json":                          {"IsConflict"},
		"error-410-expired-continue-earlier-capture-pretty.json":      {"IsResourceExpired"},
		"error-410-expired-continue.json":                             {"IsResourceExpired"},
		"error-410-expired-list-rv-exact-earlier-capture-pretty.json": {"IsResourceExpired"},
		"error-410-expired-list-rv-exact.json":                        {"IsResourceExpired"},
		"error-415-patch-wrong-content-type.json":                     {"IsUnsupportedMediaType"},
		"error-422-invalid-name.json":                                 {"IsInvalid"},
		"error-422-rvmatch-without-rv.json":                           {"IsInvalid"},
		"error-422-sendinitialevents-without-rvmatch.json":            {"IsInvalid"},
		"error-400-list-bad-rv.json":                                  {"IsBadRequest"},
		// No reason, code 500: Kubernetes' IsInternalError falls back on the code.
		"error-500-watch-bad-rv.json":   {"IsInternalError"},
		"error-504-list-future-rv.json": {"IsTimeout", "IsTooLargeResourceVersion"},
		"delete-200.json":               nil,
	}
	for _, name := range append(fixtureNames(t, "error-*.json"), "delete-200.json") {
		expected, ok := want[name]
		require.True(t, ok, "add %s to the table", name)
		var s Status
		require.NoError(t, json.Unmarshal(readFixture(t, name), &s))
		for fn, is := range isFuncs {
			yes := slices.Contains(expected, fn)
			assert.Equal(t, yes, is(&s), "%s(%s)", fn, name)
			assert.Equal(t, yes, is(fmt.Errorf("listing: %w", &s)), "%s(wrapped %s)", fn, name)
		}
	}
}

// The same matrix for the constructors, plus the fall-backs on the code
// for a Status without a known reason (e.g. from a proxy).
func TestIsFuncsOnConstructors(t *testing.T) {
	cm := GroupResource{Resource: "configmaps"}
	bare := func(code int32) *Status { return &Status{Status: StatusFailure, Code: code} }
	cases := []struct {
		name string
		err  error
		want []string
	}{
		{"NotFound", NewNotFound(cm, "x"), []string{"IsNotFound"}},
		{"AlreadyExists", NewAlreadyExists(cm, "x"), []string{"IsAlreadyExists"}},
		{"Conflict", NewConflict(cm, "x", OptimisticLockErrorMsg), []string{"IsConflict"}},
		{"Invalid", NewInvalid(GroupKind{Kind: "ConfigMap"}, "x", nil), []string{"IsInvalid"}},
		{"BadRequest", NewBadRequest("no"), []string{"IsBadRequest"}},
		{"Expired", NewResourceExpired("too old"), []string{"IsResourceExpired"}},
		{"Gone", NewGone("gone"), []string{"IsGone"}},
		{"TooManyRequests", NewTooManyRequests("slow down", 2), []string{"IsTooManyRequests"}},
		{"Timeout", NewTimeout("slow", 1), []string{"IsTimeout"}},
		{"TooLargeRV", NewTooLargeResourceVersion(9, 5, 1), []string{"IsTimeout", "IsTooLargeResourceVersion"}},
		{"Internal", NewInternalError(io.EOF), []string{"IsInternalError"}},
		{"Forbidden", NewForbidden(cm, "x", "no"), []string{"IsForbidden"}},
		{"Unauthorized", NewUnauthorized(""), []string{"IsUnauthorized"}},
		{"MethodNotSupported", NewMethodNotSupported(), []string{"IsMethodNotSupported"}},
		{"UnsupportedMediaType", NewUnsupportedMediaType("text/plain", []string{"application/json"}), []string{"IsUnsupportedMediaType"}},
		{"TooLarge", NewRequestEntityTooLarge("3 MiB"), []string{"IsRequestEntityTooLarge"}},
		{"ServiceUnavailable", NewServiceUnavailable("later"), []string{"IsServiceUnavailable"}},
		// A Status with no reason is judged by its code...
		{"bare 404", bare(404), []string{"IsNotFound"}},
		{"bare 409", bare(409), []string{"IsConflict"}},
		{"bare 410", bare(410), []string{"IsGone"}},
		{"bare 429", bare(429), []string{"IsTooManyRequests"}},
		{"bare 500", bare(500), []string{"IsInternalError"}},
		{"bare 504", bare(504), []string{"IsTimeout"}},
		// ...but a known reason wins over the code, except for 429 and 413,
		// which Kubernetes recognises by code whatever the reason.
		{"Conflict coded 404", &Status{Reason: ReasonConflict, Code: 404}, []string{"IsConflict"}},
		{"Invalid coded 429", &Status{Reason: ReasonInvalid, Code: 429}, []string{"IsInvalid", "IsTooManyRequests"}},
		{"Invalid coded 413", &Status{Reason: ReasonInvalid, Code: 413}, []string{"IsInvalid", "IsRequestEntityTooLarge"}},
		{"not a Status", errors.New("boom"), nil},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		for fn, is := range isFuncs {
			assert.Equal(t, slices.Contains(c.want, fn), is(c.err), "%s(%s)", fn, c.name)
		}
	}
}

func TestStatusIsAnError(t *testing.T) {
	err := fmt.Errorf("getting: %w", NewNotFound(GroupResource{Resource: "configmaps"}, "x"))
	s, ok := StatusOf(err)
	require.True(t, ok)
	assert.Equal(t, `configmaps "x" not found`, s.Error())
	assert.Equal(t, ReasonNotFound, ReasonOf(err))
	assert.Equal(t, int32(404), CodeOf(err))
	assert.Equal(t, ReasonUnknown, ReasonOf(io.EOF))
	assert.Zero(t, CodeOf(io.EOF))

	secs, ok := RetryAfterSeconds(NewTimeout("x", 3))
	assert.True(t, ok)
	assert.Equal(t, 3, secs)
	_, ok = RetryAfterSeconds(NewNotFound(GroupResource{Resource: "x"}, "y"))
	assert.False(t, ok)
}

func TestNewInvalidListsCauses(t *testing.T) {
	gk := GroupKind{Kind: "ConfigMap"}
	one := FieldRequired("metadata.name", "name or generateName is required")
	two := FieldNotSupported("spec.mode", "x", []string{"a", "b"})
	cases := []struct {
		name   string
		causes []StatusCause
		want   string
	}{
		{"none", nil, `ConfigMap "x" is invalid`},
		{"one", []StatusCause{one}, `ConfigMap "x" is invalid: metadata.name: Required value: name or generateName is required`},
		{"two", []StatusCause{one, two}, `ConfigMap "x" is invalid: [metadata.name: Required value: name or generateName is required, ` +
			`spec.mode: Unsupported value: "x": supported values: "a", "b"]`},
		{"repeated messages once", []StatusCause{one, one}, `ConfigMap "x" is invalid: metadata.name: Required value: name or generateName is required`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewInvalid(gk, "x", c.causes)
			assert.Equal(t, c.want, s.Message)
			assert.Equal(t, c.causes, s.Details.Causes, "every cause is kept, repeated or not")
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// The wording of field.Error in k8s.io/apimachinery v0.37.2
// (pkg/util/validation/field/errors.go, ErrorBody).
func TestFieldCauseWording(t *testing.T) {
	n := int64(5)
	var nilPtr *int64
	cases := []struct {
		cause StatusCause
		want  string
	}{
		{FieldInvalid("f", "abc", "bad"), `f: Invalid value: "abc": bad`},
		{FieldInvalid("f", int64(5), ""), `f: Invalid value: 5`},
		{FieldInvalid("f", &n, "x"), `f: Invalid value: 5: x`},
		{FieldInvalid("f", nilPtr, "x"), `f: Invalid value: null: x`},
		{FieldInvalid("f", nil, "x"), `f: Invalid value: null: x`},
		{FieldInvalid("f", true, "x"), `f: Invalid value: true: x`},
		// Anything else is JSON in 1.37 (1.32 printed Go
		// syntax, []string{"a"}).
		{FieldInvalid("f", []string{"a"}, "x"), `f: Invalid value: ["a"]: x`},
		{FieldInvalid("f", map[string]string{"app": "d"}, "x"), `f: Invalid value: {"app":"d"}: x`},
		{FieldNotSupported("dryRun", []string{"bogus"}, []string{"All"}), `dryRun: Unsupported value: ["bogus"]: supported values: "All"`},
		{FieldInvalid("f", ptrTo("<a>"), ""), `f: Invalid value: "\u003ca\u003e"`},
		{FieldInvalid("f", 7, ""), `f: Invalid value: 7`},
		{FieldRequired("f", ""), `f: Required value`},
		{FieldForbidden("f", "no"), `f: Forbidden: no`},
		{FieldNotSupported("f", "x", nil), `f: Unsupported value: "x"`},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.cause.String())
	}
}

func TestErrorToStatus(t *testing.T) {
	assert.Nil(t, ErrorToStatus(nil))

	plain := ErrorToStatus(errors.New("disk on fire"))
	assert.Equal(t, &Status{Kind: "Status", APIVersion: "v1", Status: StatusFailure, Message: "disk on fire", Code: 500}, plain)

	orig := NewInvalid(GroupKind{Kind: "ConfigMap"}, "x", []StatusCause{FieldRequired("f", "")})
	got := ErrorToStatus(fmt.Errorf("creating: %w", orig))
	assert.Equal(t, orig, got)
	got.Details.Causes[0].Field = "changed"
	assert.Equal(t, "f", orig.Details.Causes[0].Field, "the copy shares nothing with the original")

	partial := ErrorToStatus(&Status{Message: "half made"})
	assert.Equal(t, "Status", partial.Kind)
	assert.Equal(t, StatusFailure, partial.Status)
	assert.Equal(t, int32(http.StatusInternalServerError), partial.Code)
	ok := ErrorToStatus(&Status{Status: StatusSuccess})
	assert.Equal(t, int32(http.StatusOK), ok.Code)
}

func TestParseResourceVersion(t *testing.T) {
	for in, want := range map[string]uint64{"": 0, "0": 0, "1": 1, "00": 0, "18446744073709551615": 1<<64 - 1} {
		got, err := ParseResourceVersion(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"abc", "-1", "+1", "1.0", " 1", "18446744073709551616", "0x10"} {
		_, err := ParseResourceVersion(in)
		require.Error(t, err, in)
		assert.ErrorIs(t, err, ErrInvalidResourceVersion, in)
		var numErr *strconv.NumError
		assert.ErrorAs(t, err, &numErr, in)
	}
	_, err := ParseResourceVersion("abc")
	assert.Equal(t, `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`, err.Error())
	assert.ErrorIs(t, err, strconv.ErrSyntax)
	assert.Equal(t, "42", FormatResourceVersion(42))
}

func TestOtherConstructorWording(t *testing.T) {
	cm := GroupResource{Resource: "configmaps"}
	cases := map[string]*Status{
		`forbidden: no`:                          NewForbidden(GroupResource{}, "", "no"),
		`configmaps is forbidden: no`:            NewForbidden(cm, "", "no"),
		`configmaps "x" is forbidden: no`:        NewForbidden(cm, "x", "no"),
		`deployments.apps "d" not found`:         NewNotFound(GroupResource{Group: "apps", Resource: "deployments"}, "d"),
		`Request entity too large: limit is 3MB`: NewRequestEntityTooLarge("limit is 3MB"),
		`Internal error occurred: EOF`:           NewInternalError(io.EOF),
		`the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`: NewUnsupportedMediaType(
			"text/plain", []string{"application/json", "application/yaml"}),
		`Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (u1) does not match the UID in record (u2). The object might have been deleted and then recreated`: NewUIDPreconditionConflict(
			GroupKind{Kind: "ConfigMap"}, "a", "u1", "u2"),
		`the server has received too many requests and has asked us to try again later`:     NewGenericServerResponse(429, ""),
		`an error on the server ("boom") has prevented the request from succeeding`:         NewGenericServerResponse(502, "boom"),
		`the server responded with the status code 418 but did not return more information`: NewGenericServerResponse(418, ""),
	}
	for want, s := range cases {
		assert.Equal(t, want, s.Message)
	}
	b, err := json.Marshal(NewTooManyRequests("slow", 0))
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"slow","reason":"TooManyRequests","details":{},"code":429}`, string(b))
}

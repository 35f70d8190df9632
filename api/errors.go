package api

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// The constructors below build the Status a kube-apiserver would send for
// each failure, with the same code, reason, message wording and details
// (checked against ../shared/fixtures). They mirror
// k8s.io/apimachinery/pkg/api/errors.

// OptimisticLockErrorMsg is the text a Conflict carries when an update was
// based on a stale resourceVersion.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// NewNotFound: `configmaps "x" not found`, 404.
func NewNotFound(gr GroupResource, name string) *Status {
	return newStatus(http.StatusNotFound, ReasonNotFound,
		fmt.Sprintf("%s %q not found", gr, name),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewGenericNotFound is the 404 for a path that names no known resource.
func NewGenericNotFound() *Status {
	return newStatus(http.StatusNotFound, ReasonNotFound,
		"the server could not find the requested resource", &StatusDetails{})
}

// NewAlreadyExists: `configmaps "x" already exists`, 409.
func NewAlreadyExists(gr GroupResource, name string) *Status {
	return newStatus(http.StatusConflict, ReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", gr, name),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewConflict: `Operation cannot be fulfilled on configmaps "x": <why>`, 409.
// For a stale update, why is OptimisticLockErrorMsg.
func NewConflict(gr GroupResource, name string, why string) *Status {
	return newStatus(http.StatusConflict, ReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", gr, name, why),
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewInvalid: `ConfigMap "x" is invalid: <field>: <message>`, 422. Unlike
// most errors it names the kind, not the resource.
func NewInvalid(gk GroupKind, name string, causes []StatusCause) *Status {
	parts := make([]string, 0, len(causes))
	for _, c := range causes {
		if c.Field != "" {
			parts = append(parts, c.Field+": "+c.Message)
		} else {
			parts = append(parts, c.Message)
		}
	}
	msg := fmt.Sprintf("%s %q is invalid", gk, name)
	switch len(parts) {
	case 0:
	case 1:
		msg += ": " + parts[0]
	default:
		msg += ": [" + strings.Join(parts, ", ") + "]"
	}
	return newStatus(http.StatusUnprocessableEntity, ReasonInvalid, msg,
		&StatusDetails{Name: name, Group: gk.Group, Kind: gk.Kind, Causes: causes})
}

// NewBadRequest is a 400 with the given message and no details.
func NewBadRequest(message string) *Status {
	return newStatus(http.StatusBadRequest, ReasonBadRequest, message, nil)
}

// NewResourceExpired is the 410 Expired a watch or list gets when the
// revision it asked for has been compacted away, e.g.
// "too old resource version: 98 (116)".
func NewResourceExpired(message string) *Status {
	return newStatus(http.StatusGone, ReasonExpired, message, nil)
}

// NewGone is a 410 with reason Gone, the older form of NewResourceExpired.
func NewGone(message string) *Status {
	return newStatus(http.StatusGone, ReasonGone, message, nil)
}

// NewTooManyRequests is a 429 asking the client to come back later.
func NewTooManyRequests(message string, retryAfterSeconds int) *Status {
	var details *StatusDetails
	if retryAfterSeconds > 0 {
		details = &StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)}
	}
	return newStatus(http.StatusTooManyRequests, ReasonTooManyRequests, message, details)
}

// NewTimeout is a 504 "Timeout: <message>".
func NewTimeout(message string, retryAfterSeconds int) *Status {
	return newStatus(http.StatusGatewayTimeout, ReasonTimeout, "Timeout: "+message,
		&StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
}

// NewTooLargeResourceVersion is the 504 a list gets when it asks for a
// revision the server's cache has not reached yet.
func NewTooLargeResourceVersion(asked, current uint64, retryAfterSeconds int) *Status {
	s := NewTimeout(fmt.Sprintf("Too large resource version: %d, current: %d", asked, current), retryAfterSeconds)
	s.Details.Causes = []StatusCause{{Type: CauseResourceVersionTooLarge, Message: "Too large resource version"}}
	return s
}

// NewInternalError is a 500 "Internal error occurred: <err>".
func NewInternalError(err error) *Status {
	return newStatus(http.StatusInternalServerError, ReasonInternalError,
		fmt.Sprintf("Internal error occurred: %v", err),
		&StatusDetails{Causes: []StatusCause{{Message: err.Error()}}})
}

// NewMethodNotSupported is the 405 for a verb a resource does not allow.
func NewMethodNotSupported() *Status {
	return newStatus(http.StatusMethodNotAllowed, ReasonMethodNotAllowed,
		"the server does not allow this method on the requested resource", &StatusDetails{})
}

// NewUnsupportedMediaType is the 415 for a request body in a format the
// server does not speak; the message lists what it accepts.
func NewUnsupportedMediaType(contentType string, accepted []string) *Status {
	return newStatus(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
		fmt.Sprintf("the body of the request was in an unknown format (%s) - accepted media types include: %s",
			contentType, strings.Join(accepted, ", ")),
		&StatusDetails{})
}

// NewForbidden: `configmaps "x" is forbidden: <why>`, 403.
func NewForbidden(gr GroupResource, name string, why string) *Status {
	msg := fmt.Sprintf("%s %q is forbidden: %s", gr, name, why)
	if name == "" {
		msg = fmt.Sprintf("%s is forbidden: %s", gr, why)
	}
	return newStatus(http.StatusForbidden, ReasonForbidden, msg,
		&StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource})
}

// NewUnauthorized is the 401 for a request without valid credentials.
func NewUnauthorized(message string) *Status {
	if message == "" {
		message = "Unauthorized"
	}
	return newStatus(http.StatusUnauthorized, ReasonUnauthorized, message, nil)
}

// NewRequestEntityTooLarge is the 413 for a body over the size limit.
func NewRequestEntityTooLarge(message string) *Status {
	return newStatus(http.StatusRequestEntityTooLarge, ReasonRequestEntityTooLarge,
		"Request entity too large: "+message, nil)
}

// NewServiceUnavailable is a 503.
func NewServiceUnavailable(message string) *Status {
	return newStatus(http.StatusServiceUnavailable, ReasonServiceUnavailable, message, nil)
}

// StatusOf finds the Status in err's chain, if there is one.
func StatusOf(err error) (*Status, bool) {
	var s *Status
	if errors.As(err, &s) && s != nil {
		return s, true
	}
	return nil, false
}

// ReasonOf returns the reason of the Status in err's chain, or ReasonUnknown.
func ReasonOf(err error) StatusReason {
	if s, ok := StatusOf(err); ok {
		return s.Reason
	}
	return ReasonUnknown
}

// CodeOf returns the HTTP code of the Status in err's chain, or 0.
func CodeOf(err error) int32 {
	if s, ok := StatusOf(err); ok {
		return s.Code
	}
	return 0
}

// is reports whether err carries a Status with this reason, or, for a
// Status whose reason is unknown (e.g. a proxy's bare error), this code.
func is(err error, reason StatusReason, code int32) bool {
	s, ok := StatusOf(err)
	if !ok {
		return false
	}
	if s.Reason == reason {
		return true
	}
	return !knownReason(s.Reason) && s.Code == code
}

func knownReason(r StatusReason) bool {
	switch r {
	case ReasonUnauthorized, ReasonForbidden, ReasonNotFound, ReasonAlreadyExists,
		ReasonConflict, ReasonGone, ReasonInvalid, ReasonTimeout, ReasonTooManyRequests,
		ReasonBadRequest, ReasonMethodNotAllowed, ReasonNotAcceptable,
		ReasonRequestEntityTooLarge, ReasonUnsupportedMediaType, ReasonInternalError,
		ReasonExpired, ReasonServiceUnavailable:
		return true
	}
	return false
}

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return is(err, ReasonNotFound, http.StatusNotFound) }

// IsAlreadyExists reports a 409 AlreadyExists.
func IsAlreadyExists(err error) bool { return ReasonOf(err) == ReasonAlreadyExists }

// IsConflict reports a 409 Conflict (a stale resourceVersion).
func IsConflict(err error) bool { return is(err, ReasonConflict, http.StatusConflict) }

// IsInvalid reports a 422 Invalid.
func IsInvalid(err error) bool { return is(err, ReasonInvalid, http.StatusUnprocessableEntity) }

// IsBadRequest reports a 400 BadRequest.
func IsBadRequest(err error) bool { return is(err, ReasonBadRequest, http.StatusBadRequest) }

// IsGone reports a 410 with reason Gone.
func IsGone(err error) bool { return is(err, ReasonGone, http.StatusGone) }

// IsResourceExpired reports a 410 with reason Expired: the revision asked for
// was compacted. A watcher must re-list; a RetryWatcher gives up here.
func IsResourceExpired(err error) bool { return is(err, ReasonExpired, http.StatusGone) }

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool {
	return is(err, ReasonTooManyRequests, http.StatusTooManyRequests)
}

// IsTimeout reports a 504 Timeout.
func IsTimeout(err error) bool { return is(err, ReasonTimeout, http.StatusGatewayTimeout) }

// IsTooLargeResourceVersion reports the 504 for a revision the server has
// not reached yet (its cause is ResourceVersionTooLarge).
func IsTooLargeResourceVersion(err error) bool {
	s, ok := StatusOf(err)
	if !ok || !IsTimeout(err) || s.Details == nil {
		return false
	}
	for _, c := range s.Details.Causes {
		if c.Type == CauseResourceVersionTooLarge {
			return true
		}
	}
	return false
}

// IsInternalError reports a 500.
func IsInternalError(err error) bool {
	return is(err, ReasonInternalError, http.StatusInternalServerError)
}

// IsForbidden reports a 403.
func IsForbidden(err error) bool { return is(err, ReasonForbidden, http.StatusForbidden) }

// IsUnauthorized reports a 401.
func IsUnauthorized(err error) bool { return is(err, ReasonUnauthorized, http.StatusUnauthorized) }

// IsMethodNotSupported reports a 405.
func IsMethodNotSupported(err error) bool {
	return is(err, ReasonMethodNotAllowed, http.StatusMethodNotAllowed)
}

// IsUnsupportedMediaType reports a 415.
func IsUnsupportedMediaType(err error) bool {
	return is(err, ReasonUnsupportedMediaType, http.StatusUnsupportedMediaType)
}

// IsRequestEntityTooLarge reports a 413.
func IsRequestEntityTooLarge(err error) bool {
	return is(err, ReasonRequestEntityTooLarge, http.StatusRequestEntityTooLarge)
}

// RetryAfterSeconds returns the delay a Status asks for, if any.
func RetryAfterSeconds(err error) (int, bool) {
	s, ok := StatusOf(err)
	if !ok || s.Details == nil || s.Details.RetryAfterSeconds <= 0 {
		return 0, false
	}
	return int(s.Details.RetryAfterSeconds), true
}

package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The constructors below build the Status a kube-apiserver would send for
// each failure, with the same code, reason, message wording and details
// (checked against the recordings in testdata/fixtures). They mirror
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
// most errors it names the kind, not the resource. Several causes are
// listed as "[a, b]" with repeated messages dropped, as Kubernetes does;
// build the causes with FieldInvalid, FieldRequired, FieldForbidden or
// FieldNotSupported. For a bad query the kind is
// GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"} and the name "".
func NewInvalid(gk GroupKind, name string, causes []StatusCause) *Status {
	parts := make([]string, 0, len(causes))
	for _, c := range causes {
		if c.Field != "" {
			parts = append(parts, c.String())
		} else {
			parts = append(parts, c.Message)
		}
	}
	msg := fmt.Sprintf("%s %q is invalid", gk, name)
	if len(parts) > 0 {
		msg += ": " + aggregate(parts)
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

// NewTooManyRequests is a 429 asking the client to come back later. Like
// Kubernetes' it always carries details ("details":{} when there is no delay).
func NewTooManyRequests(message string, retryAfterSeconds int) *Status {
	return newStatus(http.StatusTooManyRequests, ReasonTooManyRequests, message,
		&StatusDetails{RetryAfterSeconds: int32(retryAfterSeconds)})
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
// server does not speak; the message lists what it accepts, in the words of
// the apiserver's content negotiation ("the body of the request was in an
// unknown format - accepted media types include: application/json, ...").
// Kubernetes does not repeat the content type it rejected, so contentType
// is not part of the message either; it is there for the caller's logs.
// (A PATCH with a Content-Type outside the patch types is refused earlier,
// by the router: that 415 is NewGenericServerResponse(415, "415: Unsupported Media Type").)
func NewUnsupportedMediaType(contentType string, accepted []string) *Status {
	return newStatus(http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
		"the body of the request was in an unknown format - accepted media types include: "+strings.Join(accepted, ", "),
		nil)
}

// NewForbidden: `configmaps "x" is forbidden: <why>`, 403.
func NewForbidden(gr GroupResource, name string, why string) *Status {
	var msg string
	switch {
	case gr == GroupResource{}:
		msg = "forbidden: " + why
	case name == "":
		msg = fmt.Sprintf("%s is forbidden: %s", gr, why)
	default:
		msg = fmt.Sprintf("%s %q is forbidden: %s", gr, name, why)
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

// NewGenericServerResponse is the Status Kubernetes makes up for a failure
// that has no better description, such as the router's refusals: 404 for a
// resource that does not exist, 405 for a verb a path does not take, 415
// for a PATCH whose Content-Type is not a patch type (serverMessage "415:
// Unsupported Media Type"). The message is fixed per code except for 403,
// 406 and 415, which pass serverMessage on. It mirrors
// apimachinery's errors.NewGenericServerResponse for a request that names no
// resource; its details are present but empty ("details":{}).
func NewGenericServerResponse(code int, serverMessage string) *Status {
	reason := ReasonUnknown
	message := fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	switch code {
	case http.StatusConflict:
		reason, message = ReasonConflict, "the server reported a conflict"
	case http.StatusNotFound:
		reason, message = ReasonNotFound, "the server could not find the requested resource"
	case http.StatusBadRequest:
		reason, message = ReasonBadRequest, "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		reason, message = ReasonUnauthorized, "the server has asked for the client to provide credentials"
	case http.StatusForbidden:
		reason, message = ReasonForbidden, serverMessage
	case http.StatusNotAcceptable:
		reason, message = ReasonNotAcceptable, serverMessage
		if serverMessage == "" || serverMessage == "unknown" {
			message = "the server was unable to respond with a content type that the client supports"
		}
	case http.StatusUnsupportedMediaType:
		reason, message = ReasonUnsupportedMediaType, serverMessage
	case http.StatusMethodNotAllowed:
		reason, message = ReasonMethodNotAllowed, "the server does not allow this method on the requested resource"
	case http.StatusUnprocessableEntity:
		reason, message = ReasonInvalid, "the server rejected our request due to an error in our request"
	case http.StatusServiceUnavailable:
		reason, message = ReasonServiceUnavailable, "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		reason, message = ReasonTimeout, "the server was unable to return a response in the time allotted, but may still be processing the request"
	case http.StatusTooManyRequests:
		reason, message = ReasonTooManyRequests, "the server has received too many requests and has asked us to try again later"
	default:
		if code >= 500 {
			reason = ReasonInternalError
			message = fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", serverMessage)
		}
	}
	return newStatus(int32(code), reason, message, &StatusDetails{})
}

// NewResourceVersionPreconditionConflict is the 409 a delete gets when its
// preconditions.resourceVersion is not the object's: `Operation cannot be
// fulfilled on ConfigMap "alpha": the ResourceVersion in the precondition
// (1) does not match the ResourceVersion in record (156). The object might
// have been modified`. Unlike an update's Conflict it names the kind.
func NewResourceVersionPreconditionConflict(gk GroupKind, name, precondition, current string) *Status {
	return NewConflict(GroupResource{Group: gk.Group, Resource: gk.Kind}, name,
		fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
			precondition, current))
}

// NewUIDPreconditionConflict is the 409 a delete gets when its
// preconditions.uid is not the object's: the object was deleted and made
// again under the same name.
func NewUIDPreconditionConflict(gk GroupKind, name, precondition, current string) *Status {
	return NewConflict(GroupResource{Group: gk.Group, Resource: gk.Kind}, name,
		fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated",
			precondition, current))
}

// NewTooOldResourceVersion is the 410 Expired a watch gets, as an ERROR
// event, when it starts from a revision older than the oldest the server
// still has: "too old resource version: 98 (116)".
func NewTooOldResourceVersion(asked, oldest uint64) *Status {
	return NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", asked, oldest))
}

// ListExpiredMessage is the message of the 410 a list with
// resourceVersionMatch=Exact gets for a compacted revision.
const ListExpiredMessage = "The resourceVersion for the provided list is too old."

// ContinueExpiredMessage is the message of the 410 a paged list gets when
// the revision its continue token was issued at has been compacted.
const ContinueExpiredMessage = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. " +
	"Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

// NewListExpired is the 410 for a list at a compacted revision.
func NewListExpired() *Status { return NewResourceExpired(ListExpiredMessage) }

// NewContinueExpired is the 410 for a continue token whose revision was
// compacted. It hands the client a fresh token (metadata.continue) that
// goes on from the same key at the current revision, an inconsistent but
// complete rest of the list.
func NewContinueExpired(inconsistentToken string) *Status {
	s := NewResourceExpired(ContinueExpiredMessage)
	s.Metadata.Continue = inconsistentToken
	return s
}

// ErrorToStatus turns any error into the Status the server sends for it,
// as the apiserver's ErrorToAPIStatus does. A Status in err's chain is
// returned (as a copy) with kind, apiVersion, status and a code filled in;
// any other error becomes a 500 with no reason and err's text as the
// message. That is what a real kube-apiserver answers for
// ?resourceVersion=abc (see ParseResourceVersion), a 500 rather than a 400.
func ErrorToStatus(err error) *Status {
	if err == nil {
		return nil
	}
	s, ok := StatusOf(err)
	if !ok {
		return newStatus(http.StatusInternalServerError, ReasonUnknown, err.Error(), nil)
	}
	c := *s
	if c.Details != nil {
		d := *c.Details
		d.Causes = slices.Clone(d.Causes)
		c.Details = &d
	}
	if c.Metadata.RemainingItemCount != nil {
		n := *c.Metadata.RemainingItemCount
		c.Metadata.RemainingItemCount = &n
	}
	if c.Status == "" {
		c.Status = StatusFailure
	}
	if c.Code == 0 {
		c.Code = http.StatusInternalServerError
		if c.Status == StatusSuccess {
			c.Code = http.StatusOK
		}
	}
	c.Kind, c.APIVersion = "Status", "v1"
	return &c
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
		ReasonConflict, ReasonGone, ReasonInvalid, ReasonServerTimeout, ReasonStoreReadError,
		ReasonTimeout, ReasonTooManyRequests,
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
// was compacted. A watcher must re-list; a RetryWatcher gives up here. Like
// Kubernetes' it looks at the reason only: a bare 410 is IsGone, so check
// both, as client-go's reflector does.
func IsResourceExpired(err error) bool { return ReasonOf(err) == ReasonExpired }

// IsTooManyRequests reports a 429 (by reason, or by code whatever the
// reason, as Kubernetes does for this one).
func IsTooManyRequests(err error) bool {
	return ReasonOf(err) == ReasonTooManyRequests || CodeOf(err) == http.StatusTooManyRequests
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

// IsRequestEntityTooLarge reports a 413 (by reason, or by code whatever the
// reason, as Kubernetes does for this one).
func IsRequestEntityTooLarge(err error) bool {
	return ReasonOf(err) == ReasonRequestEntityTooLarge || CodeOf(err) == http.StatusRequestEntityTooLarge
}

// IsServiceUnavailable reports a 503.
func IsServiceUnavailable(err error) bool {
	return is(err, ReasonServiceUnavailable, http.StatusServiceUnavailable)
}

// RetryAfterSeconds returns the delay a Status asks for, if any.
func RetryAfterSeconds(err error) (int, bool) {
	s, ok := StatusOf(err)
	if !ok || s.Details == nil || s.Details.RetryAfterSeconds <= 0 {
		return 0, false
	}
	return int(s.Details.RetryAfterSeconds), true
}

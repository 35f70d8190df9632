package client

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"listwatch/api"
)

// StatusError is what every non-2xx answer becomes: the request that failed
// and the Status the server sent (or, when the server sent none, the one
// client-go would have made up from the code). It unwraps to the
// *api.Status, so errors.As(err, &status) and the Is* helpers below work on
// it and on anything that wraps it.
type StatusError struct {
	// Method and URL name the request, for logs; the message does not
	// repeat them, so it reads exactly like kubectl's "Error from server".
	Method string
	URL    string
	Status *api.Status
}

// Error is the server's message, e.g. `configmaps "x" not found`.
func (e *StatusError) Error() string { return e.Status.Error() }

// Unwrap returns the Status, so errors.As finds it.
func (e *StatusError) Unwrap() error { return e.Status }

// The checks below are thin wrappers over the api package's, so a caller
// of the client needs only one import. Each looks through wrapped errors.

// IsNotFound reports a 404 NotFound.
func IsNotFound(err error) bool { return api.IsNotFound(err) }

// IsAlreadyExists reports a 409 AlreadyExists (a create of a name in use).
func IsAlreadyExists(err error) bool { return api.IsAlreadyExists(err) }

// IsConflict reports a 409 Conflict: an update or delete based on a stale
// resourceVersion, or a failed precondition.
func IsConflict(err error) bool { return api.IsConflict(err) }

// IsInvalid reports a 422 Invalid.
func IsInvalid(err error) bool { return api.IsInvalid(err) }

// IsBadRequest reports a 400 BadRequest.
func IsBadRequest(err error) bool { return api.IsBadRequest(err) }

// IsResourceExpired reports a 410 Expired: the resourceVersion or continue
// token asked for was compacted away. The only way on is to list again.
func IsResourceExpired(err error) bool { return api.IsResourceExpired(err) }

// IsGone reports a 410 with reason Gone, the older spelling of Expired.
func IsGone(err error) bool { return api.IsGone(err) }

// IsTooLargeResourceVersion reports the 504 a list gets for a
// resourceVersion the server has not reached yet.
func IsTooLargeResourceVersion(err error) bool { return api.IsTooLargeResourceVersion(err) }

// IsTooManyRequests reports a 429.
func IsTooManyRequests(err error) bool { return api.IsTooManyRequests(err) }

// IsTimeout reports a 504 Timeout.
func IsTimeout(err error) bool { return api.IsTimeout(err) }

// IsInternalError reports a 500.
func IsInternalError(err error) bool { return api.IsInternalError(err) }

// IsForbidden reports a 403.
func IsForbidden(err error) bool { return api.IsForbidden(err) }

// IsUnauthorized reports a 401.
func IsUnauthorized(err error) bool { return api.IsUnauthorized(err) }

// IsMethodNotSupported reports a 405.
func IsMethodNotSupported(err error) bool { return api.IsMethodNotSupported(err) }

// IsUnsupportedMediaType reports a 415.
func IsUnsupportedMediaType(err error) bool { return api.IsUnsupportedMediaType(err) }

// IsServiceUnavailable reports a 503.
func IsServiceUnavailable(err error) bool {
	return api.ReasonOf(err) == api.ReasonServiceUnavailable ||
		(api.ReasonOf(err) == api.ReasonUnknown && api.CodeOf(err) == http.StatusServiceUnavailable)
}

// IsProbableEOF reports whether err most likely means "the connection went
// away" rather than "the bytes were wrong": a clean or unexpected EOF, a
// reset, a broken pipe, a connection we closed ourselves, an HTTP/2 GOAWAY.
// A watch that ends with one of these ended for an ordinary reason (the
// server timed it out, restarted, a proxy dropped it) and is simply watched
// again; nothing is reported to the consumer.
//
// It mirrors k8s.io/apimachinery/pkg/util/net.IsProbableEOF, which matches
// on message text because those errors come from several layers (net,
// crypto/tls, net/http, http2) with no common type. We also look for the
// errno values and for two messages client-go leaves out: "broken pipe"
// and net/http's "server closed idle connection".
func IsProbableEOF(err error) bool {
	if err == nil {
		return false
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	msg := err.Error()
	switch {
	case msg == "http: can't write HTTP request on broken connection":
		return true
	case strings.Contains(msg, "http2: server sent GOAWAY and closed the connection"):
		return true
	case strings.Contains(msg, "http2: client connection lost"):
		// The HTTP/2 health check gave up on the connection (http2.go):
		// every watch on it was dropped, none is broken.
		return true
	case strings.Contains(msg, "connection reset by peer"):
		return true
	case strings.Contains(msg, "broken pipe"):
		return true
	case strings.Contains(msg, "server closed idle connection"):
		return true
	case strings.Contains(strings.ToLower(msg), "use of closed network connection"):
		return true
	}
	return false
}

// isTimeout reports a network timeout (a deadline that passed), which
// client-go's StreamWatcher also treats as an ordinary end of stream.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// maxErrorBodyBytes bounds how much of an error response we read: a Status
// is a few hundred bytes, and a misbehaving proxy must not make us buffer a
// whole web page.
const maxErrorBodyBytes = 1 << 20

// maxUnstructuredMessage bounds the text of a non-Status error body we
// quote in a message, as client-go does (2 KiB).
const maxUnstructuredMessage = 2048

// statusFromResponse turns a non-2xx answer into a StatusError. If the body
// is a Status (kind "Status", not "Success") that Status is the error, as
// the server meant it. Otherwise a Status is made up from the HTTP code, the
// way client-go's rest.Request.newUnstructuredResponseError does: the
// plain-text "404 page not found" of an unknown API group becomes a 404
// NotFound "the server could not find the requested resource".
func statusFromResponse(resp *http.Response, body []byte, method string, gr api.GroupResource, name string) *StatusError {
	e := &StatusError{Method: method, URL: resp.Request.URL.String()}
	var s api.Status
	if err := s.UnmarshalJSON(body); err == nil && s.Kind == "Status" && s.Status != api.StatusSuccess {
		if s.Code == 0 {
			s.Code = int32(resp.StatusCode)
		}
		e.Status = &s
		return e
	}
	message := "unknown"
	if isTextResponse(resp) {
		if len(body) > maxUnstructuredMessage {
			body = body[:maxUnstructuredMessage]
		}
		message = strings.TrimSpace(string(body))
	}
	retryAfter, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	e.Status = genericServerResponse(resp.StatusCode, method, gr, name, message, retryAfter)
	return e
}

// isTextResponse reports a text/* (or missing) Content-Type: only then is
// the body worth quoting in a message.
func isTextResponse(resp *http.Response) bool {
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	media, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.HasPrefix(media, "text/")
}

// genericServerResponse is the Status for a response that carried none. It
// follows k8s.io/apimachinery/pkg/api/errors.NewGenericServerResponse: the
// reason comes from the code (a 409 to a POST is AlreadyExists, to anything
// else Conflict), the message is a fixed sentence per code plus
// "(get configmaps x)", and the body's text is kept as an
// UnexpectedServerResponse cause.
func genericServerResponse(code int, method string, gr api.GroupResource, name, serverMessage string, retryAfter int) *api.Status {
	reason := api.ReasonUnknown
	message := fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
	switch code {
	case http.StatusConflict:
		reason = api.ReasonConflict
		if method == http.MethodPost {
			reason = api.ReasonAlreadyExists
		}
		message = "the server reported a conflict"
	case http.StatusNotFound:
		reason, message = api.ReasonNotFound, "the server could not find the requested resource"
	case http.StatusBadRequest:
		reason, message = api.ReasonBadRequest, "the server rejected our request for an unknown reason"
	case http.StatusUnauthorized:
		reason, message = api.ReasonUnauthorized, "the server has asked for the client to provide credentials"
	case http.StatusForbidden:
		reason, message = api.ReasonForbidden, serverMessage
	case http.StatusNotAcceptable:
		reason, message = api.ReasonNotAcceptable, serverMessage
		if serverMessage == "" || serverMessage == "unknown" {
			message = "the server was unable to respond with a content type that the client supports"
		}
	case http.StatusUnsupportedMediaType:
		reason, message = api.ReasonUnsupportedMediaType, serverMessage
	case http.StatusMethodNotAllowed:
		reason, message = api.ReasonMethodNotAllowed, "the server does not allow this method on the requested resource"
	case http.StatusUnprocessableEntity:
		reason, message = api.ReasonInvalid, "the server rejected our request due to an error in our request"
	case http.StatusServiceUnavailable:
		reason, message = api.ReasonServiceUnavailable, "the server is currently unable to handle the request"
	case http.StatusGatewayTimeout:
		reason, message = api.ReasonTimeout, "the server was unable to return a response in the time allotted, but may still be processing the request"
	case http.StatusTooManyRequests:
		reason, message = api.ReasonTooManyRequests, "the server has received too many requests and has asked us to try again later"
	default:
		if code >= 500 {
			reason = api.ReasonInternalError
			message = fmt.Sprintf("an error on the server (%q) has prevented the request from succeeding", serverMessage)
		}
	}
	switch {
	case gr.Resource != "" && name != "":
		message = fmt.Sprintf("%s (%s %s %s)", message, strings.ToLower(method), gr, name)
	case gr.Resource != "":
		message = fmt.Sprintf("%s (%s %s)", message, strings.ToLower(method), gr)
	}
	return &api.Status{
		Kind:       "Status",
		APIVersion: "v1",
		Status:     api.StatusFailure,
		Message:    message,
		Reason:     reason,
		Code:       int32(code),
		Details: &api.StatusDetails{
			Group:             gr.Group,
			Kind:              gr.Resource,
			Name:              name,
			Causes:            []api.StatusCause{{Type: api.CauseUnexpectedServerResponse, Message: serverMessage}},
			RetryAfterSeconds: int32(retryAfter),
		},
	}
}

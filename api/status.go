package api

import (
	"encoding/json"
	"fmt"
)

// StatusReason is the machine-readable reason of a failure. Clients branch on
// it (and on Code), so the strings are exactly Kubernetes' own.
type StatusReason string

// The reasons listwatch produces, as in k8s.io/apimachinery meta/v1 types.go.
const (
	ReasonUnknown               StatusReason = ""
	ReasonUnauthorized          StatusReason = "Unauthorized"
	ReasonForbidden             StatusReason = "Forbidden"
	ReasonNotFound              StatusReason = "NotFound"
	ReasonAlreadyExists         StatusReason = "AlreadyExists"
	ReasonConflict              StatusReason = "Conflict"
	ReasonGone                  StatusReason = "Gone"
	ReasonInvalid               StatusReason = "Invalid"
	ReasonTimeout               StatusReason = "Timeout"
	ReasonTooManyRequests       StatusReason = "TooManyRequests"
	ReasonBadRequest            StatusReason = "BadRequest"
	ReasonMethodNotAllowed      StatusReason = "MethodNotAllowed"
	ReasonNotAcceptable         StatusReason = "NotAcceptable"
	ReasonRequestEntityTooLarge StatusReason = "RequestEntityTooLarge"
	ReasonUnsupportedMediaType  StatusReason = "UnsupportedMediaType"
	ReasonInternalError         StatusReason = "InternalError"
	ReasonExpired               StatusReason = "Expired"
	ReasonServiceUnavailable    StatusReason = "ServiceUnavailable"
	// ReasonServerTimeout is a 500 asking the client to retry an operation
	// the server could not finish in time (not the 504 ReasonTimeout).
	ReasonServerTimeout StatusReason = "ServerTimeout"
	// ReasonStoreReadError: the server could not decode what it had stored.
	ReasonStoreReadError StatusReason = "StorageReadError"
)

// CauseType says what kind of problem a StatusCause describes.
type CauseType string

// Cause types used by listwatch.
const (
	CauseFieldValueInvalid        CauseType = "FieldValueInvalid"
	CauseFieldValueRequired       CauseType = "FieldValueRequired"
	CauseFieldValueForbidden      CauseType = "FieldValueForbidden"
	CauseFieldValueNotSupported   CauseType = "FieldValueNotSupported"
	CauseResourceVersionTooLarge  CauseType = "ResourceVersionTooLarge"
	CauseUnexpectedServerResponse CauseType = "UnexpectedServerResponse"
)

// Status values.
const (
	StatusSuccess = "Success"
	StatusFailure = "Failure"
)

// Status is Kubernetes' answer when there is no object to return: every
// error, and the result of some deletes. It implements error, so a Status
// travels through Go code as an ordinary error and errors.As finds it.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   ListMeta       `json:"metadata"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Reason     StatusReason   `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int32          `json:"code,omitempty"`
}

// StatusDetails names the object a Status is about and why it failed.
type StatusDetails struct {
	Name  string `json:"name,omitempty"`
	Group string `json:"group,omitempty"`
	// Kind is, for most errors, the resource name ("configmaps"), not the
	// kind; Kubernetes is inconsistent here and the fixtures show both.
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one specific problem, often tied to a field.
type StatusCause struct {
	Type    CauseType `json:"reason,omitempty"`
	Message string    `json:"message,omitempty"`
	Field   string    `json:"field,omitempty"`
}

// Error returns the Status message, so a Status reads well as a Go error.
func (s *Status) Error() string {
	if s.Message != "" {
		return s.Message
	}
	return fmt.Sprintf("status %s (code %d, reason %q)", s.Status, s.Code, s.Reason)
}

// AppendJSON appends the Status's compact JSON to dst.
func (s *Status) AppendJSON(dst []byte) []byte {
	b, err := json.Marshal((*statusJSON)(s))
	if err != nil {
		// Every field is a string, number or plain struct, so this cannot
		// happen; if it ever did, a bare 500 is still a valid Status.
		return append(dst, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","code":500}`...)
	}
	return append(dst, b...)
}

// statusJSON has Status's fields without its methods, so encoding/json uses
// the struct tags instead of recursing into MarshalJSON.
type statusJSON Status

// MarshalJSON writes the Status as Kubernetes does.
func (s *Status) MarshalJSON() ([]byte, error) { return json.Marshal((*statusJSON)(s)) }

// UnmarshalJSON reads a Status, replacing everything s held before.
func (s *Status) UnmarshalJSON(data []byte) error {
	*s = Status{}
	if err := json.Unmarshal(data, (*statusJSON)(s)); err != nil {
		return fmt.Errorf("decoding status: %w: %w", errSyntax, err)
	}
	return nil
}

func newStatus(code int32, reason StatusReason, message string, details *StatusDetails) *Status {
	return &Status{
		Kind:       "Status",
		APIVersion: "v1",
		Status:     StatusFailure,
		Message:    message,
		Reason:     reason,
		Details:    details,
		Code:       code,
	}
}

// NewDeleted is the answer to a DELETE of one object for resources that do
// not send the deleted object back (ConfigMaps do not): status Success, the
// object's name, resource and uid, and no code. It is a Status like the
// failures, but not an error anyone should return.
func NewDeleted(gr GroupResource, name, uid string) *Status {
	return &Status{
		Kind:       "Status",
		APIVersion: "v1",
		Status:     StatusSuccess,
		Details:    &StatusDetails{Name: name, Group: gr.Group, Kind: gr.Resource, UID: uid},
	}
}

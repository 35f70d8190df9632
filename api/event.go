package api

import (
	"fmt"
)

// EventType is what happened to an object, as a watch reports it.
type EventType string

// The five event types of a Kubernetes watch stream.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	// Bookmark carries no change: its object has only metadata.resourceVersion,
	// telling the client "you are up to date to here" so it can resume from it.
	Bookmark EventType = "BOOKMARK"
	// Error carries a Status instead of an object, e.g. 410 Expired.
	Error EventType = "ERROR"
)

// InitialEventsEndAnnotation marks the BOOKMARK that ends the synthetic
// ADDED events of a watch started with sendInitialEvents=true.
const InitialEventsEndAnnotation = "k8s.io/initial-events-end"

// Event is one frame of a watch stream: {"type":"ADDED","object":{...}}.
type Event struct {
	Type EventType
	// Object is the object the event is about (for BOOKMARK, an object with
	// only metadata.resourceVersion). Nil for ERROR.
	Object *Object
	// Status is set only for ERROR events.
	Status *Status
}

// MarshalJSON writes {"type":...,"object":...} compactly.
func (e *Event) MarshalJSON() ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, err
	}
	return e.AppendJSON(make([]byte, 0, 512)), nil
}

// AppendJSON appends the event's JSON (without a trailing newline) to dst.
// The event must be valid: an ERROR with a Status, anything else with an
// Object.
func (e *Event) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = appendString(dst, string(e.Type))
	dst = append(dst, `,"object":`...)
	if e.Type == Error {
		dst = e.Status.AppendJSON(dst)
	} else {
		dst = e.Object.AppendJSON(dst)
	}
	return append(dst, '}')
}

func (e *Event) validate() error {
	switch e.Type {
	case Added, Modified, Deleted, Bookmark:
		if e.Object == nil {
			return fmt.Errorf("api: %s event without an object", e.Type)
		}
	case Error:
		if e.Status == nil {
			return fmt.Errorf("api: ERROR event without a status")
		}
	default:
		return fmt.Errorf("api: unknown watch event type %q", e.Type)
	}
	return nil
}

// UnmarshalJSON reads one watch event. An unknown type or a missing object
// is an error, so a decoder never hands a half-formed event on.
func (e *Event) UnmarshalJSON(data []byte) error {
	*e = Event{}
	var rawObject []byte
	err := eachMember(data, func(key string, val []byte) error {
		switch key {
		case "type":
			var t string
			if err := unquoteInto(&t, key, val); err != nil {
				return err
			}
			e.Type = EventType(t)
		case "object":
			rawObject = val
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("decoding watch event: %w", err)
	}
	if rawObject == nil || isNull(rawObject) {
		return fmt.Errorf("decoding watch event: %w: %q event has no object", errSyntax, e.Type)
	}
	switch e.Type {
	case Added, Modified, Deleted, Bookmark:
		e.Object = &Object{}
		return e.Object.UnmarshalJSON(rawObject)
	case Error:
		e.Status = &Status{}
		return e.Status.UnmarshalJSON(rawObject)
	default:
		return fmt.Errorf("decoding watch event: %w: unknown event type %q", errSyntax, e.Type)
	}
}

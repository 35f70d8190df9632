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
	dst = AppendJSONString(dst, string(e.Type), EscapeInvalidUTF8)
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
	end, err := e.decodeAt(data, skipSpace(data, 0))
	if err == nil && skipSpace(data, end) != len(data) {
		err = fmt.Errorf("decoding watch event: %w: data after the object", errSyntax)
	}
	return err
}

// DecodeEvent decodes the watch event at the start of data (after any
// whitespace) and returns it with the number of bytes it used; what
// follows it is left alone. It is how a watch stream is framed and decoded
// in one scan: the decoder finds the end of the event as it decodes it,
// instead of a framer finding the end first and a decoder reading the
// bytes again. When data holds only the beginning of an event the error
// is the one for bytes that end too soon (a caller that may read more
// must tell that case apart itself).
func DecodeEvent(data []byte) (Event, int, error) {
	var e Event
	end, err := e.decodeAt(data, skipSpace(data, 0))
	if err != nil {
		return Event{}, 0, err
	}
	return e, end, nil
}

// decodeAt decodes the event that starts at data[i] and returns the offset
// just past it. The object is decoded where it lies when the type came
// first, as every server writes it; otherwise it is decoded once the type
// is known.
func (e *Event) decodeAt(data []byte, i int) (int, error) {
	*e = Event{}
	var rawObject []byte
	decoded := false
	end, err := walkObject(data, i, func(key string, data []byte, i int) (int, error) {
		switch key {
		case "type":
			end, err := skipValue(data, i)
			if err != nil {
				return 0, err
			}
			var t string
			if err := unquoteInto(&t, key, data[i:end]); err != nil {
				return 0, err
			}
			e.Type = EventType(t)
			return end, nil
		case "object":
			if isObjectType(e.Type) && data[i] == '{' {
				o := &Object{}
				if end, err := o.decodeAt(data, i); err == nil {
					e.Object, decoded, rawObject = o, true, data[i:end]
					return end, nil
				}
				// Not an Object: keep the bytes, and let the type the
				// event ends up with decide (below), as for any order.
			}
			end, err := skipValue(data, i)
			if err != nil {
				return 0, err
			}
			e.Object, decoded, rawObject = nil, false, data[i:end]
			return end, nil
		default:
			return skipValue(data, i)
		}
	})
	if err != nil {
		return 0, fmt.Errorf("decoding watch event: %w", err)
	}
	if decoded && isObjectType(e.Type) {
		return end, nil
	}
	// The object came before the type, or the type changed after it (a
	// repeated "type" member): decode its bytes now.
	e.Object = nil
	if rawObject == nil || isNull(rawObject) {
		return 0, fmt.Errorf("decoding watch event: %w: %q event has no object", errSyntax, e.Type)
	}
	switch e.Type {
	case Added, Modified, Deleted, Bookmark:
		e.Object = &Object{}
		return end, e.Object.UnmarshalJSON(rawObject)
	case Error:
		e.Status = &Status{}
		return end, e.Status.UnmarshalJSON(rawObject)
	default:
		return 0, fmt.Errorf("decoding watch event: %w: unknown event type %q", errSyntax, e.Type)
	}
}

// isObjectType reports the event types whose object is an Object.
func isObjectType(t EventType) bool {
	switch t {
	case Added, Modified, Deleted, Bookmark:
		return true
	}
	return false
}

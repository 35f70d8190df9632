package registry

import (
	"bytes"
	"encoding/json"

	"listwatch/api"
)

// The conversion between an events.k8s.io/v1 Event and a core/v1 Event,
// as kube-apiserver 1.37.2 does it (k8s.io/kubernetes
// pkg/apis/events/v1/conversion.go, Convert_v1_Event_To_core_Event and
// Convert_core_Event_To_v1_Event, with the generated autoConvert_* of
// zz_generated.conversion.go for the fields of the same name): regarding
// is involvedObject, note is message, reportingController is
// reportingComponent, deprecatedSource, deprecatedFirstTimestamp,
// deprecatedLastTimestamp and deprecatedCount are source, firstTimestamp,
// lastTimestamp and count; eventTime, series, reportingInstance, action,
// reason, related and type keep their names. Fields neither version has
// are dropped.

// eventField is one field of an Event version: its name, the other
// version's name for it, and what that version's Go struct writes when it
// is empty ("": nothing, the field is omitempty).
type eventField struct {
	name, other string
	empty       string
}

// eventsV1EventFields are events.k8s.io/v1's fields in its Go struct's
// order (k8s.io/api/events/v1 Event), and the core names they convert to.
var eventsV1EventFields = []eventField{
	{"eventTime", "eventTime", "null"},
	{"series", "series", ""},
	{"reportingController", "reportingComponent", ""},
	{"reportingInstance", "reportingInstance", ""},
	{"action", "action", ""},
	{"reason", "reason", ""},
	{"regarding", "involvedObject", "{}"},
	{"related", "related", ""},
	{"note", "message", ""},
	{"type", "type", ""},
	{"deprecatedSource", "source", "{}"},
	{"deprecatedFirstTimestamp", "firstTimestamp", "null"},
	{"deprecatedLastTimestamp", "lastTimestamp", "null"},
	{"deprecatedCount", "count", ""},
}

// coreEventFieldsInOrder are core/v1's fields in its Go struct's order
// (k8s.io/api/core/v1 Event), and the events.k8s.io names they convert to.
var coreEventFieldsInOrder = []eventField{
	{"involvedObject", "regarding", "{}"},
	{"reason", "reason", ""},
	{"message", "note", ""},
	{"source", "deprecatedSource", "{}"},
	{"firstTimestamp", "deprecatedFirstTimestamp", "null"},
	{"lastTimestamp", "deprecatedLastTimestamp", "null"},
	{"count", "deprecatedCount", ""},
	{"type", "type", ""},
	{"eventTime", "eventTime", "null"},
	{"series", "series", ""},
	{"action", "action", ""},
	{"related", "related", ""},
	{"reportingComponent", "reportingController", `""`},
	{"reportingInstance", "reportingInstance", `""`},
}

// eventStoredAsCore stores events.k8s.io/v1 Events as core/v1 Events.
var eventStoredAsCore = &StoredAs{
	ToStorage:   func(o *api.Object) *api.Object { return convertEvent(o, coreEventFieldsInOrder, "v1") },
	FromStorage: func(o *api.Object) *api.Object { return convertEvent(o, eventsV1EventFields, "events.k8s.io/v1") },
}

// convertEvent builds the Event of apiVersion whose fields are to, each
// read from in under its other name, written as the target's Go struct
// writes it: in its order, empty omitempty fields left out, empty struct
// fields as their zero value ({} or null).
func convertEvent(in *api.Object, to []eventField, apiVersion string) *api.Object {
	out := &api.Object{APIVersion: apiVersion, Kind: "Event", Metadata: in.Metadata.DeepCopy(),
		Fields: make([]api.Field, 0, len(to))}
	for _, f := range to {
		v := in.Get(f.other)
		switch {
		case isEmptyJSON(v) && f.empty == "":
			continue
		case v == nil || bytes.Equal(v, []byte("null")):
			v = json.RawMessage(f.empty)
		}
		out.Fields = append(out.Fields, api.Field{Name: f.name, Value: append(json.RawMessage(nil), v...)})
	}
	return out
}

// isEmptyJSON reports whether v is what encoding/json's omitempty leaves
// out (absent, null, "", 0, false) for the fields an Event has.
func isEmptyJSON(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "", "null", `""`, "0", "false":
		return true
	}
	return false
}

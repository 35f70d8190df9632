package registry

import (
	"strings"
	"time"

	"listwatch/api"
)

// The printer columns of the kinds controllers work with: ReplicaSets,
// Leases and Events, as kube-apiserver v1.37.2 prints them
// (pkg/printers/internalversion/printers.go: printReplicaSet, printLease,
// printEvent; ServiceAccounts have only Name and Age). Descriptions are
// the SwaggerDoc of the field each column shows (k8s.io/api v0.37.2), as
// the recorded Tables carry them (table-list-replicasets-kubectl.json,
// table-list-leases-kubectl.json, table-list-events-kubectl.json).

// ReplicaSets: printReplicaSet. Desired, Current and Ready are integer
// columns with numeric cells.
var (
	replicaSetColumns = []Column{
		intCol("Desired", "Replicas is the number of desired pods. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
			"spec", "replicas"),
		intCol("Current", "Replicas is the most recently observed number of non-terminating pods. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicaset",
			"status", "replicas"),
		intCol("Ready", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
			"status", "readyReplicas"),
	}
	replicaSetWideColumns = templateWideColumns("Selector is a label query over pods that should match the replica count. Label keys and values that must match in order to be controlled by this replica set. It must match the pod template's labels. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors")
)

// intCol is an integer column whose cell is the number at path (0 when
// absent).
func intCol(name, description string, path ...string) Column {
	c := col(name, description, 0, func(o *api.Object) any { var n int64; field(o, &n, path...); return n })
	c.def.Type = "integer"
	return c
}

// Leases: printLease.
var leaseColumns = []Column{
	col("Holder", "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.", 0,
		func(o *api.Object) any { var s string; field(o, &s, "spec", "holderIdentity"); return s }),
}

// Events: printEvent. Its table has no leading Name and no Age: Last Seen,
// Type, Reason, Object, Message, and (priority 1) Subobject, Source, First
// Seen, Count and Name among them. The server fills every column.
var eventColumns = eventColumnsOf(coreEventFields)

// eventFields names where an Event version keeps what printEvent reads:
// core/v1 and events.k8s.io/v1 name the same things differently
// (pkg/apis/events/v1/conversion.go).
type eventFields struct {
	object, message, first, last, count, source, reportingController string
}

var (
	coreEventFields = eventFields{object: "involvedObject", message: "message", first: "firstTimestamp",
		last: "lastTimestamp", count: "count", source: "source", reportingController: "reportingComponent"}
	eventsV1Fields = eventFields{object: "regarding", message: "note", first: "deprecatedFirstTimestamp",
		last: "deprecatedLastTimestamp", count: "deprecatedCount", source: "deprecatedSource", reportingController: "reportingController"}
)

// eventRow is what printEvent computes from one Event.
type eventRow struct {
	lastSeen, firstSeen, typ, reason, target, fieldPath, source, message string
	count                                                                int64
}

func eventColumnsOf(f eventFields) []Column {
	cell := func(get func(eventRow) any) func(*api.Object) any {
		return func(o *api.Object) any { return get(readEvent(o, f, time.Now())) }
	}
	return []Column{
		col("Last Seen", "The time at which the most recent occurrence of this event was recorded.", 0, cell(func(e eventRow) any { return e.lastSeen })),
		col("Type", "Type of this event (Normal, Warning), new types could be added in the future", 0, cell(func(e eventRow) any { return e.typ })),
		col("Reason", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", 0, cell(func(e eventRow) any { return e.reason })),
		col("Object", "The object that this event is about.", 0, cell(func(e eventRow) any { return e.target })),
		col("Subobject", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", 1,
			cell(func(e eventRow) any { return e.fieldPath })),
		col("Source", "The component reporting this event. Should be a short machine understandable string.", 1, cell(func(e eventRow) any { return e.source })),
		col("Message", "A human-readable description of the status of this operation.", 0, cell(func(e eventRow) any { return e.message })),
		col("First Seen", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1, cell(func(e eventRow) any { return e.firstSeen })),
		col("Count", "The number of times this event has occurred.", 1, cell(func(e eventRow) any { return e.count })),
		nameCol(),
	}
}

// nameCol is the Name column where a kind puts it elsewhere than first
// (Events: last, priority 1).
func nameCol() Column {
	def := nameColumnDef
	def.Priority = 1
	return Column{def: def, cell: func(o *api.Object) any { return o.Metadata.Name }}
}

// readEvent computes printEvent's cells: first seen falls back to
// eventTime, last seen to first seen; a series gives last seen and count;
// a singleton without a count counts 1; the object is "kind/name" in lower
// case.
func readEvent(o *api.Object, f eventFields, now time.Time) eventRow {
	var e eventRow
	var ref struct{ Kind, Name, FieldPath string }
	field(o, &ref, f.object)
	field(o, &e.typ, "type")
	field(o, &e.reason, "reason")
	field(o, &e.message, f.message)
	e.message = strings.TrimSpace(e.message)
	e.fieldPath = ref.FieldPath
	e.target = strings.ToLower(ref.Kind)
	if ref.Name != "" {
		e.target += "/" + ref.Name
	}
	e.firstSeen = timestampSince(o, now, f.first)
	if !hasTimestamp(o, f.first) {
		e.firstSeen = timestampSince(o, now, "eventTime")
	}
	e.lastSeen = timestampSince(o, now, f.last)
	if !hasTimestamp(o, f.last) {
		e.lastSeen = e.firstSeen
	}
	field(o, &e.count, f.count)
	var series struct{ Count int64 }
	if field(o, &series, "series") {
		e.lastSeen = timestampSince(o, now, "series", "lastObservedTime")
		e.count = series.Count
	} else if e.count == 0 {
		e.count = 1
	}
	var src struct{ Component, Host string }
	field(o, &src, f.source)
	var controller, instance string
	field(o, &controller, f.reportingController)
	field(o, &instance, "reportingInstance")
	e.source = firstNonEmpty(src.Component, controller)
	if host := firstNonEmpty(src.Host, instance); host != "" {
		e.source += ", " + host
	}
	return e
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hasTimestamp reports whether the time at path is set (not absent, null
// or empty).
func hasTimestamp(o *api.Object, path ...string) bool {
	var s string
	return field(o, &s, path...) && s != ""
}

// timestampSince is translateTimestampSince: the age of the time at path,
// or "<unknown>".
func timestampSince(o *api.Object, now time.Time, path ...string) string {
	var s string
	if !field(o, &s, path...) || s == "" {
		return "<unknown>"
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "<unknown>"
	}
	return age(t, now)
}

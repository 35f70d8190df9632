package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/internal/clock"
	"listwatch/narrate"
)

// Events are how a controller tells people what it did: "Scaled up replica
// set web-5d4f9 from 0 to 2", "Created pod: web-5d4f9-x7k2p". Each is a
// core/v1 Event naming the object it is about (involvedObject), which
// `kubectl describe deployment web` lists under Events, found by a field
// selector on involvedObject.

// The event types (core/v1 EventTypeNormal, EventTypeWarning).
const (
	EventTypeNormal  = "Normal"
	EventTypeWarning = "Warning"
)

// ObjectReference names the object an Event is about (core/v1
// ObjectReference). Objects read from an informer's cache carry no
// apiVersion or kind, so a controller says them.
type ObjectReference struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace,omitempty"`
	Name            string `json:"name"`
	UID             string `json:"uid"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// RefOf is the reference to obj, of kind in apiVersion.
func RefOf(obj *api.Object, apiVersion, kind string) ObjectReference {
	return ObjectReference{APIVersion: apiVersion, Kind: kind, Namespace: obj.Metadata.Namespace, Name: obj.Metadata.Name,
		UID: obj.Metadata.UID, ResourceVersion: obj.Metadata.ResourceVersion}
}

// EventRecorder records Events (client-go's tools/record EventRecorder).
// Recording never blocks the controller and never fails it: an Event that
// cannot be written is dropped.
type EventRecorder interface {
	Eventf(ref ObjectReference, eventType, reason, messageFmt string, args ...any)
}

// NopRecorder records nothing.
type NopRecorder struct{}

// Eventf does nothing.
func (NopRecorder) Eventf(ObjectReference, string, string, string, ...any) {}

// eventQueueLength is how many Events may wait to be written before new
// ones are dropped (client-go's broadcaster queues 1000:
// maxQueuedEvents in tools/record/event.go).
const eventQueueLength = 1000

// Broadcaster writes the Events of every recorder made from it, one at a
// time, in the background: client-go's EventBroadcaster with
// StartRecordingToSink. Unlike client-go it does not aggregate repeated
// Events into one with a count (EventCorrelator): each is its own object.
type Broadcaster struct {
	client *client.Client
	clock  clock.Clock
	tr     *narrate.Tracer
	queue  chan event
}

type event struct {
	ns  string
	obj *api.Object
}

// NewBroadcaster returns a Broadcaster writing through c; Run writes.
func NewBroadcaster(c *client.Client, s Settings) *Broadcaster {
	s = s.WithDefaults()
	return &Broadcaster{client: c, clock: s.Clock, tr: s.Tracer, queue: make(chan event, eventQueueLength)}
}

// Run writes queued Events until ctx ends.
func (b *Broadcaster) Run(ctx context.Context) {
	events := b.client.Resource(api.GroupVersionResource{Version: "v1", Resource: "events"})
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-b.queue:
			if _, err := events.Namespace(e.ns).Create(ctx, e.obj); err != nil && ctx.Err() == nil {
				// A namespace being deleted refuses them, as do faults;
				// client-go retries a few times, then drops them too.
				b.tr.Printf(narrate.Controller, "events: dropped %s: %v", e.obj.Metadata.Name, err)
			}
		}
	}
}

// NewRecorder returns a recorder whose Events name component as their
// source ("deployment-controller").
func (b *Broadcaster) NewRecorder(component string) EventRecorder {
	return &recorder{b: b, component: component}
}

type recorder struct {
	b         *Broadcaster
	component string
}

// Eventf queues an Event about ref, or drops it if the queue is full.
func (r *recorder) Eventf(ref ObjectReference, eventType, reason, messageFmt string, args ...any) {
	now := r.b.clock.Now().UTC()
	ns := ref.Namespace
	if ns == "" {
		ns = "default" // as makeEvent does for cluster-scoped objects
	}
	obj := &api.Object{APIVersion: "v1", Kind: "Event", Metadata: api.ObjectMeta{
		// util.GenerateEventName: the object's name and the time in hex nanoseconds.
		Name: fmt.Sprintf("%v.%x", ref.Name, now.UnixNano()), Namespace: ns,
	}}
	stamp := now.Truncate(time.Second).Format(time.RFC3339)
	fields := []struct {
		name  string
		value any
	}{
		{"involvedObject", ref}, {"reason", reason}, {"message", fmt.Sprintf(messageFmt, args...)},
		{"source", map[string]string{"component": r.component}},
		{"firstTimestamp", stamp}, {"lastTimestamp", stamp}, {"count", 1}, {"type", eventType},
		{"reportingComponent", r.component}, {"reportingInstance", ""},
	}
	for _, f := range fields {
		raw, _ := json.Marshal(f.value) // strings, ints and a plain struct
		_ = obj.Set(f.name, raw)        // a fresh object: cannot fail
	}
	select {
	case r.b.queue <- event{ns: ns, obj: obj}:
	default:
		r.b.tr.Printf(narrate.Controller, "events: queue full, dropped %s %s", reason, ref.Name)
	}
}

package informer

import (
	"time"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/internal/clock"
	"listwatch/narrate"
	"listwatch/reflector"
)

// QueueKind names the queue between the Reflector and HandleDeltas.
type QueueKind string

// The two queues package fifo provides.
const (
	// RealFIFO keeps every delta in arrival order; client-go's informers
	// use it since Kubernetes 1.33. The default.
	RealFIFO QueueKind = "RealFIFO"
	// DeltaFIFO merges the deltas of each key and keeps the key's place in
	// line: the classic informer queue.
	DeltaFIFO QueueKind = "DeltaFIFO"
)

// TransformFunc rewrites an object before it is queued and cached, e.g. to
// drop fields a program never reads and save memory (client-go's
// cache.TransformFunc). It receives each object as decoded, owned by the
// informer, and may modify it in place and return it.
type TransformFunc func(obj *api.Object) (*api.Object, error)

// Options configures a SharedIndexInformer. The zero value is client-go's
// default informer.
type Options struct {
	// ResyncPeriod is the resync period of handlers added without one of
	// their own; 0 means no resyncs. The informer's resync timer runs at
	// the shortest period any handler registered before Run asked for.
	ResyncPeriod time.Duration
	// Indexers are extra indexes; the namespace index is always there.
	Indexers Indexers
	// Queue picks the queue: RealFIFO (default) or DeltaFIFO.
	Queue QueueKind
	// NewQueue, if set, builds the queue instead (overrides Queue).
	NewQueue func(fifo.Options) fifo.Queue
	// Transform, if set, is applied to every object before it is queued,
	// hence before it is cached or seen by a handler.
	Transform TransformFunc
	// Tracer narrates every layer: it is handed to the Reflector, the
	// queue, the Indexer and the processor. nil is silent.
	Tracer *narrate.Tracer
	// Clock defaults to the real clock; tests pass a clock.Fake.
	Clock clock.Clock
	// Reflector is passed through to the Reflector (name, watch timeouts,
	// page size, watch-list, selectors, backoff). Its ResyncPeriod,
	// ShouldResync, Clock and Tracer are set by the informer.
	Reflector reflector.Options
}

// HandlerOptions configures one handler registration.
type HandlerOptions struct {
	// Name identifies the handler in narration and Backlog; defaults to
	// "handler-N" in registration order.
	Name string
	// ResyncPeriod, if set, overrides the informer's ResyncPeriod for this
	// handler.
	ResyncPeriod *time.Duration
}

// minimumResyncPeriod is the shortest resync a handler may ask for.
const minimumResyncPeriod = time.Second

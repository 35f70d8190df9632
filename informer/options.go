package informer

import (
	"time"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/internal/clock"
	"listwatch/narrate"
	"listwatch/reflector"
)

// QueueKind names the queue between the Reflector and handleDeltas.
type QueueKind string

// The three queues client-go's informers have used, oldest last. Each is
// a package fifo queue; see docs/07-deltafifo.md for how they differ and
// why Kubernetes moved from one to the next.
const (
	// AtomicFIFO is a fifo.RealFIFO with Atomic and UnlockWhileProcessing:
	// a re-list is one ReplacedAll delta whose tombstones the informer
	// computes when it pops it, a resync one SyncAll delta, and the queue
	// is unlocked while the informer handles a delta. client-go's default
	// since Kubernetes 1.36 (feature gates AtomicFIFO and
	// UnlockWhileProcessingFIFO, beta, on). The default here.
	AtomicFIFO QueueKind = "AtomicFIFO"
	// RealFIFO is the 1.33-1.35 queue (InOrderInformers without
	// AtomicFIFO): every delta in arrival order, a re-list queued as
	// tombstones then one Replaced delta per object, computed by the queue
	// against the informer's cache, and the lock held while processing.
	RealFIFO QueueKind = "RealFIFO"
	// DeltaFIFO merges the deltas of each key and keeps the key's place in
	// line: the informer queue until 1.33, and the one the source articles
	// describe.
	DeltaFIFO QueueKind = "DeltaFIFO"
)

// QueueKinds lists every queue kind, newest first.
func QueueKinds() []QueueKind { return []QueueKind{AtomicFIFO, RealFIFO, DeltaFIFO} }

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
	// Queue picks the queue: AtomicFIFO (default), RealFIFO or DeltaFIFO.
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

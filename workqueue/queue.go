package workqueue

import (
	"context"
	"sync"

	"listwatch/internal/clock"
	"listwatch/narrate"
)

// Interface is what a controller's workers use: Add a key, Get it, work on
// it, call Done. It is client-go's workqueue.TypedInterface.
type Interface[T comparable] interface {
	// Add queues item unless it is already waiting. An item added while a
	// worker holds it is queued again once that worker calls Done.
	Add(item T)
	// Len is the number of items waiting (not those being processed).
	Len() int
	// Get blocks until an item is waiting and hands it to the caller, who
	// must call Done with it. shutdown is true once the queue is shut down
	// and empty; ShutDown is how a blocked Get is released.
	Get() (item T, shutdown bool)
	// Done says the worker has finished with item.
	Done(item T)
	// ShutDown stops accepting items and releases every blocked Get once
	// the waiting items are gone.
	ShutDown()
	// ShutDownWithDrain is ShutDown that also waits until every item handed
	// out has been marked Done, or until ctx ends.
	ShutDownWithDrain(ctx context.Context) error
	// ShuttingDown reports whether ShutDown was called.
	ShuttingDown() bool
}

// Config configures a queue. The zero value is usable.
type Config struct {
	// Name labels the queue's narration lines and metrics.
	Name string
	// Clock tells the time for metrics and delays; nil is the wall clock.
	Clock clock.Clock
	// Tracer narrates adds, gets, dones, delays and retries; nil is silent.
	Tracer *narrate.Tracer
}

func (c Config) withDefaults() Config {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

// Queue is the basic work queue: a FIFO with two sets that give it its
// guarantees. dirty holds every item that needs processing (waiting or
// added again while held); processing holds the items a worker has. An item
// is in the FIFO only if it is dirty and not being processed, so no two
// workers ever hold the same item, and an item changed while being worked on
// is not lost: it stays dirty and goes back in the FIFO at Done.
//
// It is client-go's workqueue.Typed.
type Queue[T comparable] struct {
	cfg  Config
	name string

	mu   sync.Mutex
	cond *sync.Cond // signalled when an item is queued or the queue shuts down
	// fifo is the order items are handed out in; head indexes its first
	// live element, so Get is O(1) without shifting the slice each time.
	fifo       []T
	head       int
	dirty      map[T]struct{}
	processing map[T]struct{}

	shuttingDown bool
	// doneSignal is closed and replaced whenever a Done leaves no item in
	// processing, so ShutDownWithDrain can wait with a context.
	doneSignal chan struct{}

	metrics *metrics[T]
}

var _ Interface[string] = (*Queue[string])(nil)

// New returns an empty queue.
func New[T comparable](cfg Config) *Queue[T] {
	cfg = cfg.withDefaults()
	q := &Queue[T]{
		cfg:        cfg,
		name:       cfg.Name,
		dirty:      map[T]struct{}{},
		processing: map[T]struct{}{},
		doneSignal: make(chan struct{}),
		metrics:    newMetrics[T](cfg.Clock),
	}
	if q.name == "" {
		q.name = "queue"
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues item. It does nothing when item is already waiting (the
// queue de-duplicates: ten changes to one object before a worker gets to it
// are one reconcile), or when the queue is shutting down.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item)
}

func (q *Queue[T]) addLocked(item T) {
	if q.shuttingDown {
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: add %v dropped: shutting down", q.name, item)
		return
	}
	if _, ok := q.dirty[item]; ok {
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: add %v: already queued, merged", q.name, item)
		return
	}
	q.metrics.add(item)
	q.dirty[item] = struct{}{}
	if _, ok := q.processing[item]; ok {
		// A worker holds it: Done will queue it again. Queuing it now
		// would let a second worker process it at the same time.
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: add %v while a worker holds it: queued again at Done", q.name, item)
		return
	}
	q.push(item)
	q.cfg.Tracer.Printf(narrate.Workqueue, "%s: add %v (depth %d)", q.name, item, q.lenLocked())
	q.cond.Signal()
}

func (q *Queue[T]) push(item T) {
	q.fifo = append(q.fifo, item)
	q.metrics.setDepth(q.lenLocked())
}

func (q *Queue[T]) pop() T {
	item := q.fifo[q.head]
	var zero T
	q.fifo[q.head] = zero // let the garbage collector have it
	q.head++
	if q.head == len(q.fifo) {
		q.fifo, q.head = q.fifo[:0], 0
	} else if q.head > 64 && q.head*2 > len(q.fifo) {
		// Compact once the dead prefix is the larger half.
		n := copy(q.fifo, q.fifo[q.head:])
		clear(q.fifo[n:])
		q.fifo, q.head = q.fifo[:n], 0
	}
	q.metrics.setDepth(q.lenLocked())
	return item
}

func (q *Queue[T]) lenLocked() int { return len(q.fifo) - q.head }

// Len returns the number of items waiting to be handed out.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.lenLocked()
}

// Get blocks until an item is waiting, marks it as being processed and
// returns it. After ShutDown, Get still hands out the items that were
// waiting; it returns shutdown=true once none is left.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.lenLocked() == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.lenLocked() == 0 {
		var zero T
		return zero, true
	}
	item = q.pop()
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	q.metrics.get(item)
	q.cfg.Tracer.Printf(narrate.Workqueue, "%s: get %v → worker (depth %d)", q.name, item, q.lenLocked())
	return item, false
}

// Done marks item as processed. If it was added again meanwhile, it goes
// back in the FIFO now.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[item]; !ok {
		return // Done without Get (or twice): nothing to release
	}
	q.metrics.done(item)
	delete(q.processing, item)
	if _, ok := q.dirty[item]; ok {
		q.push(item)
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: done %v, changed meanwhile: queued again (depth %d)", q.name, item, q.lenLocked())
		q.cond.Signal()
	} else {
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: done %v", q.name, item)
	}
	if len(q.processing) == 0 {
		close(q.doneSignal)
		q.doneSignal = make(chan struct{})
	}
}

// ShutDown makes the queue refuse new items and releases blocked Gets once
// the waiting items are handed out. Items being processed are not waited
// for; use ShutDownWithDrain for that.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.shuttingDown {
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: shut down (%d waiting, %d in progress)", q.name, q.lenLocked(), len(q.processing))
	}
	q.shuttingDown = true
	q.cond.Broadcast()
}

// ShutDownWithDrain shuts the queue down and then waits until every item
// handed out has been marked Done. Workers must keep calling Get and Done
// meanwhile. It returns ctx's error if ctx ends first: a worker that never
// calls Done cannot hang the caller forever.
func (q *Queue[T]) ShutDownWithDrain(ctx context.Context) error {
	q.ShutDown()
	for {
		q.mu.Lock()
		if len(q.processing) == 0 {
			q.mu.Unlock()
			return nil
		}
		wait := q.doneSignal
		q.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ShuttingDown reports whether ShutDown has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

// Metrics returns a snapshot of the queue's metrics.
func (q *Queue[T]) Metrics() Metrics {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.metrics.snapshot(q.name)
}

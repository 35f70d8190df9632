package fifo

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"listwatch/api"
	"listwatch/narrate"
)

// ErrClosed is returned by Pop once the queue is closed and drained.
var ErrClosed = errors.New("fifo: queue closed")

// errNilContext and errNilProcess reject a Pop that could only panic.
var (
	errNilContext = errors.New("fifo: Pop needs a non-nil context")
	errNilProcess = errors.New("fifo: Pop needs a non-nil process function")
)

// Options configures a queue.
type Options struct {
	// KnownObjects is the consumer's cache. With it, Replace emits
	// tombstones for cached keys the list lacks, Resync has something to
	// resync, and DeltaFIFO's Delete trusts deletions of cached keys. May be
	// nil: the queue then knows only what it holds.
	KnownObjects KnownObjects
	// Atomic (RealFIFO only) is client-go's AtomicFIFO, on by default since
	// Kubernetes 1.36: Replace queues the whole list as one ReplacedAll
	// delta and Resync queues one SyncAll delta, and the consumer works out
	// tombstones and re-deliveries against its own cache when it pops them.
	// The queue then never reads KnownObjects (it is ignored), which is
	// what allows UnlockWhileProcessing. Bookmark queues Bookmark deltas.
	Atomic bool
	// UnlockWhileProcessing (RealFIFO with Atomic only; ignored otherwise)
	// is client-go's UnlockWhileProcessingFIFO, on by default since 1.36:
	// Pop releases the queue's lock while process runs, so the Reflector
	// can keep queueing while a handler works, unless the queue already
	// holds unlockBelow deltas (then the lock is kept, which holds the
	// Reflector back instead of letting the queue grow without bound).
	// Only one goroutine may Pop.
	UnlockWhileProcessing bool
	// Tracer narrates each queued and popped delta; nil is silent.
	Tracer *narrate.Tracer
}

// Queue is what the Reflector writes to and the informer pops from. Both
// DeltaFIFO and RealFIFO implement it.
type Queue interface {
	Add(obj *api.Object) error
	Update(obj *api.Object) error
	Delete(obj *api.Object) error
	// Replace is a re-list: Replaced deltas for every listed object and
	// tombstones for known keys the list no longer has, or (atomic
	// RealFIFO) one ReplacedAll delta.
	Replace(list []*api.Object, resourceVersion string) error
	// Resync queues Sync deltas for known keys with nothing queued, or
	// (atomic RealFIFO) one SyncAll delta.
	Resync() error
	// Pop blocks until an item is ready, then calls process with its deltas
	// while no other Pop runs (and, unless the queue unlocks while
	// processing, while nothing can be queued). isInInitialList is true while the items from
	// the first Replace are being popped. Returns ErrClosed after Close
	// (once what was queued has been popped) or ctx.Err() when ctx is done.
	// An error from process is returned.
	Pop(ctx context.Context, process func(deltas Deltas, isInInitialList bool) error) error
	// HasSynced is true once the first Replace's items have all been popped.
	HasSynced() bool
	// Len is the number of keys (DeltaFIFO) or deltas (RealFIFO) queued.
	Len() int
	// Close unblocks Pop.
	Close()
}

var (
	_ Queue = (*DeltaFIFO)(nil)
	_ Queue = (*RealFIFO)(nil)
)

// core is the part both queues share: one lock, the wake-up of blocked Pops,
// Close, and the bookkeeping behind HasSynced. Every method ending in Locked
// expects mu to be held.
type core struct {
	mu sync.Mutex
	// changed is closed (and forgotten) at the next enqueue or Close, to
	// wake Pops blocked on an empty queue. A sync.Cond would do the same
	// but cannot also wait for a context to be done.
	changed chan struct{}
	closed  bool

	// populated turns true at the first Replace, or at the first
	// Add/Update/Delete if those come first (then there is no initial list
	// to wait for). initialPopulationCount is how many items that first
	// Replace left in the queue; each Pop of one counts it down. The queue
	// has synced once both say so, and stays synced for good.
	populated              bool
	initialPopulationCount int
	synced                 chan struct{} // closed when synced
	hasSynced              bool

	known KnownObjects
	tr    *narrate.Tracer
}

func newCore(opts Options) core {
	return core{synced: make(chan struct{}), known: opts.KnownObjects, tr: opts.Tracer}
}

// wakeLocked wakes every Pop waiting for an item.
func (c *core) wakeLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// waitLocked returns once ready() holds, the queue is closed with nothing
// ready (ErrClosed), or ctx is done (ctx.Err()). It is entered and left with
// mu held, and releases mu only while it sleeps.
func (c *core) waitLocked(ctx context.Context, ready func() bool) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if ready() {
			return nil
		}
		// Like client-go, a closed queue still hands out what it holds:
		// Close stops the wait, not the draining.
		if c.closed {
			return ErrClosed
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-changed:
		}
		c.mu.Lock()
	}
}

// checkPopArgs rejects arguments Pop could only panic on.
func checkPopArgs(ctx context.Context, process func(Deltas, bool) error) error {
	if ctx == nil {
		return errNilContext
	}
	if process == nil {
		return errNilProcess
	}
	return nil
}

// populatedLocked records an Add/Update/Delete: if it comes before any
// Replace, there is no initial list and the queue is synced at once.
func (c *core) populatedLocked() {
	c.populated = true
	c.checkSyncedLocked()
}

// firstReplaceLocked records the first Replace, which left queued items in
// the queue that make up the initial list.
func (c *core) firstReplaceLocked(queued int) {
	if c.populated {
		return
	}
	c.populated = true
	c.initialPopulationCount = queued
	c.checkSyncedLocked()
}

// poppedLocked counts one item of the initial list as delivered.
func (c *core) poppedLocked() {
	if c.initialPopulationCount > 0 {
		c.initialPopulationCount--
		c.checkSyncedLocked()
	}
}

func (c *core) checkSyncedLocked() {
	if !c.hasSynced && c.populated && c.initialPopulationCount == 0 {
		c.hasSynced = true
		close(c.synced)
	}
}

func (c *core) hasSyncedNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hasSynced
}

func (c *core) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	c.wakeLocked()
}

func (c *core) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// keyAll keys every listed object before anything is queued, so a list with
// one bad item is refused whole instead of half applied.
func keyAll(list []*api.Object) ([]string, map[string]bool, error) {
	keys := make([]string, len(list))
	set := make(map[string]bool, len(list))
	for i, obj := range list {
		k, err := KeyOf(obj)
		if err != nil {
			return nil, nil, fmt.Errorf("fifo: Replace: item %d: %w", i, err)
		}
		keys[i] = k
		set[k] = true
	}
	return keys, set, nil
}

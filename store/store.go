package store

import (
	"context"
	"sync"
	"sync/atomic"

	"listwatch/api"
	"listwatch/narrate"
)

// Store is the toy etcd: a versioned in-memory key-value store of objects.
//
// One RWMutex guards everything. Writes are short (a map update, an insert
// into one chunk of the key index for a new key, one history slot, a
// non-blocking send per watcher), so a single lock keeps the commit order,
// the history order and the order every watcher sees identical without any
// further coordination.
type Store struct {
	opts Options
	tr   *narrate.Tracer

	// closedc is closed by Close; catching-up watchers select on it.
	closedc chan struct{}
	// catchUps counts the goroutines of watchers still replaying history
	// or feeding a spill (spill.go), so Close can wait for them.
	catchUps sync.WaitGroup
	// compactor is the background compaction goroutine, if any.
	compactor sync.WaitGroup

	// rev mirrors the current revision for lock-free Revision(); it is only
	// written with mu held.
	rev atomic.Int64

	mu        sync.RWMutex
	closed    bool
	compacted int64
	objs      map[string]entry
	keys      keyIndex // every key in objs, sorted, for prefix lists and paging
	hist      *history
	// watchers are the live watchers: caught up with history, fed by the
	// writer with a non-blocking send as each event commits (or queued
	// aside while spilling, spill.go).
	watchers []*watcher
}

// entry is one key's current state.
type entry struct {
	obj    *api.Object // shared, read-only
	modRev int64
}

// firstRevision is the revision of an empty store. It is above zero because
// Kubernetes gives resourceVersion "0" a meaning of its own ("any state you
// have"), so no real state may be at revision 0; etcd starts at 1 as well.
const firstRevision = 1

// New returns an empty store at revision Options.StartRevision (1 by
// default): the first write gets the next one. With a CompactionInterval it
// starts the background compactor, which Close stops.
func New(opts Options) *Store {
	opts = opts.withDefaults()
	start := opts.StartRevision
	s := &Store{
		opts:    opts,
		tr:      opts.Tracer,
		closedc: make(chan struct{}),
		objs:    map[string]entry{},
		hist:    newHistory(opts.HistoryLimit, opts.HistoryBytes, start+1),
	}
	if start > firstRevision {
		// Nothing before the start revision was ever issued by this
		// store: to a watch or list it is as gone as a compacted revision.
		s.compacted = start
	}
	s.rev.Store(start)
	if opts.CompactionInterval > 0 {
		s.compactor.Add(1)
		go s.compactEvery(opts.CompactionInterval)
	}
	return s
}

// Close ends every watch with ErrClosed; later calls fail with ErrClosed.
// It returns once every watch goroutine has exited. Revision and
// CompactedRevision keep answering.
func (s *Store) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closedc)
	for len(s.watchers) > 0 {
		s.endLocked(s.watchers[len(s.watchers)-1], ErrClosed)
	}
	s.mu.Unlock()
	s.catchUps.Wait()
	s.compactor.Wait()
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "closed at rev %d", s.rev.Load())
	}
}

// Revision returns the current (latest committed) revision. It takes no
// lock, and every event up to it has already been queued to every live
// watcher (a watcher still replaying history gets it from there).
func (s *Store) Revision() int64 { return s.rev.Load() }

// CurrentRevision is Revision for Interface: in one process every read is
// consistent, so it only checks ctx and that the store is open.
func (s *Store) CurrentRevision(ctx context.Context) (int64, error) {
	if err := s.ctxErr(ctx); err != nil {
		return 0, err
	}
	return s.rev.Load(), nil
}

// CompactedRevision returns the newest revision whose history is gone:
// Watch(from) needs from >= CompactedRevision(). It is 0 until the first
// compaction.
func (s *Store) CompactedRevision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compacted
}

// Compact drops history up to and including rev. Afterwards List at a
// revision below rev and Watch from a revision below rev fail with
// CompactedError; the state at rev itself stays readable. Like etcd, it
// fails with CompactedError if rev is not newer than the last compaction and
// with FutureRevisionError if rev is not reached yet. Watchers still
// replaying the dropped history are ended with ErrWatcherTooSlow.
func (s *Store) Compact(rev int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if rev <= s.compacted {
		return &CompactedError{Requested: rev, Compacted: s.compacted}
	}
	if cur := s.rev.Load(); rev > cur {
		return &FutureRevisionError{Requested: rev, Current: cur}
	}
	s.hist.dropThrough(rev)
	s.compacted = rev
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "compacted through rev %d", rev)
	}
	return nil
}

// ctxErr returns the context's error, or ErrClosed once the store is closed.
// Every operation starts with it, so a cancelled request does no work.
func (s *Store) ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-s.closedc:
		return ErrClosed
	default:
		return nil
	}
}

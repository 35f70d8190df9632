package store

// CONTRACT FILE: these declarations are the store's public API that the
// apiserver is written against. The implementation may move them into files
// named after their concepts, but must keep every name and signature.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/narrate"
)

// Sentinel errors; every error the store returns wraps one of them.
var (
	ErrNotFound       = errors.New("key not found")
	ErrAlreadyExists  = errors.New("key already exists")
	ErrConflict       = errors.New("precondition failed")
	ErrCompacted      = errors.New("required revision has been compacted")
	ErrFutureRevision = errors.New("required revision is a future revision")
	ErrWatcherTooSlow = errors.New("watcher fell too far behind")
	ErrClosed         = errors.New("store is closed")
)

// CompactedError is returned (wrapping ErrCompacted) when a list or watch asks
// for a revision older than the compacted one. The apiserver turns it into
// 410 "too old resource version: Requested (Compacted)".
type CompactedError struct{ Requested, Compacted int64 }

func (e *CompactedError) Error() string {
	return fmt.Sprintf("revision %d: %v (compacted at %d)", e.Requested, ErrCompacted, e.Compacted)
}
func (e *CompactedError) Unwrap() error { return ErrCompacted }

// FutureRevisionError is returned (wrapping ErrFutureRevision) when a list
// asks for a revision the store has not reached yet.
type FutureRevisionError struct{ Requested, Current int64 }

func (e *FutureRevisionError) Error() string {
	return fmt.Sprintf("revision %d: %v (current %d)", e.Requested, ErrFutureRevision, e.Current)
}
func (e *FutureRevisionError) Unwrap() error { return ErrFutureRevision }

// Options configures a Store. The zero value is usable.
type Options struct {
	// HistoryLimit is how many past events are kept for watches and
	// revision reads; older ones are compacted automatically. Default 10000.
	HistoryLimit int
	// WatchBuffer is each watcher's buffered channel size. A watcher whose
	// buffer is full when an event must be queued is ended with
	// ErrWatcherTooSlow; writers never wait. Default 1024.
	WatchBuffer int
	// Tracer narrates every commit; nil is silent.
	Tracer *narrate.Tracer
	// Now stamps creationTimestamp; defaults to time.Now.
	Now func() time.Time
}

// Preconditions guard Update and Delete. Zero fields are not checked.
type Preconditions struct {
	ResourceVersion int64
	UID             string
}

// ListOptions selects what List returns.
type ListOptions struct {
	// Revision 0 reads the current state; N reads the state at revision N
	// (CompactedError if N is compacted, FutureRevisionError if N > current).
	Revision int64
	// StartKey, if set, is the first key considered (inclusive); paged lists
	// pass the key after the last one returned.
	StartKey string
	// Limit caps the number of items returned; 0 means no limit.
	Limit int
	// Filter, if set, keeps only matching objects; Limit counts kept ones.
	Filter func(*api.Object) bool
}

// ListResult is one page of a List.
type ListResult struct {
	Items []*api.Object // in key order
	// Revision the page is consistent with (pass it back as
	// ListOptions.Revision to read the next page at the same revision).
	Revision int64
	// NextKey is the StartKey of the next page; empty when nothing follows.
	NextKey string
	// Remaining counts keys under the prefix after this page (before
	// filtering), the basis of metadata.remainingItemCount.
	Remaining int64
}

// Event is one committed change, as a watch delivers it.
type Event struct {
	Type     api.EventType // Added, Modified or Deleted
	Key      string
	Revision int64
	// Object is the new state. For Deleted it is the last state with
	// metadata.resourceVersion set to the deletion's revision.
	Object *api.Object
	// PrevObject is the state before this change; nil for Added.
	PrevObject *api.Object
}

// Store is the toy etcd: a versioned in-memory key-value store of objects.
type Store struct{ _ [0]func() /* implementation fields */ }

// New returns an empty store at revision 1.
func New(opts Options) *Store { panic("store: not implemented") }

// Close ends every watch with ErrClosed; later calls fail with ErrClosed.
func (s *Store) Close() {}

// Revision returns the current (latest committed) revision.
func (s *Store) Revision() int64 { return 0 }

// CompactedRevision returns the newest revision whose history is gone:
// Watch(from) needs from >= CompactedRevision().
func (s *Store) CompactedRevision() int64 { return 0 }

// Compact drops history up to and including rev.
func (s *Store) Compact(rev int64) error { return nil }

// Create stores a new object (ErrAlreadyExists if the key exists), setting
// uid, creationTimestamp and resourceVersion.
func (s *Store) Create(ctx context.Context, key string, obj *api.Object) (*api.Object, error) {
	return nil, nil
}

// Get returns the current object at key (ErrNotFound).
func (s *Store) Get(ctx context.Context, key string) (*api.Object, error) { return nil, nil }

// List returns the objects whose keys start with prefix.
func (s *Store) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	return nil, nil
}

// Update replaces the object at key (ErrNotFound; ErrConflict if a
// precondition fails). uid and creationTimestamp are kept from the stored
// object whatever obj says.
func (s *Store) Update(ctx context.Context, key string, obj *api.Object, pre Preconditions) (*api.Object, error) {
	return nil, nil
}

// GuaranteedUpdate reads the current object, calls tryUpdate on a copy, and
// writes the result if nothing changed meanwhile, retrying on conflict. An
// error from tryUpdate aborts and is returned as-is.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, tryUpdate func(current *api.Object) (*api.Object, error)) (*api.Object, error) {
	return nil, nil
}

// Delete removes the object at key and returns its last state.
func (s *Store) Delete(ctx context.Context, key string, pre Preconditions) (*api.Object, error) {
	return nil, nil
}

// Watch streams every change under prefix with revision > fromRevision, in
// order, first from history then live (CompactedError if fromRevision <
// CompactedRevision()). It ends when ctx is done, Stop is called, the store
// closes, or the watcher falls behind (ErrWatcherTooSlow).
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (*Watcher, error) {
	return nil, nil
}

// Watcher is one open watch.
type Watcher struct{ _ [0]func() }

// Events delivers the changes; it is closed when the watch ends.
func (w *Watcher) Events() <-chan Event { return nil }

// Err says why Events was closed (nil after Stop or ctx cancel).
func (w *Watcher) Err() error { return nil }

// Stop ends the watch; idempotent, safe from any goroutine.
func (w *Watcher) Stop() {}

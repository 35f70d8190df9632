package store

import (
	"context"

	"listwatch/api"
)

// Interface is what the apiserver and its watch cache need from a store:
// the contract both of listwatch's stores keep, the in-memory *Store of this
// package and the etcd v3 store of the nested module listwatch/etcd. It is
// the toy's k8s.io/apiserver/pkg/storage.Interface, cut down to what we use.
//
// The rules every implementation follows, and that the conformance suite in
// listwatch/store/storetest checks:
//
//   - One global revision. Every write makes the next revision of the whole
//     store, whatever key it touches; an object's resourceVersion is the
//     decimal revision that last wrote it (etcd's mod_revision). Revisions
//     increase but need not be dense (etcd spends one on a compaction
//     marker); none is ever 0.
//   - The store sets uid, creationTimestamp and resourceVersion; updates keep
//     uid and creationTimestamp.
//   - Errors wrap this package's sentinels (ErrNotFound, ErrAlreadyExists,
//     ErrConflict, ErrCompacted as *CompactedError, ErrFutureRevision as
//     *FutureRevisionError, ErrInvalid, ErrClosed) so errors.Is and
//     errors.As work whichever store answered; a context's error is returned
//     as-is.
//   - Objects handed out are read-only: DeepCopy one before changing it.
type Interface interface {
	// Create stores a new object at key (ErrAlreadyExists if it exists).
	Create(ctx context.Context, key string, obj *api.Object) (*api.Object, error)
	// Get returns the current object at key (ErrNotFound).
	Get(ctx context.Context, key string) (*api.Object, error)
	// List reads one page of the keys under prefix at a revision; see
	// ListOptions and ListResult for paging (a continue token is the
	// result's Revision and NextKey).
	List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error)
	// Update replaces the object at key unconditionally but for pre, and
	// always makes a revision.
	Update(ctx context.Context, key string, obj *api.Object, pre Preconditions) (*api.Object, error)
	// GuaranteedUpdate is read, modify, write-if-unchanged, retried on
	// conflict; a result equal to the current object writes nothing.
	GuaranteedUpdate(ctx context.Context, key string, tryUpdate func(current *api.Object) (*api.Object, error)) (*api.Object, error)
	// Delete removes the object at key if pre holds and returns its last
	// state.
	Delete(ctx context.Context, key string, pre Preconditions) (*api.Object, error)
	// Watch streams every change under prefix with a revision above
	// fromRevision (CompactedError if that history is gone).
	Watch(ctx context.Context, prefix string, fromRevision int64) (Watcher, error)
	// CurrentRevision is the store's current revision, read consistently:
	// every write committed before the call is at or below it. etcd answers
	// it with a quorum read; the watch cache uses it for consistent reads.
	CurrentRevision(ctx context.Context) (int64, error)
	// CompactedRevision is the newest compacted revision this store knows
	// of (0 before any): Watch(from) needs from >= it. It answers from
	// memory, so for a store shared by several apiservers it may trail a
	// compaction another one just made; the store itself still refuses.
	CompactedRevision() int64
	// Compact drops the history up to and including rev (CompactedError if
	// rev is not newer than the last compaction, FutureRevisionError if it
	// is ahead). A networked store bounds it with its own request timeout.
	Compact(rev int64) error
	// Close ends every watch with ErrClosed and releases the store; later
	// calls fail with ErrClosed.
	Close()
}

// Watcher is one open watch, as Interface.Watch returns it.
type Watcher interface {
	// Events delivers the changes, oldest first; it is closed when the
	// watch ends. Besides Added, Modified and Deleted it carries progress
	// events (Type api.Bookmark, no Key, no Object; see Event.IsProgress):
	// after RequestProgress, and on stores that send them unasked (etcd's
	// periodic progress notifications) at any time. Readers that only want
	// changes skip them.
	Events() <-chan Event
	// Err says why Events was closed: nil after Stop or a cancelled
	// context, otherwise ErrWatcherTooSlow, ErrCompacted or ErrClosed
	// (wrapped). It is nil while the watch runs.
	Err() error
	// Stop ends the watch; idempotent, safe from any goroutine. When it
	// returns, Events is closed.
	Stop()
	// RequestProgress asks for a progress event: an Event of Type
	// api.Bookmark whose Revision R promises that every change of this
	// watch up to R has been delivered before it. It is etcd's progress
	// notification on request (clientv3 RequestProgress). A store may skip
	// a request it cannot answer yet (a watch still replaying history): the
	// caller asks again if it is still waiting.
	RequestProgress(ctx context.Context) error
}

// The in-memory store keeps the contract.
var _ Interface = (*Store)(nil)

// Package store is listwatch's etcd: a versioned, in-memory key-value store
// of objects that can list a key prefix at a revision and watch it for
// changes.
//
// # Where it sits
//
// It is the bottom of the server half of the data flow:
//
//	store  →  apiserver/cacher (one Watch per resource)  →  apiserver HTTP  →  client …
//
// The apiserver writes through Create, Update, GuaranteedUpdate and Delete
// on every request; its watch cache lists each resource prefix once and then
// holds one Watch on it, fanning the events out to every client. In
// Kubernetes the same place is held by etcd together with the apiserver's
// etcd3 storage layer, which is what this package mirrors:
//
//   - etcd's MVCC store and watch (one global revision, a key index, a
//     compacted history, watchers that catch up from history before they
//     are fed live, "required revision has been compacted");
//   - k8s.io/apiserver/pkg/storage/etcd3: store.go (Create, Get, GetList,
//     GuaranteedUpdate with its retry-on-conflict loop and no-op detection,
//     Delete with preconditions) and watcher.go, whose
//     watchChan.startWatching opens an etcd watch at initialRev+1 with the
//     previous key-value, and turns a delete into a DELETED event whose
//     object is the last state stamped with the delete's revision.
//
// The fourth article ("client-go list & watch 原理", section "Watcher对象";
// docs/articles.md) walks that path in the real code: the
// etcd3 store's Watch builds a watchChan and startWatching calls the etcd
// client's Watch; the apiserver is a proxy for an etcd watch stream.
//
// # One interface, two stores
//
// Interface (interface.go) is the contract the apiserver and its watch
// cache are written against; *Store is its in-memory implementation, and the
// nested module listwatch/etcd holds the other one, on a real etcd v3. The
// conformance suite in store/storetest runs against both. What this file
// says about revisions, history and compaction is the contract; what it says
// about locks, buffers and sharing is how the in-memory store keeps it.
//
// # Read in this order
//
//   - interface.go: Interface and Watcher, the contract the apiserver is
//     written against;
//   - store.go: Store, what it holds (objects, the history, the watchers)
//     and New;
//   - write.go: Create, Update, GuaranteedUpdate, Delete, and
//     commitLocked, where every write becomes the next revision and an
//     event;
//   - watch.go: Watch, and dispatchLocked, which hands each committed
//     event to the watchers without ever waiting for one (catchUp, a
//     watcher that starts in the past, can wait for a second reading);
//   - spill.go: what happens when a watcher's channel is full (the
//     events wait aside, fed in by a goroutine of its own; a second
//     reading too);
//   - history.go: the ring of recent events that watches replay and lists
//     at a past revision undo;
//   - list.go: List, at the current revision or a past one.
//
// keyindex.go, noop.go, preconditions.go, compactor.go, errors.go,
// options.go and uid.go are details of those steps.
//
// # Revisions and resourceVersions
//
// Every write (create, update, delete) makes the next revision of the
// whole store, whatever key it touches. A new store is at revision 1 and the
// first write gets revision 2: revisions start above zero because
// Kubernetes reads resourceVersion "0" as "any state you have", so no real
// state may be at 0.
//
// An object's metadata.resourceVersion is nothing but the decimal string of
// the revision that last wrote it, and a list's resourceVersion is the
// revision it was read at. That is why "watch from the list's
// resourceVersion" loses nothing: the watch delivers every revision after
// it. It is also why the store, not the caller, sets resourceVersion, and
// with it uid (a random UUID v4) and creationTimestamp (Options.Now, second
// precision, UTC): a caller cannot forge them, and Update keeps uid and
// creationTimestamp from the stored object.
//
// # History and compaction
//
// The store keeps the last Options.HistoryLimit events, and no more than
// Options.HistoryBytes of their objects. Watch replays from them, and List
// at a past revision undoes them (that is how a paged list reads every page
// at the revision of the first). Older events are compacted automatically,
// every Options.CompactionInterval (etcd's compactor, which kube-apiserver
// drives every 5 minutes), or on demand with Compact; a list or watch that
// needs them fails with a *CompactedError, which the apiserver maps to 410
// "too old resource version".
//
// # Restarts
//
// The store lives in memory: a restarted server starts empty. So that
// clients notice, Options.StartRevision (RevisionFromClock) starts the new
// life's revisions above every revision of the old one and counts
// everything below as compacted: a client resuming from an old
// resourceVersion gets 410 and re-lists, instead of waiting silently for a
// revision that means something else now.
//
// # Watchers never hold up writers
//
// A live watcher has a small buffered channel, and a writer queues each
// event with a non-blocking send; when the channel is full the events wait
// aside, fed to the channel by a goroutine of the watcher's own as the
// reader catches up (spill.go). A watcher with Options.WatchBuffer events
// unread is ended with ErrWatcherTooSlow (its channel is closed after the
// events already in it; Err says why); the writer and the other watchers go
// on. The reader can watch again from the last revision it saw.
//
// # Sharing
//
// Objects are deep-copied on the way in. Objects handed out (by Create,
// Get, List, Update, Delete and in watch events) are shared by every reader
// and by the history: treat them as read-only, and DeepCopy one before
// changing it. This keeps a write at one copy however many watchers see it.
package store

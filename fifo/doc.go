// Package fifo holds the queue between the Reflector and the informer.
//
// Data flow on the client side:
//
//	apiserver ──watch──▶ Reflector ──Add/Update/Delete/Replace──▶ queue ──Pop──▶ informer (Indexer + handlers)
//
// The Reflector lists and watches and must never block on a slow consumer
// for long; the informer wants to apply changes to its cache one at a time.
// The queue decouples the two: the Reflector writes each event as a Delta
// (Added, Updated, Deleted), a re-list as a Replace and a periodic resync as
// a Resync; the informer Pops what was queued and updates its cache.
//
// # Three queues, oldest first
//
// This package has the three queues client-go's informers have used. The
// informer package picks the newest by default; the other two stay
// selectable, because the differences are the lesson (docs chapter 07 and
// examples/12-queue-evolution run one re-list through all three).
//
// DeltaFIFO (until Kubernetes 1.33, and the queue the source articles
// describe) is keyed: all deltas for one object wait together under its
// key, the key keeps its place in line as more arrive, and Pop hands over
// the whole list at once. That bounds the queue by the number of objects
// rather than events, and lets a consumer see everything that happened to
// an object since it last looked. It also scrambles order across objects:
// after add foo@10, bar@1, foo@11, foo@13, zab@30 the consumer gets foo's
// [10 11 13] before bar@1, though bar changed first. Code that relates
// objects to each other (an owner and its dependants, or anything replaying
// a server's history) sees states the server never had. Making up for that
// grew special cases (which deltas to merge, Delete ignoring unknown keys,
// Resync skipping queued keys, the bugs below). Replace queues a Replaced
// delta under each listed key and a Deleted tombstone
// (DeletedFinalStateUnknown) under each key the list lacks that is still
// queued (added to that key's deltas, where the key already stands) or
// that the consumer still has (at the back of the line, as in client-go's
// DeltaFIFO.Replace); Pop runs the consumer under the
// queue's lock, so Replace never computes its tombstones against a cache
// that is halfway through an item.
//
// RealFIFO (client-go's informer queue from 1.33, feature InOrderInformers)
// drops the merging: every delta is kept in arrival order and popped on its
// own, so the consumer replays exactly what the Reflector saw (10, 1, 11,
// 13, 30). Replace queues the tombstones first (for queued keys the list
// lacks, then for cached ones), then one Replaced delta per listed object;
// Resync queues a Sync delta for each cached key with nothing queued. It
// still reads the consumer's cache (KnownObjects) to do so, so Pop still
// holds the lock while the consumer works.
//
// The atomic RealFIFO (client-go's default since 1.36: features AtomicFIFO
// and UnlockWhileProcessingFIFO, beta and on; Options.Atomic and
// Options.UnlockWhileProcessing here) stops reading the consumer's cache at
// all. Replace queues one ReplacedAll delta carrying the whole list; the
// consumer, when it pops it, works out the tombstones against its own cache
// (which by then holds every earlier delta), swaps the cache's content for
// the list in one step and only then tells handlers: deletions first, then
// each listed object. Handlers therefore never see a cache that is half old
// list, half new. Resync queues one SyncAll delta (the consumer re-delivers
// every cached object), a BOOKMARK becomes a Bookmark delta, and since the
// queue no longer shares state with the consumer, Pop releases its lock
// while the consumer processes, so the Reflector is not held up by a slow
// handler. That makes eight delta types: Added, Updated, Deleted, Replaced,
// Sync, ReplacedAll, SyncAll, Bookmark.
//
// All three implement Queue; the shared tests in this package show the
// differences side by side. (client-go's RealFIFO can also pop batches of
// deltas for distinct keys, InOrderInformersBatchProcess; that is left out
// here.)
//
// # Read in this order
//
// The default queue first, in the order a delta lives in it:
//
//   - queue.go: Queue, what the Reflector writes to and the informer pops
//     from, and Options (core, below them, is the lock and HasSynced
//     bookkeeping the queues share; skip it on a first read);
//   - delta.go: the eight delta types and what each carries;
//   - real_fifo.go: RealFIFO, the plain in-order queue: Add/Update/Delete,
//     Replace (reconcileReplacementLocked), Resync, Pop;
//   - real_fifo_atomic.go: what the atomic RealFIFO, the default, does
//     instead: addReplaceToItemsLocked, addResyncToItemsLocked, Bookmark,
//     whileProcessingLocked;
//   - tombstone.go: DeletedFinalStateUnknown, what a missed deletion looks
//     like, and tombstoneLocked, which both keyed Replaces use.
//
// Then, to compare: delta_fifo.go and dedup.go (DeltaFIFO, the queue the
// articles describe). keys.go (KeyOf, KnownObjects) and narration.go (how
// the queue's narration lines are written) can be skipped.
//
// # Two bugs DeltaFIFO had to fix
//
// Relist treated as resync (client-go tools/cache/delta_fifo.go: the
// Replaced DeltaType's comment says why it exists). Replace used to queue Sync
// deltas, the same type a periodic resync uses. A shared informer sends a
// Sync only to handlers that asked for resyncs, reasoning nothing changed.
// But a re-list after a broken watch does bring changes (updates that
// happened while disconnected), and those updates never reached handlers
// without a resync period. The fix is the Replaced delta type: a re-list
// says "maybe changed", a resync says "unchanged". Here Replace always emits
// Replaced.
//
// Replace dropping a Sync after a Delete (client-go
// tools/cache/delta_fifo.go, Replace). To keep a resync from re-creating an object whose
// deletion was still queued, DeltaFIFO once refused to queue a Sync for a
// key whose newest delta was Deleted. Replace queued Syncs too, so an object
// deleted and re-created while the watch was down came out of the re-list as
// just [Deleted]: the informer dropped it from its cache and never learned
// of the new one. The fix moved the check to Resync alone, which skips any
// key with deltas queued; Replace always appends.
//
// Both are regression tests in this package (regression_test.go).
//
// # Mirrors
//
//   - k8s.io/client-go/tools/cache/delta_fifo.go: DeltaFIFO, Delta, Deltas,
//     DeletedFinalStateUnknown, the delta types.
//   - k8s.io/client-go/tools/cache/the_real_fifo.go: RealFIFO (with
//     RealFIFOOptions.AtomicEvents, UnlockWhileProcessing and
//     EmitDeltaTypeBookmark), ReplacedAllInfo, SyncAllInfo, BookmarkInfo.
//   - k8s.io/client-go/tools/cache/fifo.go: the Queue interface and
//     ErrFIFOClosed (ErrClosed here).
//
// Differences from client-go: objects are always *api.Object keyed by
// "namespace/name" (no pluggable key or transform functions), Pop takes a
// context, Replace always emits Replaced (client-go needs an option for it),
// a list with an unkeyable object is refused whole, and options that
// client-go rejects with a panic (KnownObjects or UnlockWhileProcessing
// with the wrong Atomic setting) are ignored as documented on Options.
package fifo

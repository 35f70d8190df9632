// Package fifo holds the queue between the Reflector and the informer.
//
// Data flow on the client side:
//
//	apiserver ──watch──▶ Reflector ──Add/Update/Delete/Replace──▶ queue ──Pop──▶ informer (Indexer + handlers)
//
// The Reflector lists and watches and must never block on a slow consumer
// for long; the informer wants to apply changes to its cache one at a time.
// The queue decouples the two: the Reflector writes each event as a Delta
// (Added, Updated, Deleted), a re-list as a Replace (Replaced deltas, plus a
// Deleted tombstone, DeletedFinalStateUnknown, for every object the consumer
// still has that the new list lacks, since its watch DELETED was missed), a
// periodic resync as Sync deltas; the informer Pops them and updates its
// cache inside Pop, under the queue's lock, so Replace never computes its
// tombstones against a cache that is halfway through an item.
//
// # DeltaFIFO, then RealFIFO
//
// DeltaFIFO is the queue client-go's informers used from the start. It is
// keyed: all deltas for one object wait together under its key, the key
// keeps its place in line as more arrive, and Pop hands over the whole list
// at once. That bounds the queue by the number of objects rather than
// events, and lets a consumer see everything that happened to an object
// since it last looked. It also scrambles order across objects: after
// add foo@10, bar@1, foo@11, foo@13, zab@30 the consumer gets foo's
// [10 11 13] before bar@1, though bar changed first. Code that relates
// objects to each other (an owner and its dependants, or anything replaying
// a server's history) sees states the server never had. Making up for that
// grew special cases (which deltas to merge, Delete ignoring unknown keys,
// Resync skipping queued keys, the bugs below).
//
// RealFIFO, client-go's informer queue since Kubernetes 1.33, drops the
// merging: every delta is kept in arrival order and popped on its own, so
// the consumer replays exactly what the Reflector saw (10, 1, 11, 13, 30).
// Replace and Resync keep their meaning. Both queues implement Queue, so an
// informer can take either; the shared tests in this package show the
// difference side by side. (client-go's RealFIFO can also batch pops and emit
// a whole re-list as one delta; those options are left out here.)
//
// # Two bugs DeltaFIFO had to fix
//
// Relist treated as resync (kubernetes#86015). Replace used to queue Sync
// deltas, the same type a periodic resync uses. A shared informer sends a
// Sync only to handlers that asked for resyncs, reasoning nothing changed.
// But a re-list after a broken watch does bring changes (updates that
// happened while disconnected), and those updates never reached handlers
// without a resync period. The fix is the Replaced delta type: a re-list
// says "maybe changed", a resync says "unchanged". Here Replace always emits
// Replaced.
//
// Replace dropping a Sync after a Delete (kubernetes#83911, reported as
// kubernetes#83810). To keep a resync from re-creating an object whose
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
//   - k8s.io/client-go/tools/cache/the_real_fifo.go: RealFIFO.
//   - k8s.io/client-go/tools/cache/fifo.go: the Queue interface and
//     ErrFIFOClosed (ErrClosed here).
//
// Differences from client-go: objects are always *api.Object keyed by
// "namespace/name" (no pluggable key or transform functions), Pop takes a
// context, Replace always emits Replaced (client-go needs an option for it),
// and a list with an unkeyable object is refused whole.
package fifo

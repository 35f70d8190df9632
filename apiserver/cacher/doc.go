// Package cacher is the apiserver's watch cache: one watch of the store per
// resource, fanned out to every client that lists or watches that resource.
//
// # Why it exists
//
// The third article ("k8s的watch到底是什么", section 1; docs/articles.md
// cites it) tells the story. Kubernetes' watch is built on etcd's: when a key changes,
// etcd tells kube-apiserver. In early Kubernetes every component —
// kube-apiserver, kube-controller-manager, kube-scheduler, every kubelet and
// every kube-proxy — watched etcd directly. With thousands of nodes that is
// thousands of etcd watches, each one a connection etcd must serve and each
// change encoded and sent thousands of times by etcd itself. So Kubernetes
// changed the shape: only kube-apiserver watches etcd, and everything else
// watches kube-apiserver. etcd then serves one watch per resource however
// big the cluster, and the fan-out to thousands of clients happens in the
// apiserver's memory, from this cache. Lists with resourceVersion="0" are
// answered from the same memory without touching etcd at all.
//
// # Where it sits
//
//	store ──(one Watch per resource)──► Cacher ──► CacheWatcher ──► HTTP writer ══► client
//	                                      │          (one per client watch)
//	                                      └── List (resourceVersion "0" / NotOlderThan)
//
// Inside a Cacher, in the order one event travels:
//
//   - The store follower (store_watch.go) lists the resource's prefix, then
//     follows the store's watch from that revision and applies each event to
//     the watch cache (watch_cache.go): the current objects and a ring of the
//     most recent events. If the store ends the watch, it re-lists, and ends
//     every open watch, which can no longer be served continuously.
//   - The dispatcher (dispatcher.go), one goroutine per resource, reads new
//     events from the ring in order and offers each to the watchers whose
//     namespace and selectors it concerns. A selector decides the frame:
//     ADDED when an object starts matching, DELETED with its previous state
//     when it stops. Each frame is encoded once and the same bytes go to
//     every watcher. A watcher whose queue is full is waited for only out of
//     a shared time budget (time_budget.go), then closed: one slow client
//     never holds up the others. The dispatcher also sends bookmarks
//     (bookmarks.go).
//   - A CacheWatcher (cache_watcher.go) is a bounded queue of frames with no
//     goroutine of its own: the HTTP handler's goroutine takes all ready
//     frames with Next and writes them in one write.
//
// # Read in this order
//
//   - cacher.go: Cacher, New, List and waitFresh (a list waits for the cache
//     to reach the revision it needs).
//   - store_watch.go: the one store watch per resource: listAndWatch,
//     followStore, applyBatch; the store follower waits for the dispatcher
//     rather than overwrite events it has not handed out (waitForDispatcher).
//   - event.go, then frames.go: what the cache keeps of each change, and
//     the watch frames encoded from it once (frameRef), bookmarks included.
//   - watch_cache.go: the current state and the ring (history), and the
//     revision a watch can still be replayed from (oldest).
//   - watchers.go: Watch, where a new watch starts (startLocked: the current
//     state, the ring's events after its resourceVersion, or a 410), and its
//     registration in the set of watchers, indexed by namespace.
//   - dispatcher.go: drain and dispatchEvent, an event to every watcher it
//     concerns (classify, in cache_watcher.go, picks the frame);
//     waitForBlocked and closeTooSlow, closing the slow one out of the time
//     budget (time_budget.go); then bookmarks.go.
//   - cache_watcher.go: the watcher's bounded queue: push (the dispatcher's
//     side), Next and nextQueued (the HTTP writer's side), Stop; then
//     replay.go, the frames a watch starts with.
//   - stats.go: the debug view's snapshot; options.go: Config, WatchOptions
//     and the errors a watch ends with.
//
// Three files are our own machinery, for throughput, each saying what
// Kubernetes does instead; the files above call them at a few named points
// and read without them:
//
//   - turns.go: the writers take turns. A watcher with frames waits in a
//     line shared by all the caches of a server, and only a few (half the
//     CPUs) are awake at once, so 10,000 woken goroutines never stand
//     between a request and the CPU. Waiting in line, a watcher collects
//     frames to write together. The CacheWatcher's seat is its place.
//   - backpressure.go: a writer of the resource waits, at most a second,
//     while the fan-out still to do is more than Config.MaxQueuedFrames
//     (AdmitWrite), first come first: writes are not accepted faster
//     than they reach the watchers.
//   - frames_pool.go: the slices Next fills come from a shared pool
//     (ReleaseFrames), so an idle watch holds none.
//
// # What it mirrors
//
// k8s.io/apiserver/pkg/storage/cacher, as of v0.37.2 (kube-apiserver 1.37):
//
//   - Cacher, NewCacherFromConfig, Watch, GetList (cacher.go) and the
//     dispatcher and its bookmark timer (cacher.go dispatchEvents,
//     dispatchEvent, startDispatchingBookmarkEventsLocked);
//   - watchCache (watch_cache.go, watch_cache_history.go): the ring, the
//     "too old resource version: N (M)" 410, the 3 s wait and 504 for a
//     revision the cache has not reached;
//   - cacheWatcher (cache_watcher.go): the per-watcher queue,
//     convertToWatchEvent's selector transitions, nextBookmarkTime;
//   - timeBudget (time_budget.go).
//
// What it leaves out of 1.37's cacher: CacheDelegator (delegator.go), which
// also sends consistent, exact-revision and continued lists to the cache,
// its snapshots (store/store_btree.go) and the consistency checker
// (consistency/checker.go). Here the handlers send those lists to the store
// (docs/03-apiserver-and-watch-cache.md says why).
//
// The line of turns, the writers' wait and the pooled slices are ours
// (above); Kubernetes wakes a goroutine per watcher for every event and
// answers a writer faster than its watchers with closing the watchers that
// fall behind.
//
// The ring has a fixed capacity (Config.HistorySize, DefaultHistorySize)
// where Kubernetes resizes it between 100 and 102,400 entries to keep about
// 75 s. Frames are kept with the events in the ring, where Kubernetes drops
// its cached serializations after each dispatch, so a replay from the ring is
// not re-encoded. Like Kubernetes, which asks etcd for a progress
// notification to learn that nothing of this resource happened up to the
// store's revision, the cacher asks its store watch for a progress event
// (store.Watcher.RequestProgress): the in-memory store answers at once, etcd
// through clientv3's RequestProgress.
package cacher

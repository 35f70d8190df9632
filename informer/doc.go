// Package informer keeps an indexed, always up-to-date local cache of one
// resource and tells any number of event handlers about every change: the
// SharedIndexInformer, its Indexer, the sharedProcessor that fans out
// notifications, and a small Factory that shares one informer per resource.
//
// Where it sits in the data flow, the pipeline the fourth article walks
// through ("client-go list & watch 原理", docs/articles.md), one box per file:
//
//	Factory (factory.go)                     one informer per resource + namespace
//	  └► SharedIndexInformer (shared_informer.go)
//	       └► controller = Reflector (package reflector) + queue (package fifo)
//	            └► handleDeltas (shared_informer.go)
//	                 ├► Indexer (indexer.go, index.go)          the cache, updated first
//	                 └► sharedProcessor (processor.go)
//	                      └► processorListener (listener.go)    one per handler: own goroutines,
//	                           └► ResourceEventHandler          unbounded ring (ring.go)
//
// The Reflector lists and watches and writes deltas into the queue; the
// informer pops them and, for each, updates the Indexer and then hands a
// notification to every handler's listener (ProcessDeltas, client-go's
// processDeltas). The default queue is client-go's since Kubernetes 1.36:
// an atomic RealFIFO, where a re-list arrives as one ReplacedAll delta that
// the informer turns into tombstones against its cache, swaps into the
// cache in one step, and only then announces (deletions first), and whose
// lock is released while the informer works. Options.Queue selects the
// 1.33 RealFIFO or the classic DeltaFIFO instead. A listener never makes
// the informer wait: three goroutines per handler (pop, run, watchSynced)
// park notifications in its own unbounded buffer while its handler is
// busy, so a slow handler only grows its own backlog (Backlog and
// ResourceEventHandlerRegistration.Pending show it; client-go has no such
// gauge). Handlers therefore must not assume they are in step with the
// cache: the cache is always at least as new as the notification being
// handled.
//
// # Read in this order
//
// The order one delta travels, from the Reflector to a handler:
//
//   - queue_feeder.go: queueFeeder, the Store the Reflector writes to (the
//     queue, with Options.Transform applied on the way in);
//   - shared_informer.go: Run and runController (the Reflector fills the
//     queue while this goroutine pops it), handleDeltas and distributor
//     (the informer's own handler); skip the AddEventHandler family and the
//     accessors on a first read;
//   - process_deltas.go: ProcessDeltas, what each delta type does to the
//     cache and which handler call it becomes; replaceAll for a
//     ReplacedAll delta;
//   - indexer.go: the Indexer, the cache updated before any handler hears
//     of a change (index.go: the index functions; skip it at first);
//   - processor.go: sharedProcessor.distribute, one notification to every
//     listener (shouldResync and the resync period can wait);
//   - notification.go, listener.go, ring.go: processorListener.add, pop
//     and run, a handler's own buffer and goroutines;
//   - handler.go: ResourceEventHandler, the interface a handler implements.
//
// options.go, factory.go and synctrack.go (per-handler HasSynced) are
// configuration and sharing around the path; read them when you need them.
//
// # What it keeps from client-go, and what it mirrors
//
// Details kept from client-go: an update whose old and new objects have
// the same resourceVersion is a resync (or a re-list re-delivering an
// unchanged object) and goes only to handlers due for a resync; a delete
// may carry a fifo.DeletedFinalStateUnknown tombstone when it was only
// noticed at a re-list; adds from the first list carry isInInitialList; a
// handler added to a running informer first receives a synthetic add for
// every cached object; each registration has its own HasSynced (the
// informer synced and this handler handled the initial list); Transform
// rewrites objects before they are queued and cached.
//
// Everything is narrated through one switch: the Tracer in Options is
// handed to the Reflector, the queue, the Indexer and the processor, so
// one object can be followed from the watch event to each handler
// (see Example_narrated).
//
// It mirrors k8s.io/client-go/tools/cache: shared_informer.go
// (sharedIndexInformer, sharedProcessor, processorListener), controller.go
// (controller.Run, processLoop, processDeltas, processReplacedAllInfo,
// newQueueFIFO, ResourceEventHandler,
// ResourceEventHandlerFuncs), thread_safe_store.go and index.go (the
// Indexer), store.go, synctrack/ (per-handler HasSynced), and
// k8s.io/client-go/informers/factory.go (SharedInformerFactory), with
// k8s.io/utils/buffer.RingGrowing as the listener's buffer. Differences,
// on purpose: objects are *api.Object rather than interface{}; index
// function errors are returned instead of panicking; AddIndexers is
// refused once the cache holds objects (as client-go did until it learned
// to back-fill); the factory takes a function that builds a ListerWatcher
// instead of a typed clientset.
package informer

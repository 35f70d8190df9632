// Package reflector keeps a local store in step with one resource on the
// server, by listing it once and then watching it for ever: the first box
// of client-go's informer machinery.
//
// Where it sits in the data flow:
//
//	apiserver ══ HTTP ══► client (List, Watch) ──► Reflector ──► Store (a fifo.Queue) ──► informer
//
// The informer (package informer) creates one Reflector per resource and
// hands it its queue as the Store. See the fourth article
// ("client-go list & watch 原理", docs/articles.md) for the whole pipeline:
// SharedInformerFactory → SharedIndexInformer → controller (Reflector +
// DeltaFIFO) → handleDeltas → Indexer + sharedProcessor →
// processorListener → handler. This package is the Reflector.
//
// What ListAndWatch does, in order (all of it as client-go v0.37 does it):
//
//  1. Fetch the state. By default (Options.InitialList WatchList, client-go's
//     default since Kubernetes 1.35) with a watch-list: a watch with
//     sendInitialEvents=true, resourceVersionMatch=NotOlderThan,
//     resourceVersion "" (the latest state, consistently) or the last one
//     seen, and allowWatchBookmarks=true. The server streams an ADDED event
//     per object and then a BOOKMARK annotated k8s.io/initial-events-end,
//     whose resourceVersion the state is consistent with; the same stream
//     then carries on as the watch of step 3. Connection refused and 429 are
//     retried after a backoff, 410 and "too large resource version" at once
//     from "", a stream that ends before the bookmark is started again; any
//     other failure falls back, for this round only, to a list.
//     The list (ListThenWatch, client-go before 1.35, and the fallback) asks
//     for resourceVersion=0&limit=500 the first time: "any state you have",
//     which the apiserver's watch cache answers in one response without
//     touching etcd (it ignores the limit at resourceVersion 0); it is
//     paged through continue tokens only when etcd answers it, for a
//     resource without a watch cache (an expired continue token falls back
//     to one full list). Later re-lists ask for the last resourceVersion
//     seen (not older than it, so the cache never goes back in time), and
//     only if that answers 410 Gone or 504 "too large resource version"
//     for the latest state at "" with limit=500: a consistent list, which
//     kube-apiserver 1.37 serves from its watch cache too, page by page.
//  2. Replace the Store's contents with the state, at its resourceVersion.
//  3. Watch from that resourceVersion, with allowWatchBookmarks=true and a
//     timeoutSeconds drawn at random in [300, 600), feeding every ADDED,
//     MODIFIED and DELETED event to the Store and remembering each event's
//     (and each BOOKMARK's) resourceVersion; a Store that implements
//     BookmarkStore is also told each BOOKMARK's resourceVersion.
//  4. When the watch ends:
//     - cleanly (the server's timeout ran out): open a new watch from the
//     last resourceVersion seen, without re-listing. This is the answer to
//     the first article's question ("why does list-watch never close the
//     connection?", docs/articles.md): it does close, every five to ten
//     minutes, and the Reflector quietly re-opens it from where it was;
//     see Reflector.watch;
//     - with 429 Too Many Requests (or a watch that cannot connect:
//     connection refused): back off, then re-watch, again without
//     re-listing;
//     - with 410 Expired in the stream (the resourceVersion fell out of the
//     apiserver watch cache's window of recent events; a watch of a
//     resource with a watch cache, which in kube-apiserver is every
//     resource but Events unless --watch-cache=false, is served by the
//     cache, so an etcd compaction alone does not cause it mid-stream) or
//     any other error: back off, then go to 1.
//
// Backoff is client-go's: 800 ms doubling to a 30 s cap, each wait plus up
// to 100% jitter, forgiven after two minutes without trouble. A 403 is never
// retried in silence: on a list or a watch that cannot start it ends
// ListAndWatch, the round is retried after a backoff, and client-go's
// default error handler logs it; here the error goes to the Tracer and to a
// handler installed with SetWatchErrorHandler, which sees every error. An
// optional resync period calls Store.Resync.
//
// # Read in this order
//
//   - listerwatcher.go: ListerWatcher and Store, what the Reflector reads
//     from and writes to;
//   - reflector.go: Reflector, New, Run and ListAndWatch, the steps above;
//   - list.go: list, the initial list and every re-list;
//   - watch.go: watch, its three steps openWatch, handleWatch (with
//     deliver, one event to the Store) and watchEnded;
//   - watchlist.go: watchList, the default first step, which streams the
//     state instead of listing it.
//
// backoff.go, errors.go, resync.go and options.go are read as the steps
// call them.
//
// # What it mirrors
//
// It mirrors k8s.io/client-go/tools/cache: reflector.go (Reflector,
// ListAndWatch, watch, handleAnyWatch, watchList, relistResourceVersion,
// isWatchErrorRetriable), listwatch.go (ListerWatcher), and the pager in
// tools/pager/pager.go; the backoff is k8s.io/apimachinery's
// wait.Backoff.DelayWithReset. Differences, on purpose: the error handler
// is told about every error, not only the ones that end ListAndWatch;
// watch timeouts below five minutes are honoured (for workshops); and the
// internal-error retry budget (MaxInternalErrorRetryDuration, off by
// default in client-go), the watch-list data consistency detector (off
// unless an environment variable asks for it) and the default error
// handler's logging are left out.
package reflector

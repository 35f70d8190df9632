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
// DeltaFIFO) → HandleDeltas → Indexer + sharedProcessor →
// processorListener → handler. This package is the Reflector.
//
// What ListAndWatch does, in order (all of it as client-go does it):
//
//  1. List. The first list asks for resourceVersion=0&limit=500: "any
//     state you have", which the apiserver's watch cache answers without
//     touching etcd, paged through continue tokens when it is not (an
//     expired continue token falls back to one full list). Later re-lists
//     ask for the last resourceVersion seen (not older than it, so the
//     cache never goes back in time), and only if that answers 410 Gone or
//     504 "too large resource version" for the latest state at "".
//  2. Replace the Store's contents with the list, at the list's
//     resourceVersion.
//  3. Watch from that resourceVersion, with allowWatchBookmarks=true and a
//     timeoutSeconds drawn at random in [300, 600), feeding every ADDED,
//     MODIFIED and DELETED event to the Store and remembering each event's
//     (and each BOOKMARK's) resourceVersion.
//  4. When the watch ends:
//     - cleanly (the server's timeout ran out): open a new watch from the
//     last resourceVersion seen, without re-listing. This is the answer to
//     the first article's question (docs/articles.md,
//     "why does list-watch never close the connection?"): it does close,
//     every five to ten minutes, and the Reflector quietly re-opens it
//     from where it was; see Reflector.watch;
//     - with 429 Too Many Requests (or a watch that cannot connect:
//     connection refused): back off, then re-watch, again without
//     re-listing;
//     - with 410 Expired in the stream (the resourceVersion was compacted;
//     events were lost) or any other error: back off, then go to 1.
//
// Backoff is client-go's: 800 ms doubling to a 30 s cap, each wait plus up
// to 100% jitter, forgiven after two minutes without trouble. A pluggable
// watch-error handler (SetWatchErrorHandler) sees every error, so that a
// 403 is visible instead of retried in silence. An optional resync period
// calls Store.Resync. With Options.UseWatchList the initial state is
// streamed instead of listed (sendInitialEvents=true, complete at the
// BOOKMARK annotated k8s.io/initial-events-end, after which the same
// stream carries on as the watch), falling back to list+watch on any
// error.
//
// It mirrors k8s.io/client-go/tools/cache: reflector.go (Reflector,
// ListAndWatch, watch, handleAnyWatch, watchList, relistResourceVersion,
// isWatchErrorRetriable), listwatch.go (ListerWatcher), and the pager in
// tools/pager/pager.go; the backoff is k8s.io/apimachinery's
// wait.Backoff.DelayWithReset. Differences, on purpose: the error handler
// is told about every error, not only the ones that end ListAndWatch;
// watch timeouts below five minutes are honoured (for workshops); and the
// internal-error retry budget (MaxInternalErrorRetryDuration, off by
// default in client-go) is left out.
package reflector

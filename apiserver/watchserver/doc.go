// Package watchserver is the WatchServer: it serves one watch request from
// the moment the REST layer has parsed its query until the response ends.
// A watch is not a separate API: it is the GET of a list with ?watch=true
// (or the legacy /watch/ path). The server answers 200 at once and keeps
// the response open, writing one JSON event per line as things change,
// until the timeout.
//
// Where it sits in the data flow:
//
//	handlers/watch.go (parse the query) ──► Server.Serve ──► cacher.CacheWatcher
//	                                              │
//	                                              └─► writer ══ HTTP ══► client
//
// Read it in this order, which is the order a watch lives in:
//
//   - watchserver.go: Serve, the steps top to bottom: the deadline, a cache
//     watcher (openWatch), a writer for the transport, frames until the
//     deadline, the end;
//   - pump.go: the one loop that moves frames from the watcher to a writer
//     and ends the stream the way the watch ended (cleanly, killed,
//     stalled), whatever the transport;
//   - the writers, one small file per transport: chunked.go (HTTP/1.1 on
//     the bare connection, taken over from net/http), h2.go (one stream of
//     a shared HTTP/2 connection), websocket.go, and stream.go (net/http's
//     ResponseWriter, which h2.go builds on, and HTTP/1.0's path);
//   - frames.go: how ready frames are batched into few writes: nextBatch,
//     the one rule every writer cuts its writes by;
//   - gzip.go: a compressed watch-list (sendInitialEvents with bookmarks,
//     from a client accepting gzip), a writer in front of the transport's
//     that ends a gzip member at every flush.
//
// Why a watch costs what it costs: a server holds thousands of idle watches,
// so what one idle watch keeps alive matters more than how fast it writes.
// A handler that runs as long as its watch keeps net/http's connection
// goroutine and its read and write buffers alive the whole time, about
// 25 KiB. So an HTTP/1.1 watch's handler returns as soon as the 200 headers
// are out, and a goroutine of ours serves the rest of the watch
// (Config.Detach, which the apiserver's Stop waits for like a request),
// plus one blocked in a 1-byte read to notice the client leaving: about
// 9 KiB per idle watch. See docs/performance-watchcache.md.
//
// registry.go keeps the watches being served, with their transport and the
// connection carrying each, for the debug view and for the stall fault,
// which over HTTP/2 freezes the whole connection. expire.go is the expire
// fault, which ends watches as their timeouts would (ours, not
// Kubernetes').
//
// What it mirrors in Kubernetes: k8s.io/apiserver v0.37.2's
// pkg/endpoints/handlers/watch.go (WatchServer, HandleHTTP, HandleWS,
// watchResponseWriter and perFlushGzipWriter) and the watch part of
// handlers/get.go (handleWatch: the timeout; isListWatchRequest).
package watchserver

// Package integration runs the whole list-watch pipeline, server and
// client, in one process over real loopback sockets, and checks what no
// unit test of a single layer can: that the halves agree.
//
//	apiserver → store → watch cache ══ HTTP (chunked or websocket) ══► StreamWatcher
//	    → RetryWatcher / Reflector → queue (DeltaFIFO or RealFIFO) → Indexer → handler
//
// It is the one package allowed to import both halves of the repository:
// the server side (store/, apiserver/, apiserver/cacher/) and the client
// side (client/, reflector/, fifo/, informer/). Everywhere else imports
// point one way, so that each half can be read (and replaced by the real
// Kubernetes one) on its own; here they meet. The package holds no code of
// its own beyond this file: everything is in its tests, benchmarks and
// examples.
//
// What the tests prove, in the order of the articles (docs/articles.md):
//
//   - articles_test.go replays the first article against our apiserver with
//     a one-second server watch timeout: the naive `if !ok { return }` loop
//     stops at the first timeout and misses what follows; the
//     `if !ok { continue }` "fix" spins on the closed channel; a loop that
//     watches again from the last resourceVersion, and the RetryWatcher,
//     receive every event exactly once across several server timeouts and
//     a server-side connection kill.
//   - retrywatcher_test.go: the RetryWatcher across forced reconnects, and
//     its stop on 410 Expired once the history it needs has been compacted.
//   - informer_test.go: an informer's cache converges on the server's state
//     after a few hundred random writes across watch timeouts, a connection
//     kill and a forced 410 (the re-list delivers the deletes it missed as
//     tombstones), with both queues; a slow handler does not delay a fast
//     one; a half-open connection is noticed by the client's idle timeout.
//   - bench_test.go measures events per second from a write in the store to
//     a handler, and the heap an informer spends per cached object; the
//     results are written up in docs/performance-pipeline.md.
//
// In Kubernetes these would be the e2e and integration suites of
// k8s.io/kubernetes/test/integration (apiserver watch cache, client-go
// informers) run against a real etcd and kube-apiserver.
package integration

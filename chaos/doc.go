// Package chaos breaks list-watch on purpose and checks that nothing is
// lost: it runs our apiserver with every fault switch it has, informers
// watching it, writers writing to it, and a fault injector firing each
// failure production throws at a list-watch client, all at once; then it
// stops the writers and checks convergence.
//
// It is the one package besides package integration that imports both
// halves of the repository, the server side (apiserver, store) to run and
// disturb the server and to record the ground truth, and the client side
// (client, reflector, informer, fifo) to run the informers under test.
//
// Where it sits: around everything.
//
//	writers ──HTTP──► apiserver ──► store ◄── history recorder (watches the store itself: the truth)
//	                     │   ▲
//	        fault injector ──┘   (kill, stall, compact, 429/403, delays, timeouts, ballast)
//	                     │
//	                  watch cache ══HTTP/websocket══► client ─► gate ─► reflector ─► queue ─► informer
//	                                                                                   └► recording handlers
//
// One run (Run, or cmd/chaos for a soak):
//
//   - Writers (run.go, writer.go): each owns a share of the keys, spread
//     over several namespaces, so it knows whether each key exists and every
//     write is a valid create, update or delete, made through the API. A
//     write refused by a fault is retried.
//   - Informers (informers.go): all three queue kinds (AtomicFIFO, RealFIFO,
//     DeltaFIFO), watch-list and list-then-watch, cluster-wide and
//     namespace-scoped, paged lists, websocket watches, server- and
//     client-chosen watch timeouts; each with an idle
//     timeout just above the bookmark interval so half-open connections are
//     noticed, and two recording handlers (recorder.go), one of which the
//     slow-handler fault slows down.
//   - The fault injector (injector.go) fires a schedule drawn from the seed
//     (schedule.go): watch timeouts of about a second, abrupt connection
//     kills, half-open stalls, compactions (410 for exact and paged lists;
//     a small watch-cache ring makes returning watchers get 410 too),
//     slow-watcher termination (an informer stops reading while a burst of
//     large objects fills its socket and then its queue on the server, until
//     the server closes it as too slow), 429 and 403 bursts, request delays,
//     and a slow handler. A background compactor stands in for etcd's.
//   - The history recorder (history.go) watches the store directly, below
//     the apiserver and its watch cache, from the first revision: every
//     committed change of every key, in order.
//
// Then the checker (check.go): within a bounded wait every informer's cache
// and every handler's view equal the server's final state (checked against
// the history, the store and a consistent list over HTTP) at the final
// resourceVersion, and every handler's notifications for every key are
// consistent with the key's history: an add only when absent, an update or
// delete only when present (no update after a delete without a new add),
// every object a state the key really had, an update's old object the one
// last handed over, resourceVersions never going backwards, a delete at a
// real deletion and a tombstone only after one. The Report counts events,
// reconnects, relists, tombstones, each fault and what the server saw.
//
// The controllers have a run of their own (controllers.go,
// TestControllersConvergeUnderFaults): two controller managers of package
// controllers run with leader election (leaders_test.go), the leader is
// killed half-way without releasing its Lease and the other must take
// over, while Deployments are created, scaled and deleted under
// killed and stalled watches, compactions, 429s and delays; once the faults
// stop and every controller's workqueue is idle (nothing queued, nothing
// being worked on, no retry scheduled; their backoff is capped at 2 s for
// the run, see controllers.RateLimiter), CheckControllers requires every
// Deployment to have exactly its replicas of Running Pods (through its
// ReplicaSets), with a status that says so, and no ReplicaSet or Pod to be
// orphaned. Beside them the operator of package controllers/website
// reconciles Websites (a custom resource) that are created, changed and
// deleted under the same faults; CheckWebsites requires each to own exactly
// its ConfigMap and Deployment with the right content and to be Ready, and
// nothing owned by a deleted Website to remain. Its first run found a real bug: a Deployment deleted and
// re-created while the garbage collector's informer was away comes back
// from the re-list as an update of the same key, and the old object's Pods
// were never collected.
//
// Every random choice (the writers' keys, operations and values, the fault
// schedule and its targets) comes from a PCG stream of the seed, one per
// goroutine, so a run is reproducible in what it does; how it interleaves
// still depends on timing. A failing run quotes its seed.
//
// Kubernetes has no such test: its informers are exercised by e2e suites
// and by the reflector's unit tests (client-go tools/cache reflector_test.go,
// shared_informer_test.go), none of which combine the faults. The faults
// themselves mirror what kube-apiserver and the network do: the watch
// timeout (--min-request-timeout), etcd compaction
// (--etcd-compaction-interval), the watch cache's closing of slow watchers
// (storage/cacher), API priority and fairness' 429s.
package chaos

// Package workqueue is where an informer's events become a controller's
// work: a queue of keys ("default/web") that event handlers add to and a
// few worker goroutines take from, with the guarantees that make
// level-triggered controllers simple to write.
//
// Where it sits in the data flow, after everything the earlier packages
// built:
//
//	informer handler ──Add(key)──► workqueue ──Get()──► worker: reconcile(key)
//	                                  ▲                     │ reads the informer's cache
//	                                  └──AddRateLimited─────┘ on failure; Forget on success
//
// The guarantees, each with its test:
//
//   - Merging: adding a key that is already waiting does nothing, so a
//     burst of changes to one object costs one reconcile.
//   - Exclusion: a key a worker holds is never handed to another worker;
//     if it is added meanwhile, it stays "dirty" and is queued again when
//     the holder calls Done, so the change is not lost and is processed
//     after, never beside, the first run.
//   - Shutdown: ShutDown refuses new keys and releases blocked Gets once
//     the waiting keys are handed out; ShutDownWithDrain also waits for the
//     keys being processed (bounded by a context, unlike client-go's).
//   - Delays: AddAfter adds a key later; asking again for a waiting key
//     keeps the earlier time.
//   - Backoff: AddRateLimited waits the longest of a per-key exponential
//     backoff (5 ms, 10 ms, 20 ms, ... up to 1000 s) and an overall token
//     bucket (10 per second, bursts of 100); Forget resets a key's backoff
//     and NumRequeues counts its failures.
//   - Metrics: depth, adds, queue latency, work duration, retries,
//     unfinished work and the longest running item, read with Metrics();
//     also what waits in the waiting room, so that Metrics.Idle can say
//     there is nothing queued, nothing held and no retry scheduled (idle.go,
//     ours: client-go keeps its waiting room private).
//
// # Read in this order
//
//   - queue.go: Interface and the queue with its dirty and processing
//     sets, which give merging, exclusion and shutdown;
//   - delaying.go: AddAfter, keys that come back later;
//   - ratelimiter.go: the per-key backoff and the token bucket;
//   - ratelimiting.go: AddRateLimited, Forget and NumRequeues, the two put
//     together;
//   - metrics.go: the numbers a running queue reports.
//
// # Narration and what it mirrors
//
// Every step is narrated on the narrate.Workqueue layer when Config has a
// Tracer.
//
// It mirrors k8s.io/client-go/util/workqueue: queue.go (Typed, with its
// dirty and processing sets) is queue.go here; delaying_queue.go
// (delayingType, its waitingLoop and priority queue) is delaying.go;
// default_rate_limiters.go (ItemExponentialFailureRateLimiter,
// BucketRateLimiter, MaxOfRateLimiter, DefaultControllerRateLimiter) is
// ratelimiter.go; rate_limiting_queue.go is ratelimiting.go; metrics.go's
// Prometheus metrics are the plain Metrics snapshot in metrics.go.
// Differences, on purpose: items are typed with generics only (client-go
// also keeps untyped aliases); the token bucket is written here on our
// clock instead of importing golang.org/x/time/rate; the waiting loop has
// no 10 s heartbeat, since our timers are not subject to the clock jumps it
// guards against; metrics are computed when read instead of by a ticker
// goroutine; ShutDownWithDrain takes a context; Done without Get is
// ignored instead of re-queueing.
package workqueue

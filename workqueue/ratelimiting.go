package workqueue

import "listwatch/narrate"

// RateLimitingInterface is the queue controllers are written against: a
// delaying queue whose retries are spaced by a RateLimiter. It is
// client-go's TypedRateLimitingInterface.
type RateLimitingInterface[T comparable] interface {
	DelayingInterface[T]
	// AddRateLimited adds item after the wait its limiter gives: call it
	// when processing item failed.
	AddRateLimited(item T)
	// Forget clears item's failure history: call it when processing item
	// succeeded, or when giving up on it. It does not remove item from the
	// queue.
	Forget(item T)
	// NumRequeues is how many times item has failed since it was
	// forgotten.
	NumRequeues(item T) int
}

// RateLimitingQueue is a DelayingQueue with a RateLimiter.
type RateLimitingQueue[T comparable] struct {
	*DelayingQueue[T]
	limiter RateLimiter[T]
}

var _ RateLimitingInterface[string] = (*RateLimitingQueue[string])(nil)

// NewRateLimiting returns a rate-limited delaying queue. A nil limiter is
// DefaultControllerRateLimiter on cfg's clock.
func NewRateLimiting[T comparable](cfg Config, limiter RateLimiter[T]) *RateLimitingQueue[T] {
	cfg = cfg.withDefaults()
	if limiter == nil {
		limiter = DefaultControllerRateLimiter[T](cfg.Clock)
	}
	return &RateLimitingQueue[T]{DelayingQueue: NewDelaying[T](cfg), limiter: limiter}
}

// AddRateLimited adds item after its limiter's wait.
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	d := q.limiter.When(item)
	q.cfg.Tracer.Printf(narrate.Workqueue, "%s: retry %v (failure %d) in %v", q.name, item, q.limiter.NumRequeues(item), d)
	q.AddAfter(item, d)
}

// Forget clears item's failure history.
func (q *RateLimitingQueue[T]) Forget(item T) {
	if q.limiter.NumRequeues(item) > 0 {
		q.cfg.Tracer.Printf(narrate.Workqueue, "%s: forget %v's failures", q.name, item)
	}
	q.limiter.Forget(item)
}

// NumRequeues is item's failure count.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }

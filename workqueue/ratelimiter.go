package workqueue

import (
	"math"
	"sync"
	"time"

	"listwatch/internal/clock"
)

// RateLimiter decides how long an item waits before its next try. It is
// client-go's TypedRateLimiter.
type RateLimiter[T comparable] interface {
	// When is called for each failure of item and returns its wait.
	When(item T) time.Duration
	// Forget clears item's failure history: call it after a success.
	Forget(item T)
	// NumRequeues is how many failures item has had since it was forgotten.
	NumRequeues(item T) int
}

// The defaults of DefaultControllerRateLimiter, the limiter client-go's
// controllers use unless told otherwise.
const (
	DefaultBaseDelay = 5 * time.Millisecond
	DefaultMaxDelay  = 1000 * time.Second
	DefaultQPS       = 10
	DefaultBurst     = 100
)

// DefaultControllerRateLimiter is the maximum of a per-item exponential
// backoff (5 ms doubling to 1000 s) and an overall token bucket (10 per
// second, bursts of 100): one failing object backs off on its own, and a
// storm of failures across many objects cannot exceed 10 retries a second
// after the first hundred.
func DefaultControllerRateLimiter[T comparable](c clock.Clock) RateLimiter[T] {
	return NewMaxOf[T](
		NewItemExponentialFailure[T](DefaultBaseDelay, DefaultMaxDelay),
		NewBucket[T](c, DefaultQPS, DefaultBurst),
	)
}

// ItemExponentialFailure waits base·2^n for an item's n-th failure
// (counting from 0), capped at max.
type ItemExponentialFailure[T comparable] struct {
	mu       sync.Mutex
	failures map[T]int
	base     time.Duration
	max      time.Duration
}

// NewItemExponentialFailure returns a per-item exponential backoff.
func NewItemExponentialFailure[T comparable](base, max time.Duration) *ItemExponentialFailure[T] {
	return &ItemExponentialFailure[T]{failures: map[T]int{}, base: base, max: max}
}

// When counts a failure of item and returns base·2^(failures before it).
func (r *ItemExponentialFailure[T]) When(item T) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.failures[item]
	r.failures[item] = n + 1
	// Float maths so that 2^n cannot overflow an int64 before the cap.
	d := float64(r.base) * math.Pow(2, float64(n))
	if d >= float64(r.max) {
		return r.max
	}
	return time.Duration(d)
}

// Forget clears item's failures.
func (r *ItemExponentialFailure[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// NumRequeues returns item's failures.
func (r *ItemExponentialFailure[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// Bucket is a token bucket shared by all items: it holds up to burst
// tokens, refilled at qps per second, and each When takes one. Without a
// token the caller waits until one will have arrived: the wait it is given
// reserves that future token, as golang.org/x/time/rate's Reserve does.
type Bucket[T comparable] struct {
	mu     sync.Mutex
	clock  clock.Clock
	qps    float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket.
func NewBucket[T comparable](c clock.Clock, qps float64, burst int) *Bucket[T] {
	if c == nil {
		c = clock.Real{}
	}
	return &Bucket[T]{clock: c, qps: qps, burst: float64(burst), tokens: float64(burst), last: c.Now()}
}

// When takes a token and returns how long until it is really there.
func (b *Bucket[T]) When(T) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = min(b.burst, b.tokens+elapsed.Seconds()*b.qps)
		b.last = now
	}
	b.tokens-- // may go negative: that is the queue of reservations
	if b.tokens >= 0 {
		return 0
	}
	if b.qps <= 0 {
		return DefaultMaxDelay
	}
	return time.Duration(-b.tokens / b.qps * float64(time.Second))
}

// Forget does nothing: the bucket has no per-item state.
func (b *Bucket[T]) Forget(T) {}

// NumRequeues is always 0: the bucket has no per-item state.
func (b *Bucket[T]) NumRequeues(T) int { return 0 }

// MaxOf asks every limiter and waits the longest.
type MaxOf[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOf combines limiters.
func NewMaxOf[T comparable](limiters ...RateLimiter[T]) *MaxOf[T] {
	return &MaxOf[T]{limiters: limiters}
}

// When asks every limiter (each counts the failure) and returns the
// longest wait.
func (r *MaxOf[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range r.limiters {
		d = max(d, l.When(item))
	}
	return d
}

// Forget forgets item in every limiter.
func (r *MaxOf[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues is the largest count any limiter keeps.
func (r *MaxOf[T]) NumRequeues(item T) int {
	n := 0
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

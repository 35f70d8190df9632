package workqueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
)

func TestItemExponentialFailureDoublesPerItemUpToTheCap(t *testing.T) {
	r := NewItemExponentialFailure[string](DefaultBaseDelay, DefaultMaxDelay)
	for i, want := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond} {
		assert.Equal(t, want, r.When("a"), "failure %d", i)
	}
	assert.Equal(t, 4, r.NumRequeues("a"))
	assert.Equal(t, 5*time.Millisecond, r.When("b"), "each item has its own count")

	for range 100 { // far past the cap, and past where 2^n overflows an int64
		r.When("a")
	}
	assert.Equal(t, 1000*time.Second, r.When("a"))

	r.Forget("a")
	assert.Equal(t, 0, r.NumRequeues("a"))
	assert.Equal(t, 5*time.Millisecond, r.When("a"), "forgotten: starts again at the base")
}

func TestBucketAllowsABurstThenPacesAtQPS(t *testing.T) {
	c := clock.NewFake(epoch)
	b := NewBucket[string](c, DefaultQPS, DefaultBurst)
	for i := range DefaultBurst {
		assert.Zero(t, b.When(fmt.Sprint(i)), "token %d of the burst", i)
	}
	assert.Equal(t, 100*time.Millisecond, b.When("x"), "bucket empty: one token every 1/10 s")
	assert.Equal(t, 200*time.Millisecond, b.When("y"), "the next caller waits behind the reservation")
	assert.Zero(t, b.NumRequeues("x"))

	c.Step(10 * time.Second) // refills 100 tokens, minus the 2 reserved
	for i := range DefaultBurst - 2 {
		assert.Zero(t, b.When(fmt.Sprint(i)), "refilled token %d", i)
	}
	assert.Equal(t, 100*time.Millisecond, b.When("z"))
}

func TestDefaultControllerRateLimiterIsTheMaxOfBoth(t *testing.T) {
	c := clock.NewFake(epoch)
	r := DefaultControllerRateLimiter[string](c)
	assert.Equal(t, 5*time.Millisecond, r.When("a"), "per-item backoff wins while the bucket has tokens")
	assert.Equal(t, 10*time.Millisecond, r.When("a"))
	for i := range DefaultBurst - 2 {
		r.When(fmt.Sprint(i))
	}
	assert.Equal(t, 100*time.Millisecond, r.When("fresh"), "a storm across many items: the bucket wins")
	assert.Equal(t, 2, r.NumRequeues("a"))
	r.Forget("a")
	assert.Equal(t, 0, r.NumRequeues("a"))
}

func TestRateLimitingQueueBacksOffAndForgets(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewRateLimiting[string](Config{Clock: c}, nil)
	defer q.ShutDown()

	for _, wait := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		q.AddRateLimited("a")
		waitForTimer(t, c, wait)
		c.Step(wait)
		got := getDue(t, q, c)
		assert.Equal(t, "a", got)
		q.Done(got)
	}
	assert.Equal(t, 3, q.NumRequeues("a"))
	q.Forget("a")
	assert.Equal(t, 0, q.NumRequeues("a"))
	q.AddRateLimited("a")
	waitForTimer(t, c, 5*time.Millisecond)
	assert.Equal(t, int64(4), q.Metrics().Retries)
}

// A controller's worker: retry on failure with backoff, Forget on success.
func ExampleRateLimitingQueue() {
	c := clock.NewFake(epoch) // a fake clock, so the example need not sleep
	q := NewRateLimiting[string](Config{Clock: c}, nil)
	defer q.ShutDown()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()

	attempts := 0
	reconcile := func(key string) error {
		attempts++
		if attempts < 3 {
			return fmt.Errorf("attempt %d: the API said 409", attempts)
		}
		return nil
	}

	q.Add("default/web")
	for {
		key, _ := q.Get()
		err := reconcile(key)
		if err == nil {
			fmt.Println("reconciled", key, "after", q.NumRequeues(key), "retries")
			q.Forget(key) // success: the next failure starts at 5 ms again
			q.Done(key)
			return
		}
		fmt.Println(err, "- retry", q.NumRequeues(key)+1)
		q.AddRateLimited(key)
		q.Done(key)
		// Let the backoff pass, once the queue has set its timer: a Step
		// before that would set the timer from the new time, a whole
		// backoff away, and Get would wait for ever.
		if err := c.BlockUntilWaiters(ctx, 1); err != nil {
			fmt.Println("the queue set no timer:", err)
			return
		}
		c.Step(time.Hour)
	}
	// Output:
	// attempt 1: the API said 409 - retry 1
	// attempt 2: the API said 409 - retry 2
	// reconciled default/web after 2 retries
}

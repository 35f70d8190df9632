package workqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/internal/clock"
	"listwatch/internal/syncbuf"
	"listwatch/narrate"
)

// newTracer narrates without times, so output can be compared.
func newTracer(b *syncbuf.Buffer) *narrate.Tracer { return narrate.New(b, narrate.WithoutTimes()) }

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// anything must be: on a busy machine under -race the code under test
// answers in far less, and a test that needs something waits for it.
const safetyTimeout = 2 * time.Minute

// waitForTimer blocks until the code under test waits on a timer of d, and
// returns that timer.
func waitForTimer(t *testing.T, c *clock.Fake, d time.Duration) clock.Waiter {
	t.Helper()
	return waitForTimerArmedAfter(t, c, d, clock.Waiter{})
}

// waitForTimerArmedAfter blocks until the code under test waits on a timer of
// d armed after old. The delaying queue's goroutine re-arms its timer after
// every add, reading the clock first: a test that stepped the clock while
// the old timer of the same duration was still pending could step between
// that read and the new timer, and the new timer would then wait a whole
// d from the stepped time. Waiting for the new timer itself closes that gap.
func waitForTimerArmedAfter(t *testing.T, c *clock.Fake, d time.Duration, old clock.Waiter) clock.Waiter {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	w, err := c.WaitForWaiter(ctx, func(w clock.Waiter) bool {
		return w.Kind == clock.KindTimer && w.Duration == d && w.Arming > old.Arming
	})
	require.NoError(t, err, "nobody waited on a %v timer armed after #%d; waiting: %v", d, old.Arming, c.Waiters())
	return w
}

// getDue takes the next item from a queue whose items arrive when the test
// steps c, failing after safetyTimeout rather than blocking until go test's
// own timeout ends the whole package (a Step that fired no timer leaves Get
// waiting forever). On failure the Get goroutine ends at the test's
// deferred ShutDown.
func getDue[T comparable](t *testing.T, q Interface[T], c *clock.Fake) T {
	t.Helper()
	type got struct {
		item     T
		shutdown bool
	}
	ch := make(chan got, 1)
	go func() {
		item, shutdown := q.Get()
		ch <- got{item, shutdown}
	}()
	select {
	case g := <-ch:
		require.False(t, g.shutdown, "the queue shut down while the test waited for an item")
		return g.item
	case <-time.After(safetyTimeout):
		t.Fatalf("Get still waits after %v: nothing came due; the clock reads %v, its waiters: %v", safetyTimeout, c.Now(), c.Waiters())
		var zero T
		return zero
	}
}

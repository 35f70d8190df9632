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

// waitForTimer blocks until the code under test waits on a timer of d.
func waitForTimer(t *testing.T, c *clock.Fake, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	_, err := c.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Kind == clock.KindTimer && w.Duration == d })
	require.NoError(t, err, "nobody waited on a %v timer; waiting: %v", d, c.Waiters())
}

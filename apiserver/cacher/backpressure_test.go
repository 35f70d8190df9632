package cacher

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

// A writer waits while more frames than MaxQueuedFrames wait for the
// watchers' connections, and goes on as soon as they are read.
func TestWritersWaitForTheFanOut(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{MaxQueuedFrames: 2})
	w := e.watch(WatchOptions{ResourceVersion: e.c.Revision(), RVSet: true})
	defer w.Stop()
	assert.False(t, admit(e.c, context.Background()), "nothing queued: no wait")
	for _, n := range []string{"a", "b", "c"} {
		e.create("ns", n, nil, "")
	}
	require.Eventually(t, func() bool { return e.c.QueuedFrames() == 3 }, safetyTimeout, time.Millisecond)

	// Nobody reads: the writer waits until its own client goes away.
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan bool, 1)
	go func() { waited <- admit(e.c, ctx) }()
	cancel()
	assert.True(t, <-waited)
	frames(t, w, 3) // the connection drains the queue: writers go on at once
	assert.False(t, admit(e.c, context.Background()))
	assert.Equal(t, int64(0), e.c.QueuedFrames())
	assert.Equal(t, int64(0), e.c.Stats().QueuedFrames)

	// A stopped watcher's frames stop counting.
	e.create("ns", "d", nil, "")
	e.create("ns", "e", nil, "")
	e.create("ns", "f", nil, "")
	require.Eventually(t, func() bool { return e.c.QueuedFrames() == 3 }, safetyTimeout, time.Millisecond)
	w.Stop()
	assert.Equal(t, int64(0), e.c.QueuedFrames())
}

// admit is one write admitted and over at once; it reports whether it
// waited.
func admit(c *Cacher, ctx context.Context) bool {
	done, waited := c.AdmitWrite(ctx)
	done()
	return waited
}

// A write admitted and not over yet counts as the fan-out of one event to
// every watcher: writers let through together cannot all pass one check.
func TestAdmittedWritesCountAsFanOutToCome(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{MaxQueuedFrames: 2})
	for range 3 {
		w := e.watch(WatchOptions{ResourceVersion: e.c.Revision(), RVSet: true})
		defer w.Stop()
	}
	first, waited := e.c.AdmitWrite(context.Background())
	assert.False(t, waited, "nothing to do yet")
	assert.Equal(t, int64(3), e.c.fanOutPending(), "the first write's event, to 3 watchers")

	// A second writer is not admitted while the first counts: asked
	// directly, not by watching a clock for "not yet" (which would also
	// race the second a writer waits at most).
	assert.False(t, e.c.admit(2), "the second write was admitted while the first counted")
	// A second writer goes on once the first write is over (and its
	// event, here none, fanned out); it may ask before or after.
	second := make(chan bool, 1)
	go func() { second <- admit(e.c, context.Background()) }()
	first()
	first() // done is idempotent
	<-second
	assert.Equal(t, int64(0), e.c.fanOutPending())

	// Without watchers, nothing waits.
	assert.False(t, admit(newEnv(t, Config{MaxQueuedFrames: 2}).c, context.Background()))
}

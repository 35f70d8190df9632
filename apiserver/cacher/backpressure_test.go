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
	assert.False(t, e.c.WaitForFanOut(context.Background()), "nothing queued: no wait")
	for _, n := range []string{"a", "b", "c"} {
		e.create("ns", n, nil, "")
	}
	require.Eventually(t, func() bool { return e.c.QueuedFrames() == 3 }, 10*time.Second, time.Millisecond)

	// Nobody reads: the writer waits until its own client goes away.
	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan bool, 1)
	go func() { waited <- e.c.WaitForFanOut(ctx) }()
	cancel()
	assert.True(t, <-waited)
	frames(t, w, 3) // the connection drains the queue: writers go on at once
	assert.False(t, e.c.WaitForFanOut(context.Background()))
	assert.Equal(t, int64(0), e.c.QueuedFrames())
	assert.Equal(t, int64(0), e.c.Stats().QueuedFrames)

	// A stopped watcher's frames stop counting.
	e.create("ns", "d", nil, "")
	e.create("ns", "e", nil, "")
	e.create("ns", "f", nil, "")
	require.Eventually(t, func() bool { return e.c.QueuedFrames() == 3 }, 10*time.Second, time.Millisecond)
	w.Stop()
	assert.Equal(t, int64(0), e.c.QueuedFrames())

}

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
	// race the second a writer waits at most). It waits in line.
	place := e.c.admitOrQueue(2)
	require.NotNil(t, place, "the second write was admitted while the first counted")
	assert.False(t, e.c.admitFirst(2, place), "admitted while the first write counted")
	// A third writer, arriving while the second waits, waits behind it
	// even once the fan-out has room: first come, first admitted.
	first()
	first() // done is idempotent
	third := e.c.admitOrQueue(2)
	require.NotNil(t, third, "the third write went ahead of the second, which waits")
	assert.False(t, e.c.admitFirst(2, third), "the third write was admitted before the second")
	assert.True(t, e.c.admitFirst(2, place), "the second write, first in line, was not admitted once the first was over")
	e.c.admission.writing.Add(-1) // the second write is over
	assert.True(t, e.c.admitFirst(2, third))
	e.c.admission.writing.Add(-1)
	assert.Equal(t, int64(0), e.c.fanOutPending())

	// A writer that stops waiting leaves its place to the one behind it.
	e.c.admission.writing.Add(1) // a write in progress: others wait
	gone, behind := e.c.admitOrQueue(2), e.c.admitOrQueue(2)
	require.NotNil(t, gone)
	require.NotNil(t, behind)
	e.c.leaveLine(gone) // its context ended: it goes ahead, counted
	e.c.admission.writing.Add(-2)
	assert.True(t, e.c.admitFirst(2, behind), "the writer behind one that left was not admitted")
	e.c.admission.writing.Add(-1)
	assert.Empty(t, e.c.admission.line)

	// And through AdmitWrite: a writer waiting goes on once the fan-out
	// has room.
	hold, _ := e.c.AdmitWrite(context.Background())
	second := make(chan bool, 1)
	go func() { second <- admit(e.c, context.Background()) }()
	hold()
	<-second
	assert.Equal(t, int64(0), e.c.fanOutPending())

	// Without watchers, nothing waits.
	assert.False(t, admit(newEnv(t, Config{MaxQueuedFrames: 2}).c, context.Background()))
}

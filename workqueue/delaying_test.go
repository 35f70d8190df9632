package workqueue

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
)

func TestDelayingQueueAddsOnlyWhenDue(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewDelaying[string](Config{Clock: c})
	defer q.ShutDown()

	q.AddAfter("a", time.Second)
	waitForTimer(t, c, time.Second)
	c.Step(999 * time.Millisecond)
	assert.Equal(t, 0, q.Len(), "not due yet")
	c.Step(time.Millisecond)
	got := getDue(t, q, c) // the timer goroutine adds it
	assert.Equal(t, "a", got)
}

func TestDelayingQueueZeroDelayAddsNow(t *testing.T) {
	defer leakcheck.Check(t)()
	q := NewDelaying[string](Config{Clock: clock.NewFake(epoch)})
	defer q.ShutDown()
	q.AddAfter("now", 0)
	q.AddAfter("past", -time.Second)
	assert.Equal(t, 2, q.Len())
}

func TestDelayingQueueEarliestTimeWinsAndOrderIsByTime(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewDelaying[string](Config{Clock: c})
	defer q.ShutDown()

	q.AddAfter("late", 3*time.Second)
	waitForTimer(t, c, 3*time.Second)
	q.AddAfter("early", 2*time.Second)
	waitForTimer(t, c, 2*time.Second)
	q.AddAfter("late", time.Second) // asked again, sooner: the sooner wins
	armed := waitForTimer(t, c, time.Second)
	q.AddAfter("early", 10*time.Second) // asked again, later: the earlier stays
	// The loop re-arms for the earliest (1 s) after taking the add.
	waitForTimerArmedAfter(t, c, time.Second, armed)

	c.Step(time.Second)
	got := getDue(t, q, c)
	assert.Equal(t, "late", got)
	waitForTimer(t, c, time.Second) // early is now 1 s away
	assert.Equal(t, 0, q.Len())
	c.Step(time.Second)
	got = getDue(t, q, c)
	assert.Equal(t, "early", got)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	_, err := c.WaitFor(ctx, func(ws []clock.Waiter) bool { return len(ws) == 0 })
	require.NoError(t, err, "nothing left waiting: no timer at all")
}

func TestDelayingQueueShutDownStopsItsGoroutineAndDropsWaiters(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewDelaying[string](Config{Clock: c})
	q.AddAfter("a", time.Hour)
	waitForTimer(t, c, time.Hour)
	q.ShutDown()
	q.ShutDown() // twice is fine
	assert.False(t, c.HasWaiters(), "the timer is stopped")
	q.AddAfter("b", time.Second)
	_, shutdown := q.Get()
	assert.True(t, shutdown)
}

func TestDelayingQueueCountsRetries(t *testing.T) {
	defer leakcheck.Check(t)()
	q := NewDelaying[string](Config{Clock: clock.NewFake(epoch)})
	defer q.ShutDown()
	q.AddAfter("a", 0)
	q.AddAfter("b", time.Minute)
	assert.Equal(t, int64(2), q.Metrics().Retries)
}

func TestDelayingQueueCountsItsWaitingRoomUntilIdle(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewDelaying[string](Config{Clock: c})
	defer q.ShutDown()
	assert.True(t, q.Metrics().Idle(), "a new queue is idle")

	q.AddAfter("a", time.Second)
	assert.Equal(t, 1, q.Metrics().Waiting, "counted as soon as AddAfter returns")
	assert.False(t, q.Metrics().Idle(), "a retry is scheduled: not idle, though nothing is queued")
	armed := waitForTimer(t, c, time.Second)
	q.AddAfter("a", 2*time.Second) // merged into the earlier wait
	// Counted twice until the timer goroutine merges them; it merges before
	// it re-arms its timer for the earliest wait, still 1 s.
	waitForTimerArmedAfter(t, c, time.Second, armed)
	assert.Equal(t, 1, q.Metrics().Waiting, "the second wait for a merged into the first")

	c.Step(time.Second)
	item := getDue(t, q, c)
	m := q.Metrics()
	assert.Equal(t, 0, m.Waiting, "due: moved into the queue")
	assert.False(t, m.Idle(), "a worker holds it")
	q.Done(item)
	assert.True(t, q.Metrics().Idle())
}

func TestDelayingQueueShutDownEmptiesItsWaitingRoom(t *testing.T) {
	defer leakcheck.Check(t)()
	c := clock.NewFake(epoch)
	q := NewDelaying[string](Config{Clock: c})
	q.AddAfter("a", time.Hour)
	waitForTimer(t, c, time.Hour)
	q.ShutDown()
	assert.Zero(t, q.Metrics().Waiting, "dropped, not waiting")
}

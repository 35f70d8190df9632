package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
)

// spillBuffer is a WatchBuffer well above the channel a watcher gets, so
// a reader can fall behind by more than the channel and not be ended.
const spillBuffer = 4 * watchChanSize

// A reader that falls behind by more than its channel, but less than
// WatchBuffer, gets every event in order once it reads again, and its
// watch goes on live afterwards: the writers never waited for it.
func TestSpilledWatcherGetsEveryEventInOrder(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: spillBuffer})
	w, err := s.Watch(context.Background(), "/", 1)
	require.NoError(t, err)
	defer w.Stop()

	const behind = spillBuffer - 1
	for i := range behind {
		mustCreate(t, s, "ns", fmt.Sprint(i), "1")
	}
	requireConsecutive(t, receive(t, w, behind), 2)
	mustCreate(t, s, "ns", "after", "1")
	requireConsecutive(t, receive(t, w, 1), 2+behind)
	assert.Nil(t, w.Err())
}

// A reader WatchBuffer events behind is ended as too slow, as with a
// channel of that size: it reads every event queued before, then the end.
func TestSpilledWatcherTooFarBehindIsEnded(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: spillBuffer})
	ctx := context.Background()
	stalled, err := s.Watch(ctx, "/", 1)
	require.NoError(t, err)
	defer stalled.Stop()
	fast, err := s.Watch(ctx, "/", 1)
	require.NoError(t, err)
	defer fast.Stop()

	const writes = spillBuffer + 10
	for i := range writes {
		mustCreate(t, s, "ns", fmt.Sprint(i), "1")
		requireConsecutive(t, receive(t, fast, 1), int64(2+i))
	}
	evs := drainClosed(t, stalled)
	requireConsecutive(t, evs, 2)
	assert.Len(t, evs, spillBuffer, "it got what fitted in its buffer, then the channel closed")
	require.ErrorIs(t, stalled.Err(), ErrWatcherTooSlow)
	assert.Contains(t, stalled.Err().Error(), fmt.Sprintf("at revision %d", 2+spillBuffer))
	assert.Nil(t, fast.Err(), "the fast watcher is unaffected")
}

// Stop and Close end a spilling watcher whose reader has gone: its
// goroutine, blocked sending, ends with it (leakcheck).
func TestSpillingWatcherStopsAndCloses(t *testing.T) {
	defer leakcheck.Check(t)()
	for _, how := range []string{"stop", "close"} {
		t.Run(how, func(t *testing.T) {
			s := New(Options{WatchBuffer: spillBuffer})
			defer s.Close()
			w, err := s.Watch(context.Background(), "/", 1)
			require.NoError(t, err)
			for i := range watchChanSize + 10 {
				mustCreate(t, s, "ns", fmt.Sprint(i), "1")
			}
			if how == "stop" {
				w.Stop()
				assert.NoError(t, w.Err())
			} else {
				s.Close()
				w.Stop() // waits until the channel is closed
				assert.ErrorIs(t, w.Err(), ErrClosed)
			}
			evs := drainClosed(t, w)
			assert.LessOrEqual(t, len(evs), watchChanSize+10)
		})
	}
}

// A progress request while events wait aside is skipped: a progress event
// must come after every change it covers.
func TestProgressWaitsForTheSpill(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: spillBuffer})
	ctx := context.Background()
	w, err := s.Watch(ctx, "/", 1)
	require.NoError(t, err)
	defer w.Stop()
	const writes = watchChanSize + 10
	for i := range writes {
		mustCreate(t, s, "ns", fmt.Sprint(i), "1")
	}
	require.NoError(t, w.RequestProgress(ctx))
	evs := receive(t, w, writes)
	requireConsecutive(t, evs, 2)
	// Caught up: a request is answered once the watcher is live again,
	// after the last change.
	var progress Event
	require.Eventually(t, func() bool {
		if w.RequestProgress(ctx) != nil {
			return false
		}
		select {
		case progress = <-w.Events():
			return true
		default:
			return false
		}
	}, safetyTimeout, time.Millisecond)
	assert.True(t, progress.IsProgress(), "%+v", progress)
	assert.Equal(t, int64(1+writes), progress.Revision)
}

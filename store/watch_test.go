package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

func TestWatchReplaysHistoryThenGoesLive(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{})
	ctx := context.Background()
	key := cmKey("ns", "a")

	created := mustCreate(t, s, "ns", "a", "1") // rev 2
	updated, err := s.Update(ctx, key, configMap("ns", "a", "2"), Preconditions{})
	require.NoError(t, err) // rev 3

	w, err := s.Watch(ctx, "/registry/configmaps/", 1)
	require.NoError(t, err)
	defer w.Stop()

	last, err := s.Delete(ctx, key, Preconditions{}) // rev 4, live
	require.NoError(t, err)

	evs := receive(t, w, 3)
	requireConsecutive(t, evs, 2)

	assert.Equal(t, Event{Type: api.Added, Key: key, Revision: 2, Object: created}, evs[0])
	assert.Equal(t, Event{Type: api.Modified, Key: key, Revision: 3, Object: updated, PrevObject: created}, evs[1])

	del := evs[2]
	assert.Equal(t, api.Deleted, del.Type)
	assert.Same(t, last, del.PrevObject)
	assert.Equal(t, "4", del.Object.Metadata.ResourceVersion, "a DELETED object carries the deletion's revision")
	assert.Equal(t, "3", last.Metadata.ResourceVersion, "the returned last state keeps its own")
	assert.Equal(t, `{"v":"2"}`, dataOf(del.Object), "and is otherwise the last state")
	assert.Equal(t, last.Metadata.UID, del.Object.Metadata.UID)
	assert.Nil(t, w.Err())
}

func TestWatchFiltersByPrefixAndRevision(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{})
	ctx := context.Background()

	ns1, err := s.Watch(ctx, "/registry/configmaps/ns1/", 0)
	require.NoError(t, err)
	defer ns1.Stop()
	future, err := s.Watch(ctx, "/registry/configmaps/", 4) // ahead of the store: waits
	require.NoError(t, err)
	defer future.Stop()

	mustCreate(t, s, "ns1", "a", "1") // 2
	mustCreate(t, s, "ns2", "a", "1") // 3
	mustCreate(t, s, "ns1", "b", "1") // 4
	mustCreate(t, s, "ns2", "b", "1") // 5
	mustCreate(t, s, "ns1", "c", "1") // 6

	var revs []int64
	for _, ev := range receive(t, ns1, 3) {
		revs = append(revs, ev.Revision)
	}
	assert.Equal(t, []int64{2, 4, 6}, revs)

	revs = nil
	for _, ev := range receive(t, future, 2) {
		revs = append(revs, ev.Revision)
	}
	assert.Equal(t, []int64{5, 6}, revs, "only revisions after fromRevision")
	assert.Empty(t, ns1.Events())
	assert.Empty(t, future.Events())
}

func TestWatchFromCompactedRevision(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{})
	for range 5 {
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	require.NoError(t, s.Compact(4))

	w, err := s.Watch(context.Background(), "/", 3)
	require.Error(t, err)
	assert.Nil(t, w)
	assert.ErrorIs(t, err, ErrCompacted)
	var ce *CompactedError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, int64(3), ce.Requested)
	assert.Equal(t, int64(4), ce.Compacted)
	assert.Equal(t, "revision 3: required revision has been compacted (compacted at 4)", err.Error())
}

func TestConcurrentWatchersSeeEveryEventInOrder(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{})
	ctx := context.Background()
	const writers, perWriter, watchers = 4, 250, 10
	const total = writers * perWriter
	final := int64(1 + total)

	results := make([][]Event, watchers)
	var readers sync.WaitGroup
	start := func(i int) {
		w, err := s.Watch(ctx, "/registry/", 1)
		require.NoError(t, err)
		readers.Go(func() {
			defer w.Stop()
			for ev := range w.Events() {
				results[i] = append(results[i], ev)
				if ev.Revision == final {
					return
				}
			}
		})
	}

	var wg sync.WaitGroup
	for wr := range writers {
		wg.Go(func() {
			for i := range perWriter {
				name := fmt.Sprintf("w%d-%d", wr, i%10)
				key := cmKey("ns", name)
				if i < 10 {
					_, err := s.Create(ctx, key, configMap("ns", name, "0"))
					assert.NoError(t, err)
				} else {
					_, err := s.GuaranteedUpdate(ctx, key, increment)
					assert.NoError(t, err)
				}
			}
		})
	}
	// Watchers join while the writers run: some replay much, some little.
	for i := range watchers {
		start(i)
	}
	wg.Wait()
	readers.Wait()

	for i, evs := range results {
		require.Len(t, evs, total, "watcher %d", i)
		requireConsecutive(t, evs, 2)
	}
}

// TestCatchUpRacesWriters replays a long history through a small buffer while
// writers keep committing, so the hand-over from replay to live delivery
// happens under load. A reader ended as too slow resumes from the last
// revision it saw, as a real client does; what it reads must still be every
// revision exactly once, in order.
func TestCatchUpRacesWriters(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: 8})
	ctx := context.Background()
	for range 500 {
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	const live = 300
	final := s.Revision() + live

	var wg sync.WaitGroup
	wg.Go(func() {
		for range live {
			_, err := s.Create(ctx, cmKey("ns", NewUID()), configMap("ns", "x", "1"))
			assert.NoError(t, err)
		}
	})

	var got []Event
	restarts := 0
	from := int64(1)
	for from < final {
		w, err := s.Watch(ctx, "/", from)
		require.NoError(t, err)
		for ev := range w.Events() {
			got = append(got, ev)
			from = ev.Revision
			if from == final {
				break
			}
		}
		if from < final {
			require.ErrorIs(t, w.Err(), ErrWatcherTooSlow)
			restarts++
		}
		w.Stop()
	}
	wg.Wait()
	requireConsecutive(t, got, 2)
	t.Logf("restarts after falling behind: %d", restarts)
}

func TestLongReplayThroughSmallBuffer(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: 4})
	for range 2000 {
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	w, err := s.Watch(context.Background(), "/", 1)
	require.NoError(t, err)
	defer w.Stop()
	requireConsecutive(t, receive(t, w, 2000), 2)

	// Caught up: the next write arrives live.
	mustCreate(t, s, "ns", "after", "1")
	requireConsecutive(t, receive(t, w, 1), 2002)
}

func TestStalledWatcherIsEndedOthersAreNot(t *testing.T) {
	defer leakcheck.Check(t)()
	const buffer = 16
	s := newTestStore(t, Options{WatchBuffer: buffer})
	ctx := context.Background()

	stalled, err := s.Watch(ctx, "/", 1)
	require.NoError(t, err)
	defer stalled.Stop()
	fast, err := s.Watch(ctx, "/", 1)
	require.NoError(t, err)
	defer fast.Stop()

	// The test goroutine writes and reads the fast watcher in turn; the
	// stalled one is never read. Every write must return on its own.
	const writes = 3 * buffer
	for i := range writes {
		done := make(chan error, 1)
		go func() {
			_, err := s.Create(ctx, cmKey("ns", fmt.Sprint(i)), configMap("ns", fmt.Sprint(i), "1"))
			done <- err
		}()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(safetyTimeout): // a writer that waits for a watcher waits for ever
			require.FailNow(t, "a writer waited for a watcher", "write %d", i)
		}
		requireConsecutive(t, receive(t, fast, 1), int64(2+i))
	}

	evs := drainClosed(t, stalled)
	requireConsecutive(t, evs, 2)
	assert.Len(t, evs, buffer, "it got what fitted in its buffer, then the channel closed")
	require.ErrorIs(t, stalled.Err(), ErrWatcherTooSlow)
	assert.Contains(t, stalled.Err().Error(), fmt.Sprintf("at revision %d", 2+buffer))

	assert.Nil(t, fast.Err(), "the fast watcher is unaffected")
	mustCreate(t, s, "ns", "last", "1")
	requireConsecutive(t, receive(t, fast, 1), int64(2+writes))
}

func TestCatchUpOvertakenByCompaction(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: 4, HistoryLimit: 50})
	for range 40 { // 2..41
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	w, err := s.Watch(context.Background(), "/", 1) // replays: 40 events > buffer
	require.NoError(t, err)
	defer w.Stop()
	for range 100 { // the history it still needs is compacted away
		mustCreate(t, s, "ns", NewUID(), "1")
	}

	evs := drainClosed(t, w)
	requireConsecutive(t, evs, 2)
	assert.Less(t, len(evs), 40+100, "it cannot have got everything")
	err = w.Err()
	require.ErrorIs(t, err, ErrWatcherTooSlow)
	require.ErrorIs(t, err, ErrCompacted)
	var ce *CompactedError
	require.ErrorAs(t, err, &ce)
	resume := int64(1) // the goroutine may not have sent anything yet
	if len(evs) > 0 {
		resume = evs[len(evs)-1].Revision
	}
	assert.Equal(t, resume, ce.Requested, "resume point is the last revision delivered")
}

func TestWatchStop(t *testing.T) {
	tests := []struct {
		name    string
		backlog int // events in history before the watch starts
	}{
		{name: "live watcher", backlog: 0},
		{name: "watcher replaying history", backlog: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			s := newTestStore(t, Options{WatchBuffer: 4})
			for range tt.backlog {
				mustCreate(t, s, "ns", NewUID(), "1")
			}
			w, err := s.Watch(context.Background(), "/", 1)
			require.NoError(t, err)

			var wg sync.WaitGroup
			for range 3 { // idempotent, from any goroutine
				wg.Go(w.Stop)
			}
			wg.Wait()
			w.Stop()
			drainClosed(t, w)
			assert.NoError(t, w.Err())

			// The store forgot it: writes go on without it.
			for range 10 {
				mustCreate(t, s, "ns", NewUID(), "1")
			}
			s.mu.RLock()
			assert.Empty(t, s.watchers)
			s.mu.RUnlock()
		})
	}
}

func TestWatchEndsWhenContextIsDone(t *testing.T) {
	for _, backlog := range []int{0, 100} {
		t.Run(fmt.Sprintf("backlog %d", backlog), func(t *testing.T) {
			defer leakcheck.Check(t)()
			s := newTestStore(t, Options{WatchBuffer: 4})
			for range backlog {
				mustCreate(t, s, "ns", NewUID(), "1")
			}
			ctx, cancel := context.WithCancel(context.Background())
			w, err := s.Watch(ctx, "/", 1)
			require.NoError(t, err)
			cancel()
			drainClosed(t, w)
			assert.NoError(t, w.Err())
			w.Stop()
		})
	}
}

func TestCloseEndsEveryWatch(t *testing.T) {
	defer leakcheck.Check(t)()
	s := New(Options{WatchBuffer: 4})
	for range 100 {
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	live, err := s.Watch(context.Background(), "/", s.Revision())
	require.NoError(t, err)
	replaying, err := s.Watch(context.Background(), "/", 1)
	require.NoError(t, err)

	s.Close()
	for _, w := range []Watcher{live, replaying} {
		drainClosed(t, w)
		require.ErrorIs(t, w.Err(), ErrClosed)
		w.Stop() // still fine
	}
	_, err = s.Watch(context.Background(), "/", 0)
	require.ErrorIs(t, err, ErrClosed)
}

func TestWatcherErrIsNilWhileRunning(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{})
	w, err := s.Watch(context.Background(), "/", 0)
	require.NoError(t, err)
	defer w.Stop()
	mustCreate(t, s, "ns", "a", "1")
	receive(t, w, 1)
	assert.NoError(t, w.Err())
	assert.False(t, errors.Is(w.Err(), ErrClosed))
}

// TestRevisionIsPublishedAfterDispatch: once Revision() says N, a live
// watcher's channel already holds every event up to N (for a watcher whose
// events all fit in its channel: beyond it they wait aside, spill.go). The
// cacher relies on this to know when it has caught up with the store.
func TestRevisionIsPublishedAfterDispatch(t *testing.T) {
	defer leakcheck.Check(t)()
	s := newTestStore(t, Options{WatchBuffer: watchChanSize})
	w, err := s.Watch(context.Background(), "/", s.Revision())
	require.NoError(t, err)
	defer w.Stop()

	const writes = watchChanSize
	// Read before the writer starts: read after, it could already count
	// writes whose events are still in the channel.
	seen := s.Revision()
	final := seen + writes
	var wg sync.WaitGroup
	wg.Go(func() {
		for range writes {
			_, err := s.Create(context.Background(), cmKey("ns", NewUID()), configMap("ns", "x", "1"))
			assert.NoError(t, err)
		}
	})
	for seen < final {
		rev := s.Revision()
	drain:
		for {
			select {
			case ev := <-w.Events():
				require.Equal(t, seen+1, ev.Revision)
				seen = ev.Revision
			default:
				break drain
			}
		}
		require.GreaterOrEqual(t, seen, rev, "Revision() ran ahead of the events queued")
	}
	wg.Wait()
}

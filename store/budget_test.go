package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// bigConfigMap is a ConfigMap whose data is n bytes.
func bigConfigMap(ns, name string, n int) *api.Object {
	return configMap(ns, name, strings.Repeat("x", n))
}

func TestHistoryIsBoundedInBytes(t *testing.T) {
	const objBytes = 100 << 10
	// Room for about 10 events of 100 KiB, far fewer than the event limit.
	s := newTestStore(t, Options{HistoryBytes: 10*objBytes + 10*api.SizeOverhead + 4096})
	mustCreate(t, s, "ns", "a", "")
	for range 50 {
		_, err := s.Update(context.Background(), cmKey("ns", "a"), bigConfigMap("ns", "a", objBytes), Preconditions{})
		require.NoError(t, err)
	}
	s.mu.RLock()
	held, bytes := s.hist.n, s.hist.bytes
	s.mu.RUnlock()
	assert.LessOrEqual(t, bytes, s.opts.HistoryBytes)
	assert.InDelta(t, 10, held, 1, "about ten 100 KiB events fit")
	assert.Equal(t, s.Revision()-int64(held), s.CompactedRevision(), "what was dropped counts as compacted")

	_, err := s.Watch(context.Background(), "/", 2)
	require.ErrorIs(t, err, ErrCompacted, "an old watch gets 410, not the dropped events")
}

func TestOneEventLargerThanTheBudgetIsKept(t *testing.T) {
	s := newTestStore(t, Options{HistoryBytes: 1024})
	mustCreate(t, s, "ns", "a", strings.Repeat("y", 4096))
	mustCreate(t, s, "ns", "b", strings.Repeat("y", 4096))
	s.mu.RLock()
	defer s.mu.RUnlock()
	assert.Equal(t, 1, s.hist.n, "the newest event stays, however large")
	assert.Equal(t, int64(2), s.compacted)
}

// A restarted server starts its revisions above any it issued before, so a
// resourceVersion from the earlier life is too old (410), never a future
// revision to wait for.
func TestStartRevisionMakesEarlierRevisionsCompacted(t *testing.T) {
	before := newTestStore(t, Options{StartRevision: 1000})
	var last int64
	for range 5 {
		last = rv(t, mustCreate(t, before, "ns", NewUID(), "v"))
	}
	assert.Equal(t, int64(1005), last)
	before.Close()

	after := newTestStore(t, Options{StartRevision: 2000})
	assert.Equal(t, int64(2000), after.Revision())
	assert.Equal(t, int64(2000), after.CompactedRevision())
	_, err := after.Watch(context.Background(), "/", last)
	require.ErrorIs(t, err, ErrCompacted)
	_, err = after.List(context.Background(), "/", ListOptions{Revision: last})
	require.ErrorIs(t, err, ErrCompacted)

	w, err := after.Watch(context.Background(), "/", after.Revision())
	require.NoError(t, err, "a watch from the start revision is fine")
	defer w.Stop()
	created := mustCreate(t, after, "ns", "new", "v")
	assert.Equal(t, "2001", created.Metadata.ResourceVersion)
	assert.Equal(t, int64(2001), receive(t, w, 1)[0].Revision)
}

func TestRevisionFromClockGrowsWithTime(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	assert.Less(t, RevisionFromClock(t0), RevisionFromClock(t0.Add(time.Microsecond)))
	assert.Less(t, RevisionFromClock(t0), int64(1)<<53, "exact as a float64")
}

// Without periodic compaction an exact read of an old
// revision (a paged list's next page) succeeds for ever. With it, the old
// revision is compacted within two intervals and the reader is told to
// start over.
func TestPeriodicCompaction(t *testing.T) {
	s := newTestStore(t, Options{CompactionInterval: 5 * time.Millisecond})
	mustCreate(t, s, "ns", "a", "1")
	old := s.Revision()
	mustCreate(t, s, "ns", "b", "1")
	_, err := s.List(context.Background(), "/", ListOptions{Revision: old - 1})
	require.NoError(t, err, "readable before the compactor runs")

	require.Eventually(t, func() bool { return s.CompactedRevision() >= old }, safetyTimeout, time.Millisecond)
	_, err = s.List(context.Background(), "/", ListOptions{Revision: old - 1})
	require.ErrorIs(t, err, ErrCompacted)
	res, err := s.List(context.Background(), "/", ListOptions{})
	require.NoError(t, err)
	assert.Len(t, res.Items, 2, "compaction forgets history, not state")
}

func TestCompactorStopsWithTheStore(t *testing.T) {
	defer leakcheck.Check(t)()
	s := New(Options{CompactionInterval: time.Millisecond})
	s.Close() // returns only once the compactor has exited
	assert.ErrorIs(t, s.Compact(1), ErrClosed)
}

package cacher

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// The ring holds at most HistoryBytes of events, whatever its capacity in
// events; a watch from before what it holds gets 410, and every event
// reaches a live watcher even when each is larger than the whole budget
// (the store follower waits for the dispatcher instead of overwriting).
func TestRingIsBoundedInBytes(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	const objBytes = 64 << 10
	budget := int64(8 * 2 * (objBytes + 1024)) // about 8 events: each is charged twice its object
	e := newEnv(t, Config{HistoryBytes: budget}, store.Options{})
	live := e.watch(WatchOptions{ResourceVersion: e.c.Revision(), RVSet: true})
	defer live.Stop()
	first := e.create("ns", "a", nil, "")
	_ = frames(t, live, 1) // the create
	big := strings.Repeat("x", objBytes)
	for range 40 {
		e.update("ns", "a", nil, big)
		_ = frames(t, live, 1) // keep the live watcher reading
	}
	st := e.c.Stats()
	assert.LessOrEqual(t, st.HistoryBytes, budget)
	assert.Equal(t, budget, st.HistoryMaxBytes)
	assert.InDelta(t, 8, st.HistoryLen, 2, "about eight 64 KiB events fit")

	old := e.watch(WatchOptions{ResourceVersion: rv(first), RVSet: true})
	defer old.Stop()
	_, err := ending(t, old, 1)
	require.ErrorIs(t, err, ErrStatusSent, "a watch from before the ring gets 410 in-stream")
}

func TestAnEventLargerThanTheBudgetStillGoesThrough(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := newEnv(t, Config{HistoryBytes: 1024})
	w := e.watch(WatchOptions{ResourceVersion: e.c.Revision(), RVSet: true})
	defer w.Stop()
	for i := range 5 {
		e.create("ns", string(rune('a'+i)), nil, strings.Repeat("y", 8<<10))
	}
	evs := events(t, w, 5)
	for i, ev := range evs {
		assert.Equal(t, string(rune('a'+i)), ev.Object.Metadata.Name)
	}
	assert.Equal(t, 1, e.c.Stats().HistoryLen)
}

func TestNegativeHistoryBytesIsRejected(t *testing.T) {
	s := store.New(store.Options{})
	defer s.Close()
	_, err := New(context.Background(), Config{Store: s, Prefix: testPrefix, Kind: "ConfigMap", APIVersion: "v1", HistoryBytes: -1})
	require.Error(t, err)
}

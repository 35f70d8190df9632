package storagewatch

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

const prefix = "/registry/configmaps/"

func setup(t *testing.T) (context.Context, *store.Store, Config) {
	t.Cleanup(leakcheck.Check(t))
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	// Only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx, st, Config{Store: st, Prefix: prefix, Kind: "ConfigMap", APIVersion: "v1", ID: 1}
}

func create(ctx context.Context, t *testing.T, st *store.Store, name string) *api.Object {
	o, err := st.Create(ctx, prefix+"default/"+name, &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "default", Name: name}})
	require.NoError(t, err)
	return o
}

// next decodes the frames of one Next.
func next(ctx context.Context, t *testing.T, w *Watcher) ([]api.Event, error) {
	frames, err := w.Next(ctx, nil)
	evs := make([]api.Event, len(frames))
	for i, f := range frames {
		require.NoError(t, evs[i].UnmarshalJSON(f[:len(f)-1]))
	}
	return evs, err
}

// sendInitialEvents=false from no resourceVersion: the changes from now
// on, none of what is there (getStartWatchResourceVersion).
func TestFromNowWithoutInitialEvents(t *testing.T) {
	ctx, st, cfg := setup(t)
	create(ctx, t, st, "old")
	no := false
	w, err := Start(ctx, cfg, cacher.WatchOptions{SendInitialEvents: &no})
	require.NoError(t, err)
	defer w.Stop()
	assert.False(t, w.Pending())
	create(ctx, t, st, "new")
	evs, err := next(ctx, t, w)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, api.Added, evs[0].Type)
	assert.Equal(t, "new", evs[0].Object.Metadata.Name)
}

// sendInitialEvents=true from a resourceVersion the store has not
// reached: an in-stream 504, and the end (watchChan.startWatching).
func TestInitialEventsFromTheFutureIs504(t *testing.T) {
	ctx, st, cfg := setup(t)
	o := create(ctx, t, st, "a")
	yes := true
	w, err := Start(ctx, cfg, cacher.WatchOptions{ResourceVersion: revisionOf(t, o) + 10, RVSet: true,
		SendInitialEvents: &yes, AllowBookmarks: true})
	require.NoError(t, err)
	defer w.Stop()
	evs, err := next(ctx, t, w)
	assert.ErrorIs(t, err, ErrStatusSent)
	require.Len(t, evs, 1)
	require.Equal(t, api.Error, evs[0].Type)
	assert.Equal(t, int32(504), evs[0].Status.Code)
	assert.Contains(t, evs[0].Status.Message, "Too large resource version")
}

// A resourceVersion ahead of the store without initial events is waited
// for, as etcd waits.
func TestWatchFromTheFutureWaits(t *testing.T) {
	ctx, st, cfg := setup(t)
	o := create(ctx, t, st, "a")
	w, err := Start(ctx, cfg, cacher.WatchOptions{ResourceVersion: revisionOf(t, o) + 1, RVSet: true})
	require.NoError(t, err)
	defer w.Stop()
	create(ctx, t, st, "b") // revision +1: not after the watch's start
	create(ctx, t, st, "c")
	evs, err := next(ctx, t, w)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "c", evs[0].Object.Metadata.Name)
}

// Stop ends a Next that waits, cleanly.
func TestStopEndsNext(t *testing.T) {
	ctx, _, cfg := setup(t)
	stopping, stop := context.WithCancel(ctx)
	cfg.Stopping = stopping
	w, err := Start(ctx, cfg, cacher.WatchOptions{})
	require.NoError(t, err)
	defer w.Stop()
	stop()
	_, err = next(ctx, t, w)
	assert.ErrorIs(t, err, ErrEnded)
}

func revisionOf(t *testing.T, o *api.Object) int64 {
	rv, err := api.ParseResourceVersion(o.Metadata.ResourceVersion)
	require.NoError(t, err)
	return int64(rv)
}

package main

import (
	"bytes"
	"context"
	"io"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// The storm starts only once the watch cache holds every object it
// counted. Here the cache of ConfigMaps is as far behind the writes as it
// can be: the store's watch of them delivers nothing until the watch cache
// asks it for progress, which a read that must see the writes does and a
// LIST at resourceVersion 0 never does. Had the storm started at once,
// every informer would have listed an empty cache, as some did on a busy
// machine when the cache was a few events behind.
func TestStormWaitsForTheWatchCache(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	lagging := &heldStore{Store: st, prefix: "/registry/configmaps/", release: make(chan struct{})}
	srv := startServerInProcess(t, apiserver.Config{Store: lagging})

	var out bytes.Buffer
	args := []string{"-url", srv.URL(), "-scenario", "storm", "-mode", "list", "-informers", "6",
		"-objects", "40", "-size", "100", "-timeout", "2m"}
	require.NoError(t, run(context.Background(), args, &out, io.Discard), out.String())
	t.Log(out.String())
	assert.True(t, lagging.released.Load(), "the ConfigMaps' store watch was never asked for progress")
	assert.Contains(t, out.String(), "namespace sync-storm holds 40 ConfigMaps")
	assert.Contains(t, out.String(), "synced: 6 of 6 with every object (0 never synced, 0 with a wrong count)")
}

// heldStore is an in-memory store whose watches of prefix deliver nothing
// until one of them is asked for progress; from then on every watch of
// prefix delivers what it held, in order, and what follows.
type heldStore struct {
	*store.Store
	prefix   string
	release  chan struct{}
	once     sync.Once
	released atomic.Bool
}

func (s *heldStore) Watch(ctx context.Context, prefix string, from int64) (store.Watcher, error) {
	w, err := s.Store.Watch(ctx, prefix, from)
	if err != nil || prefix != s.prefix {
		return w, err
	}
	h := &heldWatcher{Watcher: w, s: s, out: make(chan store.Event), stop: make(chan struct{}), done: make(chan struct{})}
	go h.forward()
	return h, nil
}

// heldWatcher passes a store watch's events on once its store released
// them.
type heldWatcher struct {
	store.Watcher
	s        *heldStore
	out      chan store.Event
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func (h *heldWatcher) forward() {
	defer close(h.done)
	defer close(h.out)
	select {
	case <-h.s.release:
	case <-h.stop:
		return
	}
	for ev := range h.Watcher.Events() {
		select {
		case h.out <- ev:
		case <-h.stop:
			return
		}
	}
}

func (h *heldWatcher) Events() <-chan store.Event { return h.out }

func (h *heldWatcher) RequestProgress(ctx context.Context) error {
	h.s.once.Do(func() {
		h.s.released.Store(true)
		close(h.s.release)
	})
	return h.Watcher.RequestProgress(ctx)
}

func (h *heldWatcher) Stop() {
	h.stopOnce.Do(func() { close(h.stop) })
	h.Watcher.Stop()
	<-h.done
}

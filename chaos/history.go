package chaos

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"listwatch/api"
	"listwatch/store"
)

// change is one committed change of one key, as the store recorded it.
type change struct {
	typ api.EventType // Added, Modified or Deleted
	rev int64         // the revision of the change (for Deleted, of the deletion)
}

// historyRecorder is the ground truth: it watches the server's store
// directly, below the apiserver and its watch cache, from the first
// revision, and keeps every change of every key under the prefix. The
// store's watch is exactly etcd's: every change, in revision order, none
// skipped; if the recorder ever fell so far behind that the store ended its
// watch, it resumes from the last revision it has (the store keeps the
// history), and only if that history was compacted meanwhile is the run
// void (an error, not a divergence).
type historyRecorder struct {
	st     store.Interface
	prefix string

	mu      sync.Mutex
	byKey   map[string][]change
	last    int64 // the newest revision recorded
	events  int64
	resumes int
	err     error
	moved   chan struct{} // closed and replaced whenever last moves

	done chan struct{}
}

// startHistory starts recording the changes under prefix from revision 0.
func startHistory(ctx context.Context, st store.Interface, prefix string) (*historyRecorder, error) {
	h := &historyRecorder{st: st, prefix: prefix, byKey: map[string][]change{}, moved: make(chan struct{}), done: make(chan struct{})}
	w, err := st.Watch(ctx, prefix, 0)
	if err != nil {
		return nil, fmt.Errorf("chaos: watching the store: %w", err)
	}
	go h.run(ctx, w)
	return h, nil
}

func (h *historyRecorder) run(ctx context.Context, w store.Watcher) {
	defer close(h.done)
	for {
		for ev := range w.Events() {
			if ev.IsProgress() {
				continue // a store's "nothing up to here", not a change
			}
			h.record(ev)
		}
		err := w.Err()
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, store.ErrWatcherTooSlow) {
			h.fail(fmt.Errorf("chaos: the store watch of the history recorder ended: %w", err))
			return
		}
		h.mu.Lock()
		from := h.last
		h.resumes++
		h.mu.Unlock()
		w, err = h.st.Watch(ctx, h.prefix, from)
		if err != nil {
			if ctx.Err() == nil {
				h.fail(fmt.Errorf("chaos: the history recorder fell behind and could not resume from revision %d: %w", from, err))
			}
			return
		}
	}
}

func (h *historyRecorder) record(ev store.Event) {
	key := ""
	if ev.Object != nil {
		key = ev.Object.Key()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ev.Revision <= h.last {
		return // replayed after a resume
	}
	h.byKey[key] = append(h.byKey[key], change{typ: ev.Type, rev: ev.Revision})
	h.last = ev.Revision
	h.events++
	close(h.moved)
	h.moved = make(chan struct{})
}

func (h *historyRecorder) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err == nil {
		h.err = err
	}
}

// waitFor waits until the recorder has seen revision rev.
func (h *historyRecorder) waitFor(ctx context.Context, rev int64) error {
	for {
		h.mu.Lock()
		last, moved, err := h.last, h.moved, h.err
		h.mu.Unlock()
		switch {
		case err != nil:
			return err
		case last >= rev:
			return nil
		}
		select {
		case <-moved:
		case <-h.done:
			h.mu.Lock()
			err := h.err
			h.mu.Unlock()
			if err == nil {
				err = fmt.Errorf("chaos: the history recorder stopped at revision %d before %d", last, rev)
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("chaos: waiting for the history recorder to reach revision %d (at %d): %w", rev, last, ctx.Err())
		}
	}
}

// snapshot returns a copy of the history so far.
func (h *historyRecorder) snapshot() (map[string][]change, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]change, len(h.byKey))
	for k, v := range h.byKey {
		out[k] = append([]change(nil), v...)
	}
	return out, h.events, h.err
}

// revisionOf parses an object's resourceVersion; -1 if it is not a number.
func revisionOf(o *api.Object) int64 {
	if o == nil {
		return -1
	}
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

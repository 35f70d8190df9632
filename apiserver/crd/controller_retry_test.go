package crd

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
	"listwatch/apiserver/registry"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// safetyTimeout bounds every wait of these tests, so that a bug fails a
// test instead of hanging it until go test's own timeout. A passing test
// never comes near it.
const safetyTimeout = 2 * time.Minute

// safetyContext is the test's context, ended after safetyTimeout.
func safetyContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), safetyTimeout)
	t.Cleanup(cancel)
	return ctx
}

// receive returns the next value of ch, failing the test if ctx ends
// first.
func receive[T any](t *testing.T, ctx context.Context, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		t.Fatalf("nothing received: %v", ctx.Err())
		panic("unreachable")
	}
}

// run runs c from revision from until the returned function is called.
func run(ctx context.Context, c *Controller, from int64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx, from)
	}()
	return func() { cancel(); <-done }
}

// expectPause waits until the Controller pauses on clk, checks that it
// pauses for want, and ends the pause.
func expectPause(t *testing.T, ctx context.Context, clk *clock.Fake, want time.Duration) {
	t.Helper()
	ws, err := clk.WaitFor(ctx, func(ws []clock.Waiter) bool { return len(ws) > 0 })
	require.NoError(t, err, "the Controller never paused")
	require.Len(t, ws, 1)
	assert.Equal(t, want, ws[0].Duration)
	clk.Step(ws[0].Duration)
}

// waitEstablished reads w until the definition of uid is Established.
func waitEstablished(t *testing.T, w store.Watcher, uid string) {
	t.Helper()
	for ev := range w.Events() {
		if ev.Type != api.Deleted && ev.Type != api.Bookmark && ev.Object.Metadata.UID == uid &&
			conditionTrue(ev.Object, condEstablished) {
			return
		}
	}
	t.Fatalf("the watch ended (%v) before the definition was established", w.Err())
}

var errInjected = errors.New("injected: store unavailable")

// flakyStore fails as many Lists and Watches as it is told to, and hands
// each watch it opens to the test.
type flakyStore struct {
	store.Interface
	opened chan store.Watcher

	mu                     sync.Mutex
	failLists, failWatches int // still to fail
	lists                  int // asked for
}

func newFlakyStore(st store.Interface) *flakyStore {
	return &flakyStore{Interface: st, opened: make(chan store.Watcher, 16)}
}

// fail makes the next lists Lists and watches Watches fail.
func (s *flakyStore) fail(lists, watches int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failLists += lists
	s.failWatches += watches
}

func (s *flakyStore) listed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *flakyStore) List(ctx context.Context, prefix string, opts store.ListOptions) (*store.ListResult, error) {
	s.mu.Lock()
	s.lists++
	fail := s.failLists > 0
	if fail {
		s.failLists--
	}
	s.mu.Unlock()
	if fail {
		return nil, errInjected
	}
	return s.Interface.List(ctx, prefix, opts)
}

func (s *flakyStore) Watch(ctx context.Context, prefix string, from int64) (store.Watcher, error) {
	s.mu.Lock()
	fail := s.failWatches > 0
	if fail {
		s.failWatches--
	}
	s.mu.Unlock()
	if fail {
		return nil, errInjected
	}
	w, err := s.Interface.Watch(ctx, prefix, from)
	if err == nil {
		s.opened <- w
	}
	return w, err
}

// Failures of any kind in a row (a watch that could not be opened, then
// lists that failed) make the Controller pause longer each time, up to
// maxRetryPause; once a list succeeds and the watch from it opens, the
// next failure pauses retryPause again.
func TestControllerBacksOffWhileTheStoreFails(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	fs := newFlakyStore(st)
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewController(fs, &countingHost{}, nil)
	c.clock = clk
	ctx := safetyContext(t)
	from, err := c.Sync(ctx)
	require.NoError(t, err)

	fs.fail(8, 1)
	stop := run(ctx, c, from)
	defer stop()
	for _, want := range []time.Duration{
		100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond,
		1600 * time.Millisecond, 3200 * time.Millisecond, 6400 * time.Millisecond, 10 * time.Second, 10 * time.Second,
	} {
		expectPause(t, ctx, clk, want)
	}
	w := receive(t, ctx, fs.opened)
	assert.Equal(t, 1+8+1, fs.listed(), "the first Sync, the lists that failed, the one that succeeded")

	fs.fail(1, 0)
	w.Stop() // Run lists again, which fails
	expectPause(t, ctx, clk, retryPause)
	receive(t, ctx, fs.opened)
	stop()
	assert.Equal(t, 1+8+1+2, fs.listed())
}

// servingHost serves a resource at most once, as the server's registry
// does (Install of one served already fails), and fails as many
// Uninstalls as it is told to, leaving the resource served. Each
// Uninstall's result goes to uninstalled.
type servingHost struct {
	uninstalled chan error

	mu             sync.Mutex
	served         map[api.GroupResource]bool
	installs       int
	failUninstalls int // still to fail
}

func (h *servingHost) Install(_ context.Context, versions []*registry.Resource) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	gr := versions[0].GroupResource()
	if h.served[gr] {
		return fmt.Errorf("injected: %s is served already", gr)
	}
	h.served[gr] = true
	h.installs++
	return nil
}

func (h *servingHost) Update(context.Context, []*registry.Resource) error { return nil }

func (h *servingHost) Uninstall(_ context.Context, gr api.GroupResource) error {
	h.mu.Lock()
	var err error
	if h.failUninstalls > 0 {
		h.failUninstalls--
		err = errors.New("injected: uninstall failed")
	} else {
		delete(h.served, gr)
	}
	h.mu.Unlock()
	h.uninstalled <- err
	return err
}

// A definition whose resource could not be uninstalled stays served for
// the Controller, which uninstalls it again after a pause; a definition of
// the same name created afterwards is installed and established.
func TestControllerRetriesAFailedUninstall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	st := store.New(store.Options{})
	t.Cleanup(st.Close)
	host := &servingHost{uninstalled: make(chan error, 8), served: map[api.GroupResource]bool{}, failUninstalls: 1}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := NewController(st, host, nil)
	c.clock = clk
	ctx := safetyContext(t)
	from, err := c.Sync(ctx)
	require.NoError(t, err)
	w, err := st.Watch(ctx, Prefix, from)
	require.NoError(t, err)
	defer w.Stop()
	stop := run(ctx, c, from)
	defer stop()

	const spec = `{"group":"example.com","scope":"Cluster","names":{"plural":"widgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}`
	first := putDefinition(t, st, spec)
	waitEstablished(t, w, first.Metadata.UID)
	_, err = st.Delete(ctx, Prefix+"widgets.example.com", store.Preconditions{})
	require.NoError(t, err)
	require.Error(t, receive(t, ctx, host.uninstalled), "the first Uninstall fails")
	expectPause(t, ctx, clk, retryPause)
	require.NoError(t, receive(t, ctx, host.uninstalled), "the Uninstall tried again")

	second := putDefinition(t, st, spec)
	require.NotEqual(t, first.Metadata.UID, second.Metadata.UID)
	waitEstablished(t, w, second.Metadata.UID)
	stop()
	assert.Equal(t, 2, host.installs)
	assert.Equal(t, map[api.GroupResource]bool{{Group: "example.com", Resource: "widgets"}: true}, host.served)
}

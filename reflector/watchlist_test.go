package reflector

import (
	"context"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
)

func initialEventsEnd(rv string) api.Event {
	ev := bookmark(rv)
	ev.Object.Metadata.Annotations = map[string]string{api.InitialEventsEndAnnotation: "true"}
	return ev
}

// With zero Options the first request is a watch-list, as client-go's
// since 1.35.
func TestWatchListStreamsTheInitialStateThenKeepsWatching(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(t)
	req := h.lw.next(t)
	require.Equal(t, "watch", req.verb)
	require.NotNil(t, req.opts.SendInitialEvents)
	assert.True(t, *req.opts.SendInitialEvents)
	assert.Equal(t, api.ResourceVersionMatchNotOlderThan, req.opts.ResourceVersionMatch)
	assert.Equal(t, "", req.opts.ResourceVersion, "a consistent snapshot of the latest state")
	assert.True(t, req.opts.AllowWatchBookmarks)

	w := h.lw.nextWatch(t)
	w.send(t, added(obj("b", "5")))
	w.send(t, added(obj("a", "3"))) // initial events come in no rv order
	assert.Equal(t, "", h.r.LastSyncResourceVersion(), "synthetic ADDED events are not a resume point")
	w.send(t, bookmark("6")) // an ordinary bookmark does not end the initial events
	w.send(t, initialEventsEnd("7"))
	h.store.expect(t, "replace [ns/b ns/a] 7")
	h.eventuallyRV(t, "7")

	w.send(t, modified(obj("a", "8"))) // the same stream carries on as the watch
	h.store.expect(t, "update ns/a 8")
	h.eventuallyRV(t, "8")
	w.close()
	assert.Equal(t, "watch rv=\"8\" limit=0", h.lw.next(t).String(), "then an ordinary re-watch")
	again := h.lw.nextWatch(t)
	assert.Nil(t, again.opts.SendInitialEvents)

	// After a 410 the next round streams again, from the last resourceVersion.
	again.send(t, errorEvent(api.NewResourceExpired("too old")))
	h.nextError(t)
	h.backoff(t)
	req = h.lw.next(t)
	require.Equal(t, "watch", req.verb)
	assert.NotNil(t, req.opts.SendInitialEvents)
	assert.Equal(t, "8", req.opts.ResourceVersion)
	lists, _ := h.lw.counts()
	assert.Zero(t, lists, "never listed")
}

// The conditions under which client-go gives up streaming for this round
// and lists instead.
func TestWatchListFallsBackToListAndWatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(t *testing.T, h *harness)
	}{
		{"server refuses the watch-list", func(t *testing.T, h *harness) {
			h.lw.onWatchError(api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", nil))
		}},
		{"403 at the start", func(t *testing.T, h *harness) {
			h.lw.onWatchError(api.NewForbidden(configmaps, "", "no"))
		}},
		{"ERROR in the stream", func(t *testing.T, h *harness) {
			go func() {
				w := h.lw.nextWatch(t)
				w.send(t, errorEvent(api.NewInternalError(assert.AnError)))
			}()
		}},
		{"a very short watch: closed at once without an event", func(t *testing.T, h *harness) {
			go func() { h.lw.nextWatch(t).close() }()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.lw.onList(listOf("10", "", obj("x", "9")))
			tc.script(t, h)
			h.start(t)
			require.Equal(t, "watch", h.lw.next(t).verb)
			assert.Equal(t, "list rv=\"0\" limit=500", h.lw.next(t).String())
			h.store.expect(t, "replace [ns/x] 10")
			assert.Equal(t, "watch rv=\"10\" limit=0", h.lw.next(t).String())
		})
	}
}

// The conditions under which client-go streams again instead of listing.
func TestWatchListRetriesInsteadOfListing(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	for _, tc := range []struct {
		name    string
		script  func(t *testing.T, h *harness)
		backoff bool   // the retry waits for a backoff
		rv      string // the retry's resourceVersion
	}{
		{"connection refused", func(t *testing.T, h *harness) { h.lw.onWatchError(refused) }, true, ""},
		{"429 at the start", func(t *testing.T, h *harness) {
			h.lw.onWatchError(api.NewTooManyRequests("slow down", 1))
		}, true, ""},
		{"429 in the stream", func(t *testing.T, h *harness) {
			go func() { h.lw.nextWatch(t).send(t, errorEvent(api.NewTooManyRequests("slow down", 1))) }()
		}, true, ""},
		{"410 at the start", func(t *testing.T, h *harness) {
			h.lw.onWatchError(api.NewResourceExpired("too old"))
		}, false, ""},
		{"the stream ends after some events, before the bookmark", func(t *testing.T, h *harness) {
			go func() {
				w := h.lw.nextWatch(t)
				w.send(t, added(obj("a", "3")))
				w.close()
			}()
		}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			tc.script(t, h)
			h.start(t)
			require.Equal(t, "watch", h.lw.next(t).verb)
			if tc.backoff {
				h.backoff(t)
			}
			again := h.lw.next(t)
			require.Equal(t, "watch", again.verb, "streamed again, did not list")
			assert.NotNil(t, again.opts.SendInitialEvents)
			assert.Equal(t, tc.rv, again.opts.ResourceVersion)
			lists, _ := h.lw.counts()
			assert.Zero(t, lists)
		})
	}
}

// After a 410 on a watch from a known resourceVersion, the next stream asks
// for the latest state, not that resourceVersion again.
func TestWatchListAfterExpiredAsksForTheLatest(t *testing.T) {
	h := newHarness(t, Options{})
	h.start(t)
	w := h.lw.nextWatch(t)
	h.lw.next(t)
	w.send(t, initialEventsEnd("7"))
	h.store.expect(t, "replace [] 7")
	h.lw.onWatchError(api.NewResourceExpired("too old"))
	w.send(t, errorEvent(api.NewResourceExpired("too old")))
	h.nextError(t)
	h.backoff(t)
	first := h.lw.next(t)
	assert.Equal(t, "7", first.opts.ResourceVersion)
	second := h.lw.next(t)
	assert.NotNil(t, second.opts.SendInitialEvents)
	assert.Equal(t, "", second.opts.ResourceVersion, "the 410 made the last resourceVersion unavailable")
}

type noWatchListLW struct{ *fakeLW }

func (noWatchListLW) IsWatchListSemanticsUnSupported() bool { return true }

func TestWatchListSkippedForAListerWatcherWithoutIt(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	lw := noWatchListLW{newFakeLW()}
	lw.onList(listOf("10", ""))
	store := newRecordingStore()
	r := New(lw, store, Options{Clock: clock.NewFake(time.Now())})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	assert.Equal(t, "list", lw.next(t).verb)
	store.expect(t, "replace [] 10")
}

func TestListThenWatchIsTheOlderBehaviour(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(listOf("10", ""))
	h.start(t)
	assert.Equal(t, "list rv=\"0\" limit=500", h.lw.next(t).String())
}

func TestUnknownInitialListModeIsAnError(t *testing.T) {
	r := New(newFakeLW(), newRecordingStore(), Options{InitialList: "Telepathy"})
	assert.ErrorContains(t, r.ListAndWatch(context.Background()), `unknown InitialList mode "Telepathy"`)
}

// cancelOnReplace cancels the Reflector's context as the watch-list's state
// is handed over, so ListAndWatch sees ctx done while holding an open watch.
type cancelOnReplace struct {
	*recordingStore
	cancel context.CancelFunc
}

func (s cancelOnReplace) Replace(list []*api.Object, rv string) error {
	s.cancel()
	return s.recordingStore.Replace(list, rv)
}

// A watch-list that succeeds just as the context ends leaves no watch open.
func TestWatchListStopsItsWatchWhenCancelledAfterTheStream(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	lw := newFakeLW()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := New(lw, cancelOnReplace{newRecordingStore(), cancel}, Options{Clock: clock.NewFake(time.Now())})
	done := make(chan error, 1)
	go func() { done <- r.ListAndWatch(ctx) }()
	w := lw.nextWatch(t)
	w.send(t, initialEventsEnd("7"))
	require.NoError(t, <-done)
	w.waitStopped(t)
}

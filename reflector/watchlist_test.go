package reflector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func initialEventsEnd(rv string) api.Event {
	ev := bookmark(rv)
	ev.Object.Metadata.Annotations = map[string]string{api.InitialEventsEndAnnotation: "true"}
	return ev
}

func TestWatchListStreamsTheInitialStateThenKeepsWatching(t *testing.T) {
	h := newHarness(t, Options{UseWatchList: true})
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

func TestWatchListFallsBackToListAndWatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(t *testing.T, h *harness)
	}{
		{"server refuses the watch-list", func(t *testing.T, h *harness) {
			h.lw.onWatchError(api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}, "", nil))
		}},
		{"stream ends before the bookmark", func(t *testing.T, h *harness) {
			go func() {
				w := h.lw.nextWatch(t)
				w.send(t, added(obj("a", "3")))
				w.close()
			}()
		}},
		{"ERROR in the stream", func(t *testing.T, h *harness) {
			go func() {
				w := h.lw.nextWatch(t)
				w.send(t, errorEvent(api.NewInternalError(assert.AnError)))
			}()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{UseWatchList: true})
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

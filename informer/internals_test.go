package informer

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/fifo"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
	"listwatch/narrate"
)

func resyncPeriods(inf *SharedIndexInformer) map[string]time.Duration {
	inf.processor.mu.RLock()
	defer inf.processor.mu.RUnlock()
	out := map[string]time.Duration{}
	for _, l := range inf.processor.listeners {
		l.resyncMu.Lock()
		out[l.name] = l.resyncPeriod
		l.resyncMu.Unlock()
	}
	return out
}

// Resync periods follow client-go: a handler registered before Run with a
// shorter period makes the informer check more often; one registered
// after Run cannot go below the check period; an informer without resync
// resyncs no handler.
func TestHandlerResyncPeriods(t *testing.T) {
	defer leakcheck.Check(t)()
	inf := newInformer(t, newFakeServer(), Options{ResyncPeriod: 5 * time.Minute, Clock: clock.NewFake(time.Now())})
	d := func(x time.Duration) HandlerOptions { return HandlerOptions{ResyncPeriod: &x} }
	mustAdd := func(name string, o HandlerOptions) {
		o.Name = name
		_, err := inf.AddEventHandlerWithOptions(newRecorder(), o)
		require.NoError(t, err)
	}
	mustAdd("default", HandlerOptions{})
	mustAdd("tiny", d(time.Millisecond)) // raised to the 1 s minimum, becomes the check period
	mustAdd("never", d(0))
	assert.Equal(t, map[string]time.Duration{"default": 5 * time.Minute, "tiny": time.Second, "never": 0}, resyncPeriods(inf))
	assert.Equal(t, time.Second, inf.resyncCheckPeriod)

	inf2 := newInformer(t, newFakeServer(), Options{})
	_, err := inf2.AddEventHandlerWithOptions(newRecorder(), d(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, map[string]time.Duration{"handler-1": 0}, resyncPeriods(inf2), "an informer without resync resyncs nobody")

	// After Run, a shorter period is raised to the check period.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	require.Eventually(t, inf.HasStarted, waitTimeout, time.Millisecond)
	o := d(500 * time.Millisecond)
	o.Name = "late"
	_, err = inf.AddEventHandlerWithOptions(newRecorder(), o)
	require.NoError(t, err)
	assert.Equal(t, time.Second, resyncPeriods(inf)["late"])
}

func TestHandleDeltasRejectsMalformedDeltas(t *testing.T) {
	inf := newInformer(t, newFakeServer(), Options{})
	err := inf.handleDeltas(fifo.Deltas{
		{Type: fifo.Added, Object: fifo.DeletedFinalStateUnknown{Key: "ns/x"}},
		{Type: fifo.Deleted, Object: "ns/y"},
		{Type: "Teleported", Object: cm("ns", "z", "1")},
		{Type: fifo.Added, Object: cm("ns", "ok", "1")},
	}, false)
	assert.ErrorContains(t, err, "not an object")
	assert.ErrorContains(t, err, "Deleted delta carries string")
	assert.ErrorContains(t, err, "Teleported")
	assert.Equal(t, []string{"ns/ok"}, inf.GetStore().ListKeys(), "the good delta is applied")
}

// One Tracer in Options narrates every layer of the pipeline.
func TestOneTracerNarratesEveryLayer(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	var out syncbuf.Buffer
	srv := newFakeServer()
	srv.set("ns", "a", "")
	inf := newInformer(t, srv, Options{Tracer: narrate.New(&out, narrate.WithoutTimes())})
	rec := newRecorder()
	_, err := inf.AddEventHandlerWithOptions(rec, HandlerOptions{Name: "rec"})
	require.NoError(t, err)
	runInformer(t, inf)
	rec.expect(t, "add ns/a 101 initial=true")
	srv.waitWatch(t)
	srv.set("ns", "a", "x")
	srv.remove("ns", "a", true)
	rec.expect(t, "update ns/a 101→102", "delete ns/a 103 (*api.Object)")

	text := out.String()
	for _, want := range []string{
		"reflector     watch-list opened from rv \"\" (sendInitialEvents",
		"reflector     streamed 1 item at rv 101 (initial-events-end bookmark)",
		"reflector     event MODIFIED ns/a rv=102",
		"queue         queued Updated ns/a",
		"queue         popped ReplacedAll(1 object at rv 101)",
		"indexer       replaced with 1 objects at rv 101",
		"indexer       re-indexed ns/a rv=102",
		"indexer       deleted ns/a",
		"processor     dispatched UPDATE ns/a rv=101→102 to handler rec (backlog 1)",
		"handler       rec ADD ns/a rv=101 (initial list)",
		"handler       rec DELETE ns/a",
	} {
		assert.True(t, strings.Contains(text, want), "narration lacks %q:\n%s", want, text)
	}
}

func TestObjectOf(t *testing.T) {
	o := cm("ns", "a", "1")
	assert.Same(t, o, ObjectOf(o))
	assert.Same(t, o, ObjectOf(fifo.DeletedFinalStateUnknown{Key: "ns/a", Obj: o}))
	assert.Same(t, o, ObjectOf(&fifo.DeletedFinalStateUnknown{Key: "ns/a", Obj: o}))
	assert.Nil(t, ObjectOf((*fifo.DeletedFinalStateUnknown)(nil)))
	assert.Nil(t, ObjectOf("nope"))
	var deleted []any
	h := ResourceEventHandlerFuncs{DeleteFunc: func(obj any) { deleted = append(deleted, obj) }}
	h.OnDelete(o)
	ResourceEventHandlerFuncs{}.OnDelete(o) // nil funcs are skipped
	ResourceEventHandlerFuncs{}.OnAdd(o, false)
	ResourceEventHandlerFuncs{}.OnUpdate(o, o)
	assert.Equal(t, []any{o}, deleted)
}

package informer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/reflector"
)

var queueKinds = QueueKinds()

// runInformer runs inf until the test ends, then checks Run returned and
// left no goroutine behind.
func runInformer(t *testing.T, inf *SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("Run did not return after its context was cancelled")
		}
		assert.True(t, inf.IsStopped())
	})
}

func waitSynced(t *testing.T, s interface{ Synced() <-chan struct{} }) {
	t.Helper()
	select {
	case <-s.Synced():
	case <-time.After(waitTimeout):
		t.Fatal("never synced")
	}
}

func newInformer(t *testing.T, srv *fakeServer, opts Options) *SharedIndexInformer {
	t.Helper()
	inf, err := NewSharedIndexInformer(srv, opts)
	require.NoError(t, err)
	return inf
}

func TestHandlersSeeAddUpdateDeleteWithBothQueues(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			srv := newFakeServer()
			srv.set("default", "a", "1") // rv 101
			srv.set("kube-system", "b", "1")
			inf := newInformer(t, srv, Options{Queue: kind})
			rec := newRecorder()
			reg, err := inf.AddEventHandler(rec)
			require.NoError(t, err)
			assert.False(t, inf.HasSynced())
			runInformer(t, inf)

			rec.expectSet(t, "add default/a 101 initial=true", "add kube-system/b 102 initial=true")
			waitSynced(t, inf)
			waitSynced(t, reg)
			assert.True(t, reg.HasSynced())
			srv.waitWatch(t)

			srv.set("default", "c", "1")
			srv.set("default", "a", "2")
			srv.remove("kube-system", "b", true)
			rec.expect(t,
				"add default/c 103 initial=false",
				"update default/a 101→104",
				"delete kube-system/b 105 (*api.Object)")

			assert.Equal(t, []string{"default/a", "default/c"}, inf.GetStore().ListKeys())
			got, ok := inf.GetIndexer().GetByKey("default/a")
			require.True(t, ok)
			assert.Equal(t, "104", got.Metadata.ResourceVersion)
			// The Reflector records the resume point just after queueing.
			require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() == "105" }, waitTimeout, time.Millisecond)
			ns, err := inf.GetIndexer().ByIndex(NamespaceIndex, "default")
			require.NoError(t, err)
			assert.Len(t, ns, 2)
		})
	}
}

// A watch that misses a deletion (the object went while we were
// disconnected) learns about it at the re-list after a 410: the handler
// gets a tombstone.
func TestRelistDeliversMissedDeletesAsTombstones(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			srv := newFakeServer()
			srv.set("ns", "keep", "") // 101
			srv.set("ns", "gone", "") // 102
			fc := clock.NewFake(time.Now())
			inf := newInformer(t, srv, Options{Queue: kind, Clock: fc})
			rec := newRecorder()
			_, err := inf.AddEventHandler(rec)
			require.NoError(t, err)
			runInformer(t, inf)
			rec.expectSet(t, "add ns/gone 102 initial=true", "add ns/keep 101 initial=true")
			srv.waitWatch(t)

			srv.remove("ns", "gone", false) // the watch never hears of it
			srv.expire()
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			defer cancel()
			w, err := fc.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Kind == clock.KindTimer })
			require.NoError(t, err, "the reflector backs off before re-listing")
			fc.Step(w.Duration)

			rec.expect(t, "delete ns/gone 102 (fifo.DeletedFinalStateUnknown)")
			assert.Equal(t, []string{"ns/keep"}, inf.GetStore().ListKeys())
			srv.waitWatch(t)
			// keep was re-delivered by the relist unchanged: that is a
			// resync-like update, and no handler here asked for resyncs.
			srv.set("ns", "new", "")
			rec.expect(t, "add ns/new 104 initial=false")
		})
	}
}

func TestResyncGoesOnlyToHandlersDueForOne(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	srv.set("ns", "a", "")
	fc := clock.NewFake(time.Now())
	inf := newInformer(t, srv, Options{Clock: fc, ResyncPeriod: time.Minute})
	resyncing, quiet := newRecorder(), newRecorder()
	_, err := inf.AddEventHandlerWithOptions(resyncing, HandlerOptions{Name: "resyncing"})
	require.NoError(t, err)
	_, err = inf.AddEventHandlerWithResyncPeriod(quiet, 0)
	require.NoError(t, err)
	runInformer(t, inf)
	resyncing.expect(t, "add ns/a 101 initial=true")
	quiet.expect(t, "add ns/a 101 initial=true")
	srv.waitWatch(t)

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, err = fc.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Duration == time.Minute })
	require.NoError(t, err)
	fc.Step(time.Minute)
	resyncing.expect(t, "update ns/a 101→101")

	srv.set("ns", "a", "changed")
	resyncing.expect(t, "update ns/a 101→102")
	quiet.expect(t, "update ns/a 101→102") // its first call since the initial add: no resync
}

func TestLateHandlerGetsSyntheticAdds(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	srv.set("ns", "a", "")
	srv.set("ns", "b", "")
	inf := newInformer(t, srv, Options{})
	runInformer(t, inf)
	waitSynced(t, inf)
	srv.waitWatch(t)
	srv.set("ns", "c", "") // 103
	require.Eventually(t, func() bool { return inf.GetStore().Len() == 3 }, waitTimeout, time.Millisecond)

	late := newRecorder()
	reg, err := inf.AddEventHandlerWithOptions(late, HandlerOptions{Name: "late"})
	require.NoError(t, err)
	late.expect(t, "add ns/a 101 initial=true", "add ns/b 102 initial=true", "add ns/c 103 initial=true")
	waitSynced(t, reg)
	srv.set("ns", "d", "")
	late.expect(t, "add ns/d 104 initial=false")
}

func TestRemoveEventHandler(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	inf := newInformer(t, srv, Options{})
	kept, removed := newRecorder(), newRecorder()
	_, err := inf.AddEventHandler(kept)
	require.NoError(t, err)
	reg, err := inf.AddEventHandler(removed)
	require.NoError(t, err)
	runInformer(t, inf)
	srv.waitWatch(t)
	srv.set("ns", "a", "")
	kept.expect(t, "add ns/a 101 initial=false")
	removed.expect(t, "add ns/a 101 initial=false")

	require.NoError(t, inf.RemoveEventHandler(reg))
	require.NoError(t, inf.RemoveEventHandler(reg), "removing twice is fine")
	assert.Error(t, inf.RemoveEventHandler(nil))
	assert.NotContains(t, inf.Backlog(), "handler-2")
	srv.set("ns", "b", "")
	kept.expect(t, "add ns/b 102 initial=false")
	assert.Empty(t, removed.calls, "a removed handler hears nothing more")
}

func TestTransformIsAppliedBeforeCaching(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	srv.set("ns", "a", "big")
	srv.set("ns", "bad", "big")
	errs := make(chan error, 10)
	inf := newInformer(t, srv, Options{Transform: func(o *api.Object) (*api.Object, error) {
		if o.Metadata.Name == "bad" {
			return nil, errors.New("cannot shrink this one")
		}
		o.Remove("data")
		return o, nil
	}})
	require.NoError(t, inf.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) { errs <- err }))
	seen := make(chan *api.Object, 10)
	_, err := inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(o *api.Object, _ bool) { seen <- o }})
	require.NoError(t, err)
	runInformer(t, inf)
	waitSynced(t, inf)

	a, _ := inf.GetStore().GetByKey("ns/a")
	assert.Nil(t, a.Get("data"), "the cache holds the transformed object")
	bad, _ := inf.GetStore().GetByKey("ns/bad")
	assert.NotNil(t, bad.Get("data"), "a failed transform keeps the object as received")
	select {
	case err := <-errs:
		assert.ErrorContains(t, err, "cannot shrink this one")
	case <-time.After(waitTimeout):
		t.Fatal("the transform error was not reported")
	}
	for range 2 {
		o := <-seen
		if o.Metadata.Name == "a" {
			assert.Nil(t, o.Get("data"), "handlers see the transformed object")
		}
	}
}

// The point of one goroutine and one unbounded buffer per handler: a
// handler stuck in its callback does not delay the informer or the others;
// only its own backlog grows.
func TestSlowHandlerDoesNotDelayFastOne(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			srv := newFakeServer()
			inf := newInformer(t, srv, Options{Queue: kind})
			slow, fast := newRecorder(), newRecorder()
			slow.gate = make(chan struct{})
			slowReg, err := inf.AddEventHandlerWithOptions(slow, HandlerOptions{Name: "slow"})
			require.NoError(t, err)
			fastReg, err := inf.AddEventHandlerWithOptions(fast, HandlerOptions{Name: "fast"})
			require.NoError(t, err)
			runInformer(t, inf)
			srv.waitWatch(t)

			const n = 200
			for i := range n {
				srv.set("ns", "o"+string(rune('a'+i%26))+string(rune('a'+i/26)), "")
			}
			for range n {
				select {
				case <-fast.calls:
				case <-time.After(waitTimeout):
					t.Fatal("the fast handler was held up")
				}
			}
			assert.Equal(t, 0, fastReg.Pending())
			// The slow handler is stuck in its first call; the rest wait.
			require.Eventually(t, func() bool { return slowReg.Pending() == n-1 }, waitTimeout, time.Millisecond)
			assert.Equal(t, map[string]int{"slow": n - 1, "fast": 0}, inf.Backlog())
			assert.Equal(t, n, inf.GetStore().Len(), "the cache is current regardless")

			close(slow.gate)
			for range n {
				<-slow.calls
			}
			assert.Equal(t, 0, slowReg.Pending())
		})
	}
}

func TestHasSyncedWaitsForTheFirstList(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	srv.set("ns", "a", "")
	srv.listGate = make(chan struct{})
	inf := newInformer(t, srv, Options{})
	slow := newRecorder()
	slow.gate = make(chan struct{})
	reg, err := inf.AddEventHandler(slow)
	require.NoError(t, err)
	runInformer(t, inf)
	assert.False(t, inf.HasSynced())
	close(srv.listGate)
	waitSynced(t, inf)
	assert.False(t, reg.HasSynced(), "the handler has not been handed the initial list yet")
	close(slow.gate)
	waitSynced(t, reg)
}

func TestEmptyFirstListSyncs(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			inf := newInformer(t, newFakeServer(), Options{Queue: kind})
			reg, err := inf.AddEventHandler(newRecorder())
			require.NoError(t, err)
			runInformer(t, inf)
			waitSynced(t, inf)
			waitSynced(t, reg)
		})
	}
}

func TestWatchErrorHandlerSeesForbidden(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	// The watch-list's 403 only makes the Reflector fall back to a list
	// (as client-go's does); the list's 403 ends the round and is reported.
	forbidden := api.NewForbidden(api.GroupResource{Resource: "configmaps"}, "", "nope")
	srv.listErrs = []error{forbidden, forbidden}
	inf := newInformer(t, srv, Options{})
	errs := make(chan error, 10)
	require.NoError(t, inf.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) { errs <- err }))
	runInformer(t, inf)
	select {
	case err := <-errs:
		assert.True(t, api.IsForbidden(err))
	case <-time.After(waitTimeout):
		t.Fatal("the 403 was not reported")
	}
	assert.Error(t, inf.SetWatchErrorHandler(nil), "too late once running")
	assert.False(t, inf.HasSynced())
}

func TestCleanWatchCloseIsInvisibleToHandlers(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	inf := newInformer(t, srv, Options{})
	rec := newRecorder()
	_, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	runInformer(t, inf)
	srv.waitWatch(t)
	srv.set("ns", "a", "")
	rec.expect(t, "add ns/a 101 initial=false")
	srv.closeWatches()
	again := srv.waitWatch(t)
	assert.Equal(t, "101", again.ResourceVersion)
	srv.set("ns", "a", "x")
	rec.expect(t, "update ns/a 101→102")
	assert.Len(t, srv.lists, 1, "fetched the initial state once")
}

func TestConstructorAndLifecycleErrors(t *testing.T) {
	_, err := NewSharedIndexInformer(nil, Options{})
	assert.Error(t, err)
	_, err = NewSharedIndexInformer(newFakeServer(), Options{Queue: "LIFO"})
	assert.ErrorContains(t, err, "LIFO")
	_, err = NewSharedIndexInformer(newFakeServer(), Options{Indexers: Indexers{"x": nil}})
	assert.Error(t, err)
	_, err = NewSharedIndexInformer(newFakeServer(), Options{ResyncPeriod: -1})
	assert.Error(t, err)

	inf := newInformer(t, newFakeServer(), Options{})
	_, err = inf.AddEventHandler(nil)
	assert.Error(t, err)

	defer leakcheck.Check(t)()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inf.Run(ctx) // returns at once
	inf.Run(ctx) // a second Run is refused
	assert.True(t, inf.HasStarted())
	_, err = inf.AddEventHandler(newRecorder())
	assert.Error(t, err, "no handler joins a stopped informer")
	assert.Error(t, inf.AddIndexers(Indexers{"y": MetaNamespaceIndexFunc}))
}

func TestCustomQueueConstructor(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := newFakeServer()
	srv.set("ns", "a", "")
	built := make(chan struct{}, 1)
	inf := newInformer(t, srv, Options{NewQueue: func(o fifo.Options) fifo.Queue {
		built <- struct{}{}
		return fifo.NewDeltaFIFO(o)
	}})
	runInformer(t, inf)
	waitSynced(t, inf)
	assert.Len(t, built, 1)
}

// The cache's own resourceVersion follows lists, objects and (only through
// the atomic queue) bookmarks; with the older queues it stays "", as in
// client-go without AtomicFIFO.
func TestLastStoreSyncResourceVersion(t *testing.T) {
	for _, kind := range queueKinds {
		t.Run(string(kind), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			srv := newFakeServer()
			srv.set("ns", "a", "") // 101
			inf := newInformer(t, srv, Options{Queue: kind})
			runInformer(t, inf)
			waitSynced(t, inf)
			srv.waitWatch(t)
			srv.remove("ns", "a", false) // 102, unseen
			srv.bookmark()
			require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() == "102" }, waitTimeout, time.Millisecond)
			want := ""
			if kind == AtomicFIFO {
				want = "102"
			}
			require.Eventually(t, func() bool { return inf.LastStoreSyncResourceVersion() == want }, waitTimeout, time.Millisecond)
			assert.Equal(t, want, inf.LastStoreSyncResourceVersion())
		})
	}
}

package reflector

import (
	"context"
	"errors"
	"fmt"
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

var configmaps = api.GroupResource{Resource: "configmaps"}

// harness runs a Reflector over a fakeLW, a recordingStore and a fake
// clock, and stops it (checking for leaked goroutines) when the test ends.
type harness struct {
	lw    *fakeLW
	store *recordingStore
	clock *clock.Fake
	r     *Reflector
	errs  chan error
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Cleanup(leakcheck.Check(t)) // registered first, so it runs last
	h := &harness{
		lw:    newFakeLW(),
		store: newRecordingStore(),
		clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		errs:  make(chan error, 100),
	}
	opts.Clock = h.clock
	h.r = New(h.lw, h.store, opts)
	h.r.rand = func() float64 { return 0.5 } // jitter = half the base
	h.r.SetWatchErrorHandler(func(_ *Reflector, err error) { h.errs <- err })
	return h
}

// start runs the Reflector until the test ends.
func (h *harness) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.r.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("Run did not return after its context was cancelled")
		}
	})
}

// backoff waits until the Reflector sleeps on the clock, returns how long
// for, and steps the clock past it.
func (h *harness) backoff(t *testing.T) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	w, err := h.clock.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Kind == clock.KindTimer })
	require.NoError(t, err, "the Reflector never backed off")
	h.clock.Step(w.Duration)
	return w.Duration
}

// eventuallyRV waits until the Reflector's resume point is rv: it is
// recorded just after the Store call a test synchronises on.
func (h *harness) eventuallyRV(t *testing.T, rv string) {
	t.Helper()
	require.Eventually(t, func() bool { return h.r.LastSyncResourceVersion() == rv }, waitTimeout, time.Millisecond)
}

// nextError returns the next error the watch-error handler saw.
func (h *harness) nextError(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.errs:
		return err
	case <-time.After(waitTimeout):
		t.Fatal("the watch-error handler was not called")
		return nil
	}
}

// listAndOpenWatch scripts a one-page list at rv and returns the watch
// opened after it.
func (h *harness) listAndOpenWatch(t *testing.T, rv string, items ...*api.Object) *fakeWatcher {
	t.Helper()
	h.lw.onList(listOf(rv, "", items...))
	h.start(t)
	require.Equal(t, "list", h.lw.next(t).verb)
	require.Equal(t, "watch", h.lw.next(t).verb)
	return h.lw.nextWatch(t)
}

func TestFirstListIsPagedFromResourceVersionZero(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(
		listOf("10", "token-1", obj("a", "3"), obj("b", "7")),
		listOf("10", "", obj("c", "9")),
	)
	h.start(t)

	first := h.lw.next(t)
	assert.Equal(t, request{"list", api.ListOptions{ResourceVersion: "0", Limit: 500}}, first)
	second := h.lw.next(t)
	assert.Equal(t, request{"list", api.ListOptions{Continue: "token-1", Limit: 500}}, second,
		"the next page carries only the continue token: the server refuses a resourceVersion with it")
	h.store.expect(t, "replace [ns/a ns/b ns/c] 10")

	watch := h.lw.next(t)
	require.Equal(t, "watch", watch.verb)
	assert.Equal(t, "10", watch.opts.ResourceVersion, "the watch starts at the list's resourceVersion")
	assert.True(t, watch.opts.AllowWatchBookmarks)
	require.NotNil(t, watch.opts.TimeoutSeconds)
	assert.Equal(t, int64(450), *watch.opts.TimeoutSeconds, "random in [300, 600): 300 + 0.5×300")
	assert.Equal(t, "10", h.r.LastSyncResourceVersion())
}

func TestExpiredContinueTokenFallsBackToOneFullList(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(
		listOf("10", "token-1", obj("a", "3")),
		fails(api.NewResourceExpired("The provided continue parameter is too old to display a consistent list result.")),
		listOf("20", "", obj("a", "3"), obj("b", "15")),
	)
	h.start(t)
	assert.Equal(t, "list rv=\"0\" limit=500", h.lw.next(t).String())
	assert.Equal(t, "list rv=\"\" limit=500 continue=token-1", h.lw.next(t).String())
	assert.Equal(t, "list rv=\"0\" limit=0", h.lw.next(t).String(),
		"one unpaged list at the resourceVersion first asked for, as client-go's pager")
	h.store.expect(t, "replace [ns/a ns/b] 20")
	assert.Equal(t, "watch rv=\"20\" limit=0", h.lw.next(t).String())
}

// The answer to the first article's question: a watch that the server ends
// (its timeout ran out) is simply re-opened from the last resourceVersion
// seen, bookmarks included, and nothing is re-listed.
func TestCleanlyClosedWatchIsReopenedWithoutRelisting(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	w := h.listAndOpenWatch(t, "10", obj("a", "3"))
	h.store.expect(t, "replace [ns/a] 10")

	w.send(t, added(obj("b", "11")))
	w.send(t, modified(obj("a", "12")))
	w.send(t, bookmark("15"))
	w.close()
	h.store.expect(t, "add ns/b 11", "update ns/a 12")

	again := h.lw.next(t)
	assert.Equal(t, "watch", again.verb, "no re-list after a clean close")
	assert.Equal(t, "15", again.opts.ResourceVersion, "the bookmark advanced the resume point")
	w2 := h.lw.nextWatch(t)
	w2.send(t, deleted(obj("b", "16")))
	h.store.expect(t, "delete ns/b 16")
	h.eventuallyRV(t, "16")

	lists, watches := h.lw.counts()
	assert.Equal(t, 1, lists)
	assert.Equal(t, 2, watches)
	assert.Empty(t, h.errs, "a clean close is not an error")
}

func TestExpiredInStreamRelistsFromLastResourceVersion(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	w := h.listAndOpenWatch(t, "10")
	h.store.expect(t, "replace [] 10")
	w.send(t, added(obj("a", "12")))
	h.store.expect(t, "add ns/a 12")

	h.lw.onList(listOf("30", "", obj("a", "25")))
	w.send(t, errorEvent(api.NewResourceExpired("too old resource version: 12 (20)")))
	assert.True(t, api.IsResourceExpired(h.nextError(t)), "the handler sees the 410")
	w.waitStopped(t)
	assert.Equal(t, 1200*time.Millisecond, h.backoff(t), "800 ms + jitter 0.5×800 ms")

	relist := h.lw.next(t)
	assert.Equal(t, "list rv=\"12\" limit=0", relist.String(),
		"re-list not older than what we saw, unpaged so the watch cache can serve it")
	h.store.expect(t, "replace [ns/a] 30")
	assert.Equal(t, "watch rv=\"30\" limit=0", h.lw.next(t).String())
}

func TestRelistThatIsExpiredOrTooLargeAsksForTheLatest(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"410 Expired", api.NewResourceExpired("too old resource version: 12 (20)")},
		{"410 Gone", api.NewGone("too old resource version: 12 (20)")},
		{"504 too large", api.NewTooLargeResourceVersion(12, 9, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{InitialList: ListThenWatch})
			w := h.listAndOpenWatch(t, "12")
			h.store.expect(t, "replace [] 12")
			h.lw.onList(fails(tc.err), listOf("40", "", obj("z", "39")))
			w.send(t, errorEvent(api.NewResourceExpired("too old resource version: 12 (20)")))
			h.nextError(t)
			h.backoff(t)
			assert.Equal(t, "list rv=\"12\" limit=0", h.lw.next(t).String())
			assert.Equal(t, "list rv=\"\" limit=0", h.lw.next(t).String(), "at once, no backoff in between")
			h.store.expect(t, "replace [ns/z] 40")
			assert.Equal(t, "watch rv=\"40\" limit=0", h.lw.next(t).String())
		})
	}
}

func TestFirstListTooLargeFallsBackToLatest(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(fails(api.NewTooLargeResourceVersion(5, 3, 1)), listOf("7", ""))
	h.start(t)
	assert.Equal(t, "list rv=\"0\" limit=500", h.lw.next(t).String())
	assert.Equal(t, "list rv=\"\" limit=500", h.lw.next(t).String())
	h.store.expect(t, "replace [] 7")
}

func TestTooManyRequestsInStreamRewatchesWithoutRelisting(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	w := h.listAndOpenWatch(t, "10")
	w.send(t, added(obj("a", "11")))
	w.send(t, errorEvent(api.NewTooManyRequests("slow down", 1)))
	assert.True(t, api.IsTooManyRequests(h.nextError(t)))
	assert.Equal(t, 1200*time.Millisecond, h.backoff(t))
	assert.Equal(t, "watch rv=\"11\" limit=0", h.lw.next(t).String(), "re-watch from where it was, no re-list")
}

func TestRetriableWatchOpenErrorsRewatchWithGrowingBackoff(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onWatchError(refused, api.NewTooManyRequests("slow down", 0))
	h.lw.onList(listOf("10", ""))
	h.start(t)
	require.Equal(t, "list", h.lw.next(t).verb)

	assert.Equal(t, "watch rv=\"10\" limit=0", h.lw.next(t).String())
	assert.ErrorIs(t, h.nextError(t), syscall.ECONNREFUSED)
	assert.Equal(t, 1200*time.Millisecond, h.backoff(t))
	assert.Equal(t, "watch rv=\"10\" limit=0", h.lw.next(t).String())
	assert.True(t, api.IsTooManyRequests(h.nextError(t)))
	assert.Equal(t, 2400*time.Millisecond, h.backoff(t), "the base doubled")
	assert.Equal(t, "watch rv=\"10\" limit=0", h.lw.next(t).String())
	h.lw.nextWatch(t)
	lists, _ := h.lw.counts()
	assert.Equal(t, 1, lists)
}

func TestForbiddenIsVisibleAndBacksOffExponentiallyThenResets(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	forbidden := api.NewForbidden(configmaps, "", `User "demo" cannot list resource "configmaps" in API group "" in the namespace "default"`)
	for range 8 {
		h.lw.onList(fails(forbidden))
	}
	h.start(t)
	var got []time.Duration
	for range 8 {
		require.Equal(t, "list", h.lw.next(t).verb)
		err := h.nextError(t)
		require.True(t, api.IsForbidden(err), "the handler sees the 403: %v", err)
		got = append(got, h.backoff(t))
	}
	// Base 0.8 s doubling to the 30 s cap, each plus half again of jitter.
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{1200 * ms, 2400 * ms, 4800 * ms, 9600 * ms, 19200 * ms, 38400 * ms, 45 * time.Second, 45 * time.Second}, got)

	// Two quiet minutes later (the list now blocks: nothing scripted), the
	// next trouble starts over at the initial delay.
	require.Equal(t, "list", h.lw.next(t).verb)
	h.clock.Step(2*time.Minute + time.Second)
	assert.Equal(t, 1200*time.Millisecond, h.r.backoff.next())
}

func TestBackoffJitterStaysWithinClientGoBounds(t *testing.T) {
	c := clock.NewFake(time.Now())
	for _, rnd := range []float64{0, 0.999999} {
		b := newBackoffManager(DefaultBackoff, c, func() float64 { return rnd })
		base := 800 * time.Millisecond
		for range 10 {
			d := b.next()
			assert.GreaterOrEqual(t, d, base)
			assert.Less(t, d, 2*base)
			base = min(2*base, 30*time.Second)
		}
	}
}

func TestOtherWatchErrorsBackOffAndRelist(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	w := h.listAndOpenWatch(t, "10")
	h.lw.onList(listOf("11", ""))
	w.send(t, errorEvent(api.NewInternalError(errors.New("etcd is sad"))))
	assert.True(t, api.IsInternalError(h.nextError(t)))
	h.backoff(t)
	assert.Equal(t, "list rv=\"10\" limit=0", h.lw.next(t).String())
}

func TestWatchOpenFailureRelists(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(listOf("10", ""), listOf("10", ""))
	h.lw.onWatchError(api.NewForbidden(configmaps, "", "no watch for you"))
	h.start(t)
	require.Equal(t, "list", h.lw.next(t).verb)
	require.Equal(t, "watch", h.lw.next(t).verb)
	assert.True(t, api.IsForbidden(h.nextError(t)))
	h.backoff(t)
	assert.Equal(t, "list rv=\"10\" limit=0", h.lw.next(t).String())
}

func TestVeryShortWatchIsTreatedAsTrouble(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	w := h.listAndOpenWatch(t, "10")
	h.lw.onList(listOf("10", ""))
	w.close() // closed at once, nothing sent: re-opening at once would spin
	var short *VeryShortWatchError
	assert.ErrorAs(t, h.nextError(t), &short)
	h.backoff(t)
	assert.Equal(t, "list", h.lw.next(t).verb)
}

func TestStoreErrorsAreReportedAndTheWatchGoesOn(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.store.failAdd = errors.New("store is full")
	w := h.listAndOpenWatch(t, "10")
	w.send(t, added(obj("a", "11")))
	assert.ErrorContains(t, h.nextError(t), "store is full")
	w.send(t, modified(obj("a", "12")))
	h.store.expect(t, "replace [] 10", "add ns/a 11", "update ns/a 12")
	h.eventuallyRV(t, "12") // the resume point still advances
}

func TestResyncOnlyWhenShouldResyncAgrees(t *testing.T) {
	due := make(chan bool, 10)
	h := newHarness(t, Options{InitialList: ListThenWatch, ResyncPeriod: time.Minute, ShouldResync: func() bool { return <-due }})
	h.listAndOpenWatch(t, "10")
	h.store.expect(t, "replace [] 10")
	step := func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		_, err := h.clock.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Duration == time.Minute })
		require.NoError(t, err)
		h.clock.Step(time.Minute)
	}
	due <- false
	step()
	due <- true
	step()
	h.store.expect(t, "resync")
	assert.Empty(t, h.store.ops, "the first tick, not due, did nothing")
}

func TestSelectorsAndWatchTimeoutAreSent(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch, LabelSelector: "app=demo", FieldSelector: "metadata.name=a",
		MinWatchTimeout: 2 * time.Second, MaxWatchTimeout: 4 * time.Second})
	h.lw.onList(listOf("10", ""))
	h.start(t)
	l := h.lw.next(t)
	assert.Equal(t, "app=demo", l.opts.LabelSelector)
	assert.Equal(t, "metadata.name=a", l.opts.FieldSelector)
	w := h.lw.next(t)
	assert.Equal(t, "app=demo", w.opts.LabelSelector)
	assert.Equal(t, int64(3), *w.opts.TimeoutSeconds)
}

func TestExplicitPageSizeAppliesToEveryList(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch, PageSize: 2})
	w := h.listAndOpenWatch(t, "10")
	h.lw.onList(listOf("12", ""))
	w.send(t, errorEvent(api.NewResourceExpired("gone")))
	h.nextError(t)
	h.backoff(t)
	assert.Equal(t, "list rv=\"10\" limit=2", h.lw.next(t).String())
}

func TestNilListIsAnErrorNotAPanic(t *testing.T) {
	h := newHarness(t, Options{InitialList: ListThenWatch})
	h.lw.onList(func(api.ListOptions) (*api.List, error) { return nil, nil })
	h.start(t)
	assert.ErrorContains(t, h.nextError(t), "no list")
}

func TestNilListerWatcherIsAnError(t *testing.T) {
	r := New(nil, newRecordingStore(), Options{})
	assert.Error(t, r.ListAndWatch(context.Background()))
}

func TestCancelDuringBackoffReturnsPromptly(t *testing.T) {
	defer leakcheck.Check(t)()
	lw := newFakeLW()
	lw.onList(fails(fmt.Errorf("boom")))
	c := clock.NewFake(time.Now())
	r := New(lw, newRecordingStore(), Options{Clock: c, InitialList: ListThenWatch})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(context.Background(), waitTimeout)
	defer wcancel()
	require.NoError(t, c.BlockUntilWaiters(wctx, 1))
	cancel()
	select {
	case <-done:
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
	}
}

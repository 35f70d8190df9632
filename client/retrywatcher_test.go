package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/internal/leakcheck"
	"listwatch/narrate"
)

// fakeWatcher is a Watcher whose events a test feeds by hand.
type fakeWatcher struct {
	ch      chan api.Event
	stopped chan struct{}
	once    sync.Once
}

func (f *fakeWatcher) ResultChan() <-chan api.Event { return f.ch }
func (f *fakeWatcher) Stop()                        { f.once.Do(func() { close(f.stopped) }) }

// feed returns a watcher that delivers evs, then closes its channel (or,
// with stayOpen, waits for Stop).
func feed(stayOpen bool, evs ...api.Event) *fakeWatcher {
	f := &fakeWatcher{ch: make(chan api.Event), stopped: make(chan struct{})}
	go func() {
		defer close(f.ch)
		for _, ev := range evs {
			select {
			case f.ch <- ev:
			case <-f.stopped:
				return
			}
		}
		if stayOpen {
			<-f.stopped
		}
	}()
	return f
}

// fakeFactory answers the n-th Watch call (from 0) with attempts[n], and
// records the options of every call.
type fakeFactory struct {
	mu       sync.Mutex
	attempts []func() (Watcher, error)
	opts     []api.ListOptions
}

func (f *fakeFactory) Watch(_ context.Context, opts api.ListOptions) (Watcher, error) {
	f.mu.Lock()
	n := len(f.opts)
	f.opts = append(f.opts, opts)
	f.mu.Unlock()
	if n < len(f.attempts) {
		return f.attempts[n]()
	}
	return feed(true), nil // later attempts: a quiet, healthy watch
}

func (f *fakeFactory) calls() []api.ListOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]api.ListOptions(nil), f.opts...)
}

func feeding(stayOpen bool, evs ...api.Event) func() (Watcher, error) {
	return func() (Watcher, error) { return feed(stayOpen, evs...), nil }
}

func fail(err error) func() (Watcher, error) {
	return func() (Watcher, error) { return nil, err }
}

var fast = RetryWatcherOptions{MinRestartDelay: time.Millisecond}

func errorEvent(s *api.Status) api.Event { return api.Event{Type: api.Error, Status: s} }

func statusWithCode(code int32, retryAfter int32) *api.Status {
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure, Code: code,
		Message: fmt.Sprintf("status %d", code), Details: &api.StatusDetails{RetryAfterSeconds: retryAfter}}
}

func TestRetryWatcherRefusesToStartFromNow(t *testing.T) {
	for _, rv := range []string{"", "0"} {
		_, err := NewRetryWatcher(context.Background(), rv, &fakeFactory{}, fast)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "list first")
	}
	_, err := NewRetryWatcher(context.Background(), "5", nil, fast)
	assert.Error(t, err)
}

// RetryWatcher's main promise, over real sockets: N events across at least
// three forced reconnects of every kind, none lost, none repeated, and
// every re-watch asks for exactly where the last one got to.
func TestRetryWatcherAcrossReconnects(t *testing.T) {
	// The server's history: events at odd revisions 101..139; the even
	// revisions in between belong to other objects, which a bookmark
	// skips over.
	var history []api.Event
	for rv := 101; rv < 140; rv += 2 {
		typ := []api.EventType{api.Added, api.Modified, api.Deleted}[rv%3]
		history = append(history, cm(typ, fmt.Sprintf("cm%d", rv%4), strconv.Itoa(rv)))
	}
	type attempt struct {
		rv        string
		bookmarks string
	}
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		var mu sync.Mutex
		var attempts []attempt
		var bookmarked []string
		srv := newScriptedServer(t, func(s stream, r *http.Request) {
			q := r.URL.Query()
			mu.Lock()
			n := len(attempts)
			attempts = append(attempts, attempt{q.Get("resourceVersion"), q.Get("allowWatchBookmarks")})
			mu.Unlock()
			from, _ := strconv.Atoi(q.Get("resourceVersion"))
			var pending []api.Event
			for _, ev := range history {
				if rv, _ := strconv.Atoi(ev.Object.Metadata.ResourceVersion); rv > from {
					pending = append(pending, ev)
				}
			}
			if len(pending) == 0 {
				s.Stall() // all sent: a quiet watch until the client stops
				return
			}
			// Each attempt sends a few events, then ends in its own way.
			k := min(len(pending), 1+n%4)
			for _, ev := range pending[:k] {
				s.Send(eventLine(t, ev))
			}
			switch n % 5 {
			case 0: // the server's timeout: a clean end
			case 1: // dropped mid-frame
				if k < len(pending) {
					s.Send(eventLine(t, pending[k])[:40])
				}
				s.Drop()
			case 2: // reset mid-frame
				if k < len(pending) {
					s.Send(eventLine(t, pending[k])[:40])
				}
				s.Reset()
			case 3: // a bookmark one past the last event, then the end
				last, _ := strconv.Atoi(pending[k-1].Object.Metadata.ResourceVersion)
				bm := strconv.Itoa(last + 1)
				mu.Lock()
				bookmarked = append(bookmarked, bm)
				mu.Unlock()
				s.Send(eventLine(t, bookmark(bm)))
			case 4: // a transient server error in the stream
				s.Send(eventLine(t, errorEvent(api.NewInternalError(errors.New("etcd leader changed")))))
			}
		})
		defer srv.Close()
		c := newTestClient(t, srv, tk)
		rw, err := NewRetryWatcher(context.Background(), "100", c.Resource(configMaps).Namespace("ns"), fast)
		require.NoError(t, err)
		defer rw.Stop()

		var got []api.Event
		for len(got) < len(history) {
			got = append(got, next(t, rw))
		}
		require.Equal(t, history, got, "every event once, in order")
		rw.Stop()
		requireClosed(t, rw)
		<-rw.Done()

		mu.Lock()
		defer mu.Unlock()
		require.GreaterOrEqual(t, len(attempts), 4, "at least three reconnects")
		valid := map[string]bool{"100": true}
		for _, ev := range history {
			valid[ev.Object.Metadata.ResourceVersion] = true
		}
		for _, bm := range bookmarked {
			valid[bm] = true
		}
		prev := 0
		for i, a := range attempts {
			assert.Equal(t, "true", a.bookmarks, "attempt %d asks for bookmarks", i)
			assert.True(t, valid[a.rv], "attempt %d resumes from a revision it saw: %s", i, a.rv)
			rv, _ := strconv.Atoi(a.rv)
			assert.GreaterOrEqual(t, rv, prev, "attempt %d never goes back", i)
			prev = rv
		}
		// After a bookmark the next attempt resumes from it, and the
		// bookmark itself was never delivered.
		for i, a := range attempts[:len(attempts)-1] {
			if i%5 == 3 && a.rv != "" {
				assert.Contains(t, bookmarked, attempts[i+1].rv)
			}
		}
	})
}

func TestRetryWatcherStopsOn410InStream(t *testing.T) {
	expiredLine := readFixture(t, "watch-410-too-old-rv.jsonl")
	var expired api.Event
	require.NoError(t, expired.UnmarshalJSON(bytes.TrimSpace(expiredLine)))
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		var mu sync.Mutex
		calls := 0
		srv := newScriptedServer(t, func(s stream, r *http.Request) {
			mu.Lock()
			calls++
			mu.Unlock()
			s.Send(eventLine(t, cm(api.Added, "a", "99")))
			s.Send(expiredLine)
		})
		defer srv.Close()
		rw, err := NewRetryWatcher(context.Background(), "98", newTestClient(t, srv, tk).Resource(configMaps), fast)
		require.NoError(t, err)
		defer rw.Stop()
		assert.Equal(t, cm(api.Added, "a", "99"), next(t, rw))
		assert.Equal(t, expired, next(t, rw), "the 410 is forwarded as the server sent it")
		requireClosed(t, rw)
		<-rw.Done()
		mu.Lock()
		assert.Equal(t, 1, calls, "no re-watch after a 410")
		mu.Unlock()
	})
}

func TestRetryWatcherWhatStopsAndWhatRetries(t *testing.T) {
	forbidden := api.NewForbidden(api.GroupResource{Resource: "configmaps"}, "", "no")
	unauthorized := api.NewUnauthorized("")
	gone := api.NewResourceExpired("too old resource version: 1 (5)")
	a6 := cm(api.Added, "a", "6")
	cases := []struct {
		name     string
		attempts []func() (Watcher, error)
		// want is what the consumer gets; stops says whether the
		// watcher then ends (else it goes on, quiet).
		want  []api.Event
		stops bool
		// wantRV is the resourceVersion of each Watch call.
		wantRV []string
	}{
		{name: "403 from Watch is forwarded and stops",
			attempts: []func() (Watcher, error){fail(&StatusError{Status: forbidden})},
			want:     []api.Event{errorEvent(forbidden)}, stops: true, wantRV: []string{"5"}},
		{name: "401 from Watch is forwarded and stops",
			attempts: []func() (Watcher, error){fail(&StatusError{Status: unauthorized})},
			want:     []api.Event{errorEvent(unauthorized)}, stops: true, wantRV: []string{"5"}},
		{name: "410 from Watch is forwarded and stops",
			attempts: []func() (Watcher, error){fail(&StatusError{Status: gone})},
			want:     []api.Event{errorEvent(gone)}, stops: true, wantRV: []string{"5"}},
		{name: "connection refused is retried",
			attempts: []func() (Watcher, error){fail(errors.New("dial tcp: connection refused")), feeding(true, a6)},
			want:     []api.Event{a6}, wantRV: []string{"5", "5"}},
		{name: "500 from Watch is retried",
			attempts: []func() (Watcher, error){fail(&StatusError{Status: statusWithCode(500, 0)}), feeding(true, a6)},
			want:     []api.Event{a6}, wantRV: []string{"5", "5"}},
		{name: "no watcher at all is retried",
			attempts: []func() (Watcher, error){func() (Watcher, error) { return nil, nil }, feeding(true, a6)},
			want:     []api.Event{a6}, wantRV: []string{"5", "5"}},
		{name: "403 in the stream is forwarded and stops",
			attempts: []func() (Watcher, error){feeding(true, a6, errorEvent(forbidden))},
			want:     []api.Event{a6, errorEvent(forbidden)}, stops: true, wantRV: []string{"5"}},
		{name: "401 in the stream is forwarded and stops",
			attempts: []func() (Watcher, error){feeding(true, errorEvent(unauthorized))},
			want:     []api.Event{errorEvent(unauthorized)}, stops: true, wantRV: []string{"5"}},
		{name: "500 in the stream is retried from the last rv",
			attempts: []func() (Watcher, error){feeding(true, a6, errorEvent(statusWithCode(500, 0))), feeding(true, cm(api.Deleted, "a", "7"))},
			want:     []api.Event{a6, cm(api.Deleted, "a", "7")}, wantRV: []string{"5", "6"}},
		{name: "504 in the stream is retried",
			attempts: []func() (Watcher, error){feeding(true, errorEvent(statusWithCode(504, 0)))},
			wantRV:   []string{"5", "5"}},
		{name: "an unknown error code in the stream is retried",
			attempts: []func() (Watcher, error){feeding(true, errorEvent(statusWithCode(429, 0)))},
			wantRV:   []string{"5", "5"}},
		{name: "an ERROR without a Status is retried",
			attempts: []func() (Watcher, error){feeding(true, api.Event{Type: api.Error})},
			wantRV:   []string{"5", "5"}},
		{name: "a bookmark moves the rv and is not forwarded",
			attempts: []func() (Watcher, error){feeding(false, bookmark("9"))},
			wantRV:   []string{"5", "9"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			f := &fakeFactory{attempts: tc.attempts}
			rw, err := NewRetryWatcher(context.Background(), "5", f, fast)
			require.NoError(t, err)
			defer rw.Stop()
			for _, want := range tc.want {
				assert.Equal(t, want, next(t, rw))
			}
			if tc.stops {
				requireClosed(t, rw)
				<-rw.Done()
			} else {
				require.Eventually(t, func() bool { return len(f.calls()) >= len(tc.wantRV) }, safetyTimeout, time.Millisecond)
			}
			var rvs []string
			for _, o := range f.calls()[:len(tc.wantRV)] {
				rvs = append(rvs, o.ResourceVersion)
				assert.True(t, o.Watch)
				assert.True(t, o.AllowWatchBookmarks)
			}
			assert.Equal(t, tc.wantRV, rvs)
		})
	}
}

func TestRetryWatcherStopsOnEventItCannotResumeAfter(t *testing.T) {
	cases := map[string]api.Event{
		"ADDED without rv":    cm(api.Added, "a", ""),
		"BOOKMARK without rv": bookmark(""),
		"no object":           {Type: api.Modified},
		"unknown type":        {Type: "RENAMED", Object: cm(api.Added, "a", "9").Object},
	}
	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			f := &fakeFactory{attempts: []func() (Watcher, error){feeding(true, cm(api.Added, "a", "6"), bad)}}
			rw, err := NewRetryWatcher(context.Background(), "5", f, fast)
			require.NoError(t, err)
			defer rw.Stop()
			assert.Equal(t, cm(api.Added, "a", "6"), next(t, rw))
			ev := next(t, rw)
			require.Equal(t, api.Error, ev.Type)
			assert.EqualValues(t, http.StatusInternalServerError, ev.Status.Code)
			assert.Equal(t, api.ReasonInternalError, ev.Status.Reason)
			assert.Contains(t, ev.Status.Message, "retryWatcher")
			requireClosed(t, rw)
			assert.Len(t, f.calls(), 1)
		})
	}
}

func TestRetryWatcherWaitsForRetryAfterSeconds(t *testing.T) {
	defer leakcheck.Check(t)()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	f := &fakeFactory{attempts: []func() (Watcher, error){feeding(true, errorEvent(statusWithCode(504, 1)))}}
	rw, err := NewRetryWatcher(context.Background(), "5", f, RetryWatcherOptions{MinRestartDelay: time.Millisecond, Clock: clk})
	require.NoError(t, err)
	defer rw.Stop()
	// The attempt ended (on the fake clock) the instant it started, so the
	// wait is the server's whole retryAfterSeconds, not the 1 ms minimum.
	waitForRestartTimer(t, clk, time.Second)
	assert.Len(t, f.calls(), 1)
	clk.Step(time.Second)
	require.Eventually(t, func() bool { return len(f.calls()) == 2 }, safetyTimeout, time.Millisecond)
}

func TestRetryWatcherMinRestartDelay(t *testing.T) {
	defer leakcheck.Check(t)()
	// Every stream ends at once: without the delay this is a hot loop.
	closing := func() (Watcher, error) { return feed(false), nil }
	f := &fakeFactory{attempts: []func() (Watcher, error){closing, closing, closing, closing}}
	const delay = 50 * time.Millisecond
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	rw, err := NewRetryWatcher(context.Background(), "5", f, RetryWatcherOptions{MinRestartDelay: delay, Clock: clk})
	require.NoError(t, err)
	defer rw.Stop()
	for attempt := 1; attempt <= 4; attempt++ {
		waitForRestartTimer(t, clk, delay)
		// A nanosecond short of the delay the timer has not fired (Step
		// fires due timers before it returns), so no attempt can start.
		clk.Step(delay - time.Nanosecond)
		assert.Len(t, f.calls(), attempt, "attempt %d started before the delay", attempt+1)
		clk.Step(time.Nanosecond)
		require.Eventually(t, func() bool { return len(f.calls()) == attempt+1 }, safetyTimeout, time.Millisecond)
	}
}

// waitForRestartTimer blocks until the RetryWatcher waits, on clk, for a
// timer of exactly d: it has ended an attempt and not yet started the next.
func waitForRestartTimer(t *testing.T, clk *clock.Fake, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	_, err := clk.WaitForWaiter(ctx, func(w clock.Waiter) bool { return w.Kind == clock.KindTimer && w.Duration == d })
	require.NoError(t, err, "the RetryWatcher never waited %v before its next attempt", d)
}

func TestNextAttempt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		ran        time.Duration
		retryAfter time.Duration
		wait       time.Duration // after the attempt ended
	}{
		{"a stream that failed at once waits out the minimum delay", 10 * time.Millisecond, 0, 990 * time.Millisecond},
		{"a long healthy watch is renewed at once", 30 * time.Minute, 0, 0},
		{"retryAfter counts from the end of the attempt", 30 * time.Minute, 3 * time.Second, 3 * time.Second},
		{"the later of the two wins", 100 * time.Millisecond, 2 * time.Second, 2 * time.Second},
	}
	for _, tc := range cases {
		end := t0.Add(tc.ran)
		got := nextAttempt(t0, end, time.Second, tc.retryAfter)
		assert.Equal(t, tc.wait, max(got.Sub(end), 0), tc.name)
	}
}

func TestRetryWatcherStop(t *testing.T) {
	defer leakcheck.Check(t)()
	inner := feed(true, cm(api.Added, "a", "6"))
	f := &fakeFactory{attempts: []func() (Watcher, error){func() (Watcher, error) { return inner, nil }}}
	rw, err := NewRetryWatcher(context.Background(), "5", f, fast)
	require.NoError(t, err)
	require.Zero(t, cap(rw.ResultChan()), "ResultChan must be unbuffered")
	// Nobody reads: the watcher is blocked handing over the event.
	require.Eventually(t, func() bool { return len(f.calls()) == 1 }, safetyTimeout, time.Millisecond)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { rw.Stop(); rw.Stop() })
	}
	wg.Wait()
	<-rw.Done()
	requireClosed(t, rw)
	<-inner.stopped // the stream it had open was stopped too
}

func TestRetryWatcherEndsWithItsContext(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx, cancel := context.WithCancel(context.Background())
	f := &fakeFactory{}
	rw, err := NewRetryWatcher(ctx, "5", WatchFunc(f.Watch), fast)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(f.calls()) == 1 }, safetyTimeout, time.Millisecond)
	cancel()
	<-rw.Done()
	requireClosed(t, rw)
}

func TestRetryWatcherNarratesReWatches(t *testing.T) {
	defer leakcheck.Check(t)()
	var buf bytes.Buffer
	tr := narrate.New(&buf, narrate.WithoutTimes())
	f := &fakeFactory{attempts: []func() (Watcher, error){
		feeding(false, cm(api.Added, "a", "6")),
		feeding(false, errorEvent(gone410())),
	}}
	rw, err := NewRetryWatcher(context.Background(), "5", f, RetryWatcherOptions{MinRestartDelay: time.Millisecond, Tracer: tr})
	require.NoError(t, err)
	defer rw.Stop()
	next(t, rw)
	next(t, rw)
	<-rw.Done()
	assert.Contains(t, buf.String(), "retrywatcher  re-watch #1 from rv=6 (stream closed)")
	assert.Contains(t, buf.String(), "retrywatcher  stopped at rv=6: ERROR 410 Expired")
}

func gone410() *api.Status { return api.NewResourceExpired("too old resource version: 6 (10)") }

// A half-open connection (the server stops sending, no FIN, no RST) is
// noticed by the idle timeout, and the RetryWatcher re-watches from where
// it was, losing nothing.
func TestRetryWatcherRecoversFromHalfOpenConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		var mu sync.Mutex
		var rvs []string
		srv := newScriptedServer(t, func(s stream, r *http.Request) {
			mu.Lock()
			rvs = append(rvs, r.URL.Query().Get("resourceVersion"))
			n := len(rvs)
			mu.Unlock()
			if n == 1 {
				s.Send(eventLine(t, cm(api.Added, "a", "6")))
				s.Stall() // half-open from here on
				return
			}
			s.Send(eventLine(t, cm(api.Modified, "a", "7")))
			s.Stall()
		})
		defer srv.Close()
		const idle = 200 * time.Millisecond
		c := newTestClient(t, srv, tk, func(c *Config) { c.IdleWatchTimeout = idle })
		// The idle timeout runs on a fake clock, so it fires when the test
		// says, never early on a busy machine.
		fake := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		c.clock = fake
		rw, err := NewRetryWatcher(context.Background(), "5", c.Resource(configMaps), fast)
		require.NoError(t, err)
		defer rw.Stop()
		assert.Equal(t, cm(api.Added, "a", "6"), next(t, rw))
		fake.Step(idle) // nothing more came: the connection is presumed dead
		assert.Equal(t, cm(api.Modified, "a", "7"), next(t, rw))
		rw.Stop()
		<-rw.Done()
		mu.Lock()
		defer mu.Unlock()
		assert.Equal(t, []string{"5", "6"}, rvs[:2])
	})
}

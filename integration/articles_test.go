package integration

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
)

// The first article (cited in docs/articles.md), replayed
// against our apiserver over loopback. A real kube-apiserver ends a watch
// that did not ask for a timeout after 30-60 minutes (--min-request-timeout
// × (1 + rand)); here the expire fault (Faults.ExpireWatches) makes that
// moment come when the test says, through the same code path as the timer,
// so the bug the article took half an hour to hit shows up at once, and a
// busy machine cannot make the timeout come before the test's write is
// delivered.

// articleServer starts an apiserver with the default watch timeout (half
// an hour or more: it never passes during a test unless expired), and a
// client of it using transport tk.
func articleServer(t *testing.T, tk client.TransportKind) (*apiserver.Server, *client.ResourceClient) {
	t.Helper()
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{Transport: tk})
	return srv, c.Resource(configMaps).Namespace("default")
}

// expireOnce ends the watch the consumer has open by its timeout, and
// waits for the consumer to watch again. watches counts the watches the
// consumer started; it counts one before the server has it, so the fault
// is thrown again until the consumer's watch was there to be ended.
func expireOnce(t *testing.T, srv *apiserver.Server, watches func() int64) {
	t.Helper()
	n := watches()
	require.Eventually(t, func() bool {
		srv.Faults().ExpireWatches()
		return watches() > n
	}, waitLong, tick, "the server's timeout should have ended watch %d", n)
}

// Version 1 of the article's loop: `case e, ok := <-w.ResultChan(): if !ok
// { return }`. It handles the events of the first watch, then the server's
// timeout closes the channel and the loop (and with it the controller)
// returns for good: a change made after that is never seen. A watch from
// the same resourceVersion shows the change did happen.
func TestArticleNaiveLoopStopsAtServerTimeout(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv, cms := articleServer(t, tk)
		ctx := testContext(t)
		startRV := listResourceVersion(t, cms)
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: startRV})
		require.NoError(t, err)
		defer w.Stop()
		wr := newWriter(t, ctx, cms)
		before, ok := wr.step("default")
		require.True(t, ok)

		var seen []string
		deadline := time.After(waitLong) // only a safety net for a broken server
	loop:
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					break loop // the article: `return`. Nothing more is ever handled.
				}
				seen = append(seen, describe(e))
				// Half an hour passes: the server's timeout ends the watch.
				srv.Faults().ExpireWatches()
			case <-deadline:
				require.FailNow(t, "the server never ended the watch")
			}
		}
		after, ok := wr.step("default") // happens after the loop gave up
		require.True(t, ok)

		assert.Equal(t, []string{before}, seen, "the naive loop saw only the first watch's events")
		// The change after the timeout is real; the naive loop just is not
		// there to see it.
		w2, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: startRV})
		require.NoError(t, err)
		defer w2.Stop()
		assert.Equal(t, before, describe(receive(t, w2.ResultChan())))
		assert.Equal(t, after, describe(receive(t, w2.ResultChan())), "missed by the naive loop")
	})
}

// Version 2: `if !ok { log.Error("Watcher channel closed"); continue }`. A
// receive from a closed channel never blocks, so after the server's
// timeout the loop spins, "receiving" nothing as fast as the CPU allows,
// and still misses every later change. We count its iterations in a
// bounded window after the close.
func TestArticleContinueLoopSpins(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv, cms := articleServer(t, tk)
		ctx := testContext(t)
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: listResourceVersion(t, cms)})
		require.NoError(t, err)
		defer w.Stop()
		wr := newWriter(t, ctx, cms)
		before, ok := wr.step("default")
		require.True(t, ok)

		// The loop is proven to spin by what it does, not by how fast: it
		// must come back to the closed channel spins times, and go on doing
		// so while a later change is written, without ever seeing it. A loop
		// that blocked would stop at one receive and hit the deadline; how
		// many receives a second a busy machine manages does not matter.
		const spins = 10_000
		lateWrite := make(chan struct{})
		var (
			seen           []string
			closedReceives int
			spinStart      time.Time
			deadline       = time.After(waitLong)
		)
	loop:
		for {
			select {
			case e, ok := <-w.ResultChan():
				if !ok {
					if closedReceives == 0 {
						spinStart = time.Now()
						// A change the spinning loop will never see.
						go func() {
							defer close(lateWrite)
							wr.step("default")
						}()
					}
					closedReceives++ // log.Error("Watcher channel closed")
					if closedReceives >= spins && isClosed(lateWrite) {
						break loop
					}
					continue
				}
				seen = append(seen, describe(e))
				// Half an hour passes: the server's timeout ends the watch.
				srv.Faults().ExpireWatches()
			case <-deadline:
				require.FailNow(t, "the loop stopped spinning, or the server never ended the watch",
					"%d receives from the closed channel", closedReceives)
			}
		}
		assert.Equal(t, []string{before}, seen, "spinning, the loop saw nothing new")
		assert.GreaterOrEqual(t, closedReceives, spins, "the continue loop explodes into a busy spin")
		t.Logf("%d receives from a closed channel in %v", closedReceives, time.Since(spinStart))
	})
}

// The fix the article arrives at, by hand: when the channel closes, watch
// again from the resourceVersion of the last event (or BOOKMARK) seen. The
// server replays exactly what happened after it, so across several server
// timeouts and a killed connection every event arrives once, in order.
func TestArticleReWatchLoopSeesEveryEvent(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv, cms := articleServer(t, tk)
		everyEventAcrossDisruptions(t, srv, cms, func(ctx context.Context, startRV string) (<-chan api.Event, func() int64) {
			out := make(chan api.Event)
			var watches atomic.Int64
			var wg sync.WaitGroup
			t.Cleanup(wg.Wait) // runs after ctx is cancelled
			wg.Go(func() {
				defer close(out)
				reWatchLoop(ctx, cms, startRV, out, &watches)
			})
			return out, watches.Load
		})
	})
}

// reWatchLoop is the hand-written fix: watch, and when the channel closes,
// watch again from the last resourceVersion seen. It forwards events to
// out until ctx is done.
func reWatchLoop(ctx context.Context, cms *client.ResourceClient, rv string, out chan<- api.Event, watches *atomic.Int64) {
	for ctx.Err() == nil {
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			// The server may be briefly unreachable; try again shortly.
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		watches.Add(1)
		for ev := range w.ResultChan() {
			if ev.Type == api.Error {
				// A 410 would need a re-list; this loop does not do that
				// (the Reflector does). Hand it on and give up.
				select {
				case out <- ev:
				case <-ctx.Done():
				}
				w.Stop()
				return
			}
			rv = ev.Object.Metadata.ResourceVersion
			if ev.Type == api.Bookmark {
				continue
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				w.Stop()
				return
			}
		}
		w.Stop()
	}
}

// The library fix: client-go's RetryWatcher (ours: client.RetryWatcher)
// does what reWatchLoop does, plus a minimum delay between attempts and
// the handling of ERROR events.
func TestArticleRetryWatcherSeesEveryEvent(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv, cms := articleServer(t, tk)
		everyEventAcrossDisruptions(t, srv, cms, func(ctx context.Context, startRV string) (<-chan api.Event, func() int64) {
			g := newGate(cms)
			rw, err := client.NewRetryWatcher(ctx, startRV, g, client.RetryWatcherOptions{})
			require.NoError(t, err)
			t.Cleanup(func() {
				rw.Stop()
				<-rw.Done()
			})
			return rw.ResultChan(), g.watches.Load
		})
	})
}

// everyEventAcrossDisruptions writes a steady stream of changes while the
// server ends the consumer's watch three times (its timeout, expired by the
// fault) and then kills the connection, and checks that the consumer
// received exactly what was written: nothing missing, nothing twice, in
// order. start starts the consumer from a resourceVersion and returns its
// events and a count of the watches it has opened.
func everyEventAcrossDisruptions(t *testing.T, srv *apiserver.Server, cms *client.ResourceClient,
	start func(ctx context.Context, startRV string) (<-chan api.Event, func() int64),
) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events, watches := start(ctx, listResourceVersion(t, cms))

	wr := newWriter(t, ctx, cms)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { wr.runUntil(stop, "default", 15*time.Millisecond) })
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}()

	// The consumer must keep up while we wait, or the server would close
	// its watch for being too slow (another disruption, but not the one
	// under test): receive in the background.
	var (
		mu  sync.Mutex
		got []string
	)
	recvDone := make(chan struct{})
	defer func() {
		cancel() // stops the consumer, which closes events
		<-recvDone
	}()
	go func() {
		defer close(recvDone)
		for ev := range events {
			mu.Lock()
			got = append(got, describe(ev))
			mu.Unlock()
		}
	}()
	received := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}

	// Three server timeouts, each while changes are being written: the
	// first watch plus three re-watches.
	require.Eventually(t, func() bool { return watches() >= 1 }, waitLong, tick, "the consumer never watched")
	for range 3 {
		n := len(wr.events())
		require.Eventually(t, func() bool { return len(wr.events()) > n }, waitLong, tick, "no change written")
		expireOnce(t, srv, watches)
	}
	// A connection killed mid-stream (the article's tcpkill).
	before := watches()
	require.Eventually(t, func() bool { return srv.Faults().KillWatchConnections() > 0 }, waitLong, tick,
		"no watch connection to kill")
	require.Eventually(t, func() bool { return watches() > before }, waitLong, tick, "no re-watch after the kill")
	// A few more changes on the new watch, then stop writing.
	n := len(wr.events())
	require.Eventually(t, func() bool { return len(wr.events()) >= n+5 }, waitLong, tick)
	close(stop)
	wg.Wait()

	want := wr.events()
	require.Eventually(t, func() bool { return len(received()) >= len(want) }, waitLong, tick,
		"the consumer received %d of %d events", len(received()), len(want))
	assert.Equal(t, want, received(), "every event exactly once, in order")
	t.Logf("%d events over %d watches", len(want), watches())
}

// isClosed reports, without blocking, whether ch has been closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

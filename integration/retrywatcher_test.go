package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
)

// startRetryWatcher starts a RetryWatcher through g from rv and stops it
// (waiting until it has) when the test ends.
func startRetryWatcher(t *testing.T, ctx context.Context, rv string, g *gate, opts client.RetryWatcherOptions) *client.RetryWatcher {
	t.Helper()
	rw, err := client.NewRetryWatcher(ctx, rv, g, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		rw.Stop()
		select {
		case <-rw.Done():
		case <-time.After(waitLong):
			t.Error("RetryWatcher did not stop")
		}
	})
	return rw
}

// The RetryWatcher delivers N events across several forced reconnects
// (server-side kills, each followed at once by writes the dead connection
// cannot carry) with no gap and no duplicate, and every attempt after the
// first resumes at exactly the resourceVersion of the last event it
// delivered.
func TestRetryWatcherAcrossForcedReconnects(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv := startServer(t, apiserver.Config{})
		cms := newClient(t, srv, client.Config{Transport: tk}).Resource(configMaps).Namespace("default")
		ctx := testContext(t)
		startRV := listResourceVersion(t, cms)
		g := newGate(cms)
		rw := startRetryWatcher(t, ctx, startRV, g, client.RetryWatcherOptions{MinRestartDelay: 20 * time.Millisecond})
		wr := newWriter(t, ctx, cms)

		var got []string
		rvAfter := map[string]bool{startRV: true} // resourceVersions a watch may resume from
		take := func(n int) {
			for range n {
				ev := receive(t, rw.ResultChan())
				got = append(got, describe(ev))
				rvAfter[ev.Object.Metadata.ResourceVersion] = true
			}
		}
		const reconnects = 4
		for range reconnects {
			for range 10 {
				_, ok := wr.step("default")
				require.True(t, ok)
			}
			take(10)
			before := g.watches.Load()
			require.Eventually(t, func() bool { return srv.Faults().KillWatchConnections() > 0 }, waitLong, tick)
			// Written while the RetryWatcher is (most likely) reconnecting.
			for range 5 {
				_, ok := wr.step("default")
				require.True(t, ok)
			}
			take(5)
			g.waitWatches(t, before, "a killed connection")
		}
		assert.Equal(t, wr.events(), got, "every event exactly once, in order")
		assert.GreaterOrEqual(t, g.watches.Load(), int64(reconnects+1))

		g.mu.Lock()
		watchRVs := append([]string(nil), g.watchRV...)
		g.mu.Unlock()
		assert.Equal(t, startRV, watchRVs[0])
		prev := int64(0)
		for _, rv := range watchRVs {
			assert.True(t, rvAfter[rv], "watch from %s: not the resourceVersion of a delivered event", rv)
			n, err := strconv.ParseInt(rv, 10, 64)
			require.NoError(t, err)
			assert.Greater(t, n, prev, "attempts never go back in time: %v", watchRVs)
			prev = n
		}
	})
}

// A RetryWatcher cannot promise continuity from a resourceVersion whose
// history the server no longer has: on the in-stream 410 Expired it hands
// the ERROR event on and stops (the caller must list again). Three ways to
// lose the history: start from a resourceVersion older than the watch
// cache's window; fall behind while disconnected until the window has moved
// past the resourceVersion; or have it compacted while disconnected
// (Faults.CompactNow: "from then on a watch from an older revision ... gets
// 410 Expired").
func TestRetryWatcherStopsOn410(t *testing.T) {
	const history = 50 // the watch cache's window, in events
	cases := []struct {
		name string
		// lose runs while the RetryWatcher is cut off from the server.
		lose func(t *testing.T, srv *apiserver.Server, wr *writer)
		// fromStart: the history is lost before the RetryWatcher starts.
		fromStart bool
		// contract is what promises the 410, quoted on failure.
		contract string
	}{
		{
			name:      "started from a resourceVersion older than the window",
			fromStart: true,
			contract:  "a watch from before the watch cache's oldest event gets 410 (cacher.WatchOptions)",
			lose: func(t *testing.T, _ *apiserver.Server, wr *writer) {
				for range history + 5 {
					wr.step("default")
				}
			},
		},
		{
			name:     "window overflowed while disconnected",
			contract: "a watch from before the watch cache's oldest event gets 410 (cacher.WatchOptions)",
			lose: func(t *testing.T, _ *apiserver.Server, wr *writer) {
				for range history + 5 {
					wr.step("default")
				}
			},
		},
		{
			name: "compacted while disconnected",
			contract: "apiserver.Faults.CompactNow: \"from then on a watch from an older revision " +
				"or a continue token issued before gets 410 Expired\"",
			lose: func(t *testing.T, srv *apiserver.Server, wr *writer) {
				for range 5 {
					wr.step("default")
				}
				srv.Faults().CompactNow()
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
				srv := startServer(t, apiserver.Config{HistorySize: history})
				cms := newClient(t, srv, client.Config{Transport: tk}).Resource(configMaps).Namespace("default")
				ctx := testContext(t)
				wr := newWriter(t, ctx, cms)
				g := newGate(cms)
				startRV := listResourceVersion(t, cms)

				var rw *client.RetryWatcher
				if tc.fromStart {
					tc.lose(t, srv, wr)
					// The watch cache applies the store's events a moment
					// after they happen; until it has, its window still
					// holds startRV.
					waitCacheCaughtUp(t, srv)
					rw = startRetryWatcher(t, ctx, startRV, g, client.RetryWatcherOptions{MinRestartDelay: 20 * time.Millisecond})
				} else {
					rw = startRetryWatcher(t, ctx, startRV, g, client.RetryWatcherOptions{MinRestartDelay: 20 * time.Millisecond})
					first, ok := wr.step("default")
					require.True(t, ok)
					require.Equal(t, first, describe(receive(t, rw.ResultChan())))
					// Cut it off: close the gate, then break its connection;
					// its next attempt is refused.
					g.partition()
					require.Eventually(t, func() bool { return srv.Faults().KillWatchConnections() > 0 }, waitLong, tick)
					g.waitRefused(t)
					tc.lose(t, srv, wr)
					waitCacheCaughtUp(t, srv)
					g.heal()
				}

				ev := receive(t, rw.ResultChan())
				require.Equal(t, api.Error, ev.Type, "got %s; expected 410 because %s", describe(ev), tc.contract)
				require.NotNil(t, ev.Status)
				assert.Equal(t, int32(410), ev.Status.Code)
				assert.Equal(t, api.ReasonExpired, ev.Status.Reason)
				select {
				case _, ok := <-rw.ResultChan():
					assert.False(t, ok, "nothing after the 410: the channel closes")
				case <-time.After(waitLong):
					t.Fatal("the RetryWatcher kept going after a 410")
				}
				select {
				case <-rw.Done():
				case <-time.After(waitLong):
					t.Fatal("Done not closed after the 410")
				}
			})
		})
	}
}

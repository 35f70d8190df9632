package client

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The first article (cited in docs/articles.md), replayed
// against a server whose watches end after two events, the way a real
// server's timeout ends them after 30-60 minutes. (The same story against
// our apiserver over real sockets lives in the integration tests.)

// timingOutServer serves a history of events, two per watch, from the
// requested resourceVersion, then ends the response.
func timingOutServer(t *testing.T, history []api.Event) (srvURL string, requests func() []string, stop func()) {
	var mu sync.Mutex
	var rvs []string
	srv := newScriptedServer(t, func(s stream, r *http.Request) {
		from := r.URL.Query().Get("resourceVersion")
		mu.Lock()
		rvs = append(rvs, from)
		mu.Unlock()
		n, _ := strconv.Atoi(from)
		sent := 0
		for _, ev := range history {
			if rv, _ := strconv.Atoi(ev.Object.Metadata.ResourceVersion); rv > n && sent < 2 {
				s.Send(eventLine(t, ev))
				sent++
			}
		}
		if sent == 0 {
			s.Stall()
		}
	})
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), rvs...)
	}, srv.Close
}

func articleHistory() []api.Event {
	var h []api.Event
	for rv := 11; rv <= 16; rv++ {
		h = append(h, cm(api.Modified, "demo", strconv.Itoa(rv)))
	}
	return h
}

// Version 1: `if !ok { return }`. The loop sees the first watch's events
// and then returns for good: everything after the server's timeout is
// missed.
func TestArticleNaiveLoopStopsAtServerTimeout(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		host, _, stop := timingOutServer(t, articleHistory())
		defer stop()
		c, err := New(Config{Host: host, Transport: tk})
		require.NoError(t, err)
		w, err := c.Resource(configMaps).Namespace("ns").Watch(context.Background(), api.ListOptions{ResourceVersion: "10"})
		require.NoError(t, err)
		defer w.Stop()

		seen := 0
		for {
			_, ok := <-w.ResultChan()
			if !ok {
				break // "Watcher channel closed", and the handler is gone
			}
			seen++
		}
		assert.Equal(t, 2, seen, "only the first watch's events; four were missed")
	})
}

// Version 2: `if !ok { continue }`. Receiving from a closed channel never
// blocks, so the loop spins: it "receives" zero events as fast as the CPU
// allows, logging "Watcher channel closed" each time, and still gets
// nothing new.
func TestArticleContinueLoopSpins(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		host, _, stop := timingOutServer(t, articleHistory())
		defer stop()
		c, err := New(Config{Host: host, Transport: tk})
		require.NoError(t, err)
		w, err := c.Resource(configMaps).Namespace("ns").Watch(context.Background(), api.ListOptions{ResourceVersion: "10"})
		require.NoError(t, err)
		defer w.Stop()

		// The events, until the channel closes.
		seen := 0
		for range w.ResultChan() {
			seen++
		}
		assert.Equal(t, 2, seen)
		// Then the loop spins. That no receive ever waits is shown
		// structurally, not by counting receives in a time window (which a
		// busy machine would shrink): a select with a default case takes
		// the default only when no other case is ready, and a closed
		// channel is ready every time.
		const spins = 100_000
		for i := range spins {
			select {
			case _, ok := <-w.ResultChan():
				require.False(t, ok, "an event after the close")
				// log.Errorf("Watcher channel closed"), then continue
			default:
				t.Fatalf("receive %d would have waited: the loop would block, not spin", i)
			}
		}
		t.Logf("%d receives from a closed channel, none of which waited", spins)
	})
}

// The fix: on a closed channel, watch again from the last resourceVersion
// seen. Every event arrives once, across every server timeout.
func TestArticleReWatchLoopSeesEverything(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		history := articleHistory()
		host, requests, stop := timingOutServer(t, history)
		defer stop()
		c, err := New(Config{Host: host, Transport: tk})
		require.NoError(t, err)
		cms := c.Resource(configMaps).Namespace("ns")

		lastRV := "10"
		var got []api.Event
		for len(got) < len(history) {
			w, err := cms.Watch(context.Background(), api.ListOptions{ResourceVersion: lastRV, AllowWatchBookmarks: true})
			require.NoError(t, err)
			for ev := range w.ResultChan() {
				got = append(got, ev)
				lastRV = ev.Object.Metadata.ResourceVersion
			}
			w.Stop()
		}
		assert.Equal(t, history, got)
		assert.Equal(t, []string{"10", "12", "14"}, requests(), "three watches, each from where the last ended")
	})
}

package integration

// Our client against our server over TLS and HTTP/2, as a client-go
// program talks to a real cluster: every watch of the client a stream of
// one TCP connection, and a connection that stops answering found by the
// HTTP/2 PING health check, its watches resumed without a re-list.

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/apiserver/watchserver"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
)

// newHTTP2Client is a client of a TLS server with the client's own
// transport: HTTP/2 by ALPN, with the health check cfg asks for.
func newHTTP2Client(t testing.TB, srv *apiserver.Server, cfg client.Config) *client.Client {
	t.Helper()
	cfg.Host, cfg.CAData = srv.URL(), srv.CACertificate()
	c, err := client.New(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// serverView is the part of the server's debug view these tests read.
type serverView struct {
	Connections struct {
		Open  int `json:"open"`
		HTTP2 int `json:"http2"`
	} `json:"connections"`
	Watches []watchserver.WatchInfo `json:"watches"`
}

// serverDebugView reads the server's debug view over a connection of its own
// (HTTP/1.1, so it is not one of the HTTP/2 connections being counted).
func serverDebugView(t testing.TB, srv *apiserver.Server) serverView {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(srv.CACertificate()))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL() + "/debug/listwatch")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v serverView
	require.NoError(t, json.Unmarshal(b, &v))
	return v
}

// connectionsOf are the ids of the connections carrying watches of
// resource, with how many each carries, and the transports used.
func connectionsOf(v serverView, resource string) (map[int64]int, map[string]bool) {
	conns, transports := map[int64]int{}, map[string]bool{}
	for _, w := range v.Watches {
		if w.Resource == resource {
			conns[w.Connection]++
			transports[w.Transport] = true
		}
	}
	return conns, transports
}

// 100 watches from one client are 100 streams of one connection (the
// server allows 100 per connection), and every one of them gets each event.
func TestHTTP2HundredWatchesShareOneConnection(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{SelfSignedTLS: true})
	c := newHTTP2Client(t, srv, client.Config{})
	cms := c.Resource(configMaps).Namespace("default")
	ctx := testContext(t)
	rv := listResourceVersion(t, cms)

	const n = 100
	watchers := make([]client.Watcher, n)
	for i := range watchers {
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: rv})
		require.NoError(t, err)
		watchers[i] = w
		defer w.Stop()
	}
	v := serverDebugView(t, srv)
	conns, transports := connectionsOf(v, "configmaps")
	assert.Len(t, conns, 1, "one connection carries every watch: %v", conns)
	assert.Equal(t, map[string]bool{watchserver.TransportH2Stream: true}, transports)
	assert.Equal(t, 1, v.Connections.HTTP2)

	created, err := cms.Create(ctx, configMap("default", "x", "1"))
	require.NoError(t, err)
	for i, w := range watchers {
		ev := receive(t, w.ResultChan())
		require.Equal(t, describe(api.Event{Type: api.Added, Object: created}), describe(ev), "watch %d", i)
	}
}

// The stall fault freezes the server side of the HTTP/2 connection: no
// event, no answer to a PING. The client's health check finds it within
// ReadIdleTimeout + PingTimeout and closes it; every informer's watch on
// it ends like a dropped connection and resumes from its last
// resourceVersion on a new connection, without a re-list, and nothing
// written meanwhile is lost. Without the health check nothing would end
// these watches for half an hour (no IdleWatchTimeout, the server's
// default watch timeout).
//
// The stall is deterministic (the server stops writing on the frozen
// connection), so the only timeout here is the health check's own:
// PingTimeout is long enough that a busy machine answering a PING late on
// a healthy connection does not trip it, only the frozen connection does.
// The server lets go of the stalled watches only after the client has
// closed their connection, at its own pace, so the test waits for that
// before it reads where the watches are.
func TestHTTP2HealthCheckRecoversStalledWatches(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{SelfSignedTLS: true})
	const readIdle, pingTimeout = 300 * time.Millisecond, 4 * time.Second
	c := newHTTP2Client(t, srv, client.Config{HTTP2ReadIdleTimeout: readIdle, HTTP2PingTimeout: pingTimeout})
	cms := c.Resource(configMaps).Namespace("default")
	ctx := testContext(t)

	const informers = 5
	gates := make([]*gate, informers)
	mirrors := make([]*mirror, informers)
	for i := range informers {
		gates[i], mirrors[i] = newGate(cms), newMirror()
		m := mirrors[i]
		// Long watches: only the health check can end them in this test.
		startInformer(t, gates[i], informer.Options{Reflector: fastReflector(time.Hour)},
			func(inf *informer.SharedIndexInformer) { _, _ = inf.AddEventHandler(m.handler()) })
	}
	// The writes and reads come from another client (another connection):
	// a request of this client would wait on the frozen connection with
	// the watches until the health check gives up on it.
	other := newHTTP2Client(t, srv, client.Config{}).Resource(configMaps).Namespace("default")
	wr := newWriter(t, ctx, other)
	for range 5 {
		_, ok := wr.step("default")
		require.True(t, ok)
	}
	converged := func() bool {
		want := serverState(t, other)
		for _, m := range mirrors {
			if !mapsEqual(m.state(), want) {
				return false
			}
		}
		return true
	}
	require.Eventually(t, converged, waitLong, tick)
	before, _ := connectionsOf(serverDebugView(t, srv), "configmaps")
	require.Len(t, before, 1)

	stalled := time.Now()
	srv.Faults().StallWatches() // freezes the watches' connection; the writer's carries no watch and is not frozen
	// Written while the watches' connection is frozen.
	for range 5 {
		_, ok := wr.step("default")
		require.True(t, ok)
	}
	require.Eventually(t, converged, waitLong, tick, "every informer catches up")
	recovered := time.Since(stalled)
	t.Logf("stalled HTTP/2 connection found and every watch resumed %v after the stall (ReadIdleTimeout %v + PingTimeout %v)",
		recovered.Round(time.Millisecond), readIdle, pingTimeout)

	// The informers caught up, so the client has closed the frozen
	// connection; the server unregisters its watches once their handlers
	// see the client gone, which may come later on a busy machine.
	onStalled := func(v serverView) int {
		conns, _ := connectionsOf(v, "configmaps")
		n := 0
		for id := range before {
			n += conns[id]
		}
		return n
	}
	require.Eventually(t, func() bool { return onStalled(serverDebugView(t, srv)) == 0 }, waitLong, tick,
		"the server let go of the watches of the stalled connection")
	after, transports := connectionsOf(serverDebugView(t, srv), "configmaps")
	require.NotEmpty(t, after, "the watches resumed")
	for id := range after {
		assert.NotContains(t, before, id, "the watches moved to a new connection")
	}
	assert.Equal(t, map[string]bool{watchserver.TransportH2Stream: true}, transports)
	for i, g := range gates {
		assert.Equal(t, int64(1), g.lists.Load(), "informer %d re-watched without a re-list", i)
		assert.GreaterOrEqual(t, g.watches.Load(), int64(2), "informer %d watched again", i)
	}
}

// With HTTP/2 turned off the same client speaks HTTP/1.1 over TLS: one
// connection per watch, chunked.
func TestHTTP1OverTLSStillWorks(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{SelfSignedTLS: true})
	c := newHTTP2Client(t, srv, client.Config{DisableHTTP2: true})
	cms := c.Resource(configMaps).Namespace("default")
	ctx := testContext(t)
	rv := listResourceVersion(t, cms)
	var watchers []client.Watcher
	for range 3 {
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: rv})
		require.NoError(t, err)
		defer w.Stop()
		watchers = append(watchers, w)
	}
	v := serverDebugView(t, srv)
	conns, transports := connectionsOf(v, "configmaps")
	assert.Len(t, conns, 3, "a connection per watch")
	assert.Equal(t, map[string]bool{watchserver.TransportH1Chunked: true}, transports)
	assert.Zero(t, v.Connections.HTTP2)
	created, err := cms.Create(ctx, configMap("default", "x", "1"))
	require.NoError(t, err)
	for _, w := range watchers {
		assert.Equal(t, describe(api.Event{Type: api.Added, Object: created}), describe(receive(t, w.ResultChan())))
	}
}

// mapsEqual compares two key → resourceVersion maps.
func mapsEqual(a, b map[string]string) bool { return maps.Equal(a, b) }

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/leakcheck"
)

// The resources the tests use.
var (
	configMaps    = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespacesGVR = api.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// waitLong bounds every wait for something the pipeline must do by itself
// (deliver an event, re-watch, converge). It only turns a hang into a
// failure, so it is generous: -race on two busy cores is slow, and a
// passing run never waits that long.
const waitLong = 2 * time.Minute

// tick is how often an Eventually condition is polled.
const tick = 10 * time.Millisecond

// forEachTransport runs fn once per watch transport: the chunked HTTP
// stream client-go uses, and the websocket one. The semantics must not
// differ, so every watch test runs both. Each run gets its own leak check.
func forEachTransport(t *testing.T, fn func(t *testing.T, tk client.TransportKind)) {
	t.Helper()
	for _, tk := range []client.TransportKind{client.TransportHTTP, client.TransportWebSocket} {
		t.Run(tk.String(), func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			fn(t, tk)
		})
	}
}

// startServer starts an apiserver on a free loopback port with the fault
// switches on, and stops it (checking that it stopped cleanly) when the
// test ends. Register it after the leak check and before any client, so
// that clients stop first and the leak check runs last.
func startServer(t testing.TB, cfg apiserver.Config) *apiserver.Server {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	cfg.EnableFaults = true
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	srv, err := apiserver.Start(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		assert.NoError(t, srv.Stop(ctx), "apiserver Stop")
	})
	return srv
}

// newClient returns a client of srv. It gets its own connection pool,
// whose idle keep-alive connections (each holds two goroutines) are closed
// when the test ends, so the leak check sees only what the code under test
// left behind.
func newClient(t testing.TB, srv *apiserver.Server, cfg client.Config) *client.Client {
	t.Helper()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	cfg.Host = srv.URL()
	cfg.HTTPClient = &http.Client{Transport: transport}
	c, err := client.New(cfg)
	require.NoError(t, err)
	t.Cleanup(transport.CloseIdleConnections)
	return c
}

// testContext is cancelled when the test ends (before the cleanups that
// stop servers run, since it is registered later).
func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// configMap builds a ConfigMap with one data entry.
func configMap(ns, name, value string) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
	data, err := json.Marshal(map[string]string{"value": value})
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	if err := o.Set("data", data); err != nil {
		panic(err)
	}
	return o
}

// createNamespaces creates the namespaces the test writes into.
func createNamespaces(t testing.TB, c *client.Client, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	for _, n := range names {
		ns := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: n}}
		_, err := c.Resource(namespacesGVR).Create(ctx, ns)
		require.NoError(t, err, "creating namespace %s", n)
	}
}

// describe is how tests compare events: type, key and resourceVersion.
// Two events that describe the same are the same change.
func describe(ev api.Event) string {
	switch {
	case ev.Type == api.Error && ev.Status != nil:
		return fmt.Sprintf("ERROR %d %s", ev.Status.Code, ev.Status.Reason)
	case ev.Object == nil:
		return string(ev.Type) + " <no object>"
	}
	return fmt.Sprintf("%s %s rv=%s", ev.Type, ev.Object.Key(), ev.Object.Metadata.ResourceVersion)
}

// receive takes the next event from ch, failing the test if none comes
// within waitLong or if ch is closed.
func receive(t testing.TB, ch <-chan api.Event) api.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		require.True(t, ok, "channel closed while an event was expected")
		return ev
	case <-time.After(waitLong):
		require.FailNow(t, "no event within "+waitLong.String())
	}
	return api.Event{}
}

// listResourceVersion lists the collection and returns the list's
// resourceVersion, the place to start a watch with no gap.
func listResourceVersion(t testing.TB, rc *client.ResourceClient) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	l, err := rc.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, l.Metadata.ResourceVersion)
	return l.Metadata.ResourceVersion
}

// serverState is the server's current state as key → resourceVersion, from
// a consistent list (resourceVersion "").
func serverState(t testing.TB, rc *client.ResourceClient) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	l, err := rc.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	return stateOf(l.Items)
}

func stateOf(objs []*api.Object) map[string]string {
	m := make(map[string]string, len(objs))
	for _, o := range objs {
		m[o.Key()] = o.Metadata.ResourceVersion
	}
	return m
}

// writer makes changes through the REST API and records what it wrote,
// as the events a watcher must see: "ADDED ns/name rv=N".
type writer struct {
	t   testing.TB
	rc  *client.ResourceClient
	ctx context.Context

	mu      sync.Mutex
	written []string
	objs    map[string]*api.Object // name → last written state (one namespace)
	seq     int
}

func newWriter(t testing.TB, ctx context.Context, rc *client.ResourceClient) *writer {
	return &writer{t: t, rc: rc, ctx: ctx, objs: map[string]*api.Object{}}
}

// step creates a ConfigMap or updates one, alternately, and returns the
// event a watcher will see. Errors are reported with t.Errorf (step may
// run on a goroutine other than the test's).
func (w *writer) step(ns string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	var (
		got *api.Object
		err error
		typ = api.Added
	)
	name := "cm-" + strconv.Itoa((w.seq+1)/2)
	if prev, ok := w.objs[name]; ok {
		typ = api.Modified
		next := prev.DeepCopy()
		if err := next.Set("data", json.RawMessage(`{"value":"v`+strconv.Itoa(w.seq)+`"}`)); err != nil {
			w.t.Errorf("set data: %v", err)
			return "", false
		}
		got, err = w.rc.Update(w.ctx, next)
	} else {
		got, err = w.rc.Create(w.ctx, configMap(ns, name, "v"+strconv.Itoa(w.seq)))
	}
	if err != nil {
		if w.ctx.Err() == nil {
			w.t.Errorf("write %s: %v", name, err)
		}
		return "", false
	}
	w.objs[name] = got
	ev := describe(api.Event{Type: typ, Object: got})
	w.written = append(w.written, ev)
	return ev, true
}

// events returns what was written so far.
func (w *writer) events() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.written...)
}

// runUntil writes one step every interval until stop is closed, then
// returns. Pacing spreads the writes over the disruptions a test causes;
// it is not what any assertion relies on.
func (w *writer) runUntil(stop <-chan struct{}, ns string, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-w.ctx.Done():
			return
		case <-t.C:
			w.step(ns)
		}
	}
}

// gate stands between a client and the server like a network that can be
// partitioned: while it is closed, every List and Watch fails at once with
// "connection refused", as if the apiserver were unreachable. It also
// counts the calls that get through, which is how tests see a re-watch
// happen; a watch-list counts as a watch and as a list. It wraps anything that lists and watches (a ResourceClient).
type gate struct {
	lw interface {
		List(ctx context.Context, opts api.ListOptions) (*api.List, error)
		Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error)
	}

	closed  atomic.Bool
	lists   atomic.Int64
	watches atomic.Int64
	// refused gets a value (without blocking) each time a call is refused.
	refused chan struct{}

	mu      sync.Mutex
	watchRV []string // the resourceVersion of every watch let through
}

func newGate(lw interface {
	List(ctx context.Context, opts api.ListOptions) (*api.List, error)
	Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error)
}) *gate {
	return &gate{lw: lw, refused: make(chan struct{}, 1)}
}

// errPartitioned wraps ECONNREFUSED so the client side treats it as the
// apiserver being unreachable.
var errPartitioned = fmt.Errorf("test network partition: %w", syscall.ECONNREFUSED)

func (g *gate) refuse() error {
	select {
	case g.refused <- struct{}{}:
	default:
	}
	return errPartitioned
}

// List implements reflector.ListerWatcher.
func (g *gate) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	if g.closed.Load() {
		return nil, g.refuse()
	}
	g.lists.Add(1)
	return g.lw.List(ctx, opts)
}

// Watch implements reflector.ListerWatcher and client.WatcherFactory.
func (g *gate) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	if g.closed.Load() {
		return nil, g.refuse()
	}
	g.watches.Add(1)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		g.lists.Add(1) // a watch-list fetches the whole state: a (re-)list
	}
	g.mu.Lock()
	g.watchRV = append(g.watchRV, opts.ResourceVersion)
	g.mu.Unlock()
	return g.lw.Watch(ctx, opts)
}

// partition closes the gate and drains a stale refusal signal.
func (g *gate) partition() {
	select {
	case <-g.refused:
	default:
	}
	g.closed.Store(true)
}

// heal opens the gate again.
func (g *gate) heal() { g.closed.Store(false) }

// waitRefused waits until a call has been refused since partition: from
// then on the client is certainly disconnected.
func (g *gate) waitRefused(t testing.TB) {
	t.Helper()
	select {
	case <-g.refused:
	case <-time.After(waitLong):
		require.FailNow(t, "the client never tried to reconnect through the partition")
	}
}

// waitWatches waits until more than n watches have been let through.
func (g *gate) waitWatches(t testing.TB, n int64, why string) {
	t.Helper()
	require.Eventually(t, func() bool { return g.watches.Load() > n }, waitLong, tick,
		"no new watch after %s (watches: %d)", why, g.watches.Load())
}

// debugView is the part of the apiserver's GET /debug/listwatch the tests
// read.
type debugView struct {
	StoreRevision int64 `json:"storeRevision"`
	ClosedTooSlow int64 `json:"closedTooSlow"`
	Caches        []struct {
		Resource string `json:"resource"`
		Revision int64  `json:"revision"`
	} `json:"watchCaches"`
}

// fetchDebugView reads the server's debug view over HTTP, as a learner
// would with curl.
func fetchDebugView(tb testing.TB, srv *apiserver.Server) debugView {
	tb.Helper()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	resp, err := (&http.Client{Transport: transport, Timeout: waitLong}).Get(srv.URL() + "/debug/listwatch")
	require.NoError(tb, err)
	defer resp.Body.Close()
	require.Equal(tb, http.StatusOK, resp.StatusCode)
	var v debugView
	require.NoError(tb, json.NewDecoder(resp.Body).Decode(&v))
	return v
}

// cacheRevision is the revision the watch cache of resource has applied.
func (v debugView) cacheRevision(resource string) int64 {
	for _, c := range v.Caches {
		if c.Resource == resource {
			return c.Revision
		}
	}
	return -1
}

// waitCacheCaughtUp waits until the configmaps watch cache has applied
// everything in the store, so that a list at resourceVersion 0 (served
// from the cache) is complete and the server's heap has stopped growing.
func waitCacheCaughtUp(tb testing.TB, srv *apiserver.Server) {
	tb.Helper()
	require.Eventually(tb, func() bool {
		v := fetchDebugView(tb, srv)
		return v.cacheRevision("configmaps") >= storeRevision(srv)
	}, waitLong, tick, "the configmaps watch cache did not catch up with the store")
}

// storeRevision is the current revision of srv's store (0 if it cannot
// say, which the caller's bounded wait then reports).
func storeRevision(srv *apiserver.Server) int64 {
	rev, err := srv.Store().CurrentRevision(context.Background())
	if err != nil {
		return 0
	}
	return rev
}

// newRand is a deterministic random source per test, so a failure can be
// replayed.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

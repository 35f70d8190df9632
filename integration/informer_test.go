package integration

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/fifo"
	"listwatch/informer"
	"listwatch/internal/leakcheck"
	"listwatch/narrate"
	"listwatch/reflector"
)

// fastReflector makes an informer's Reflector ask for watches of
// watchTimeout (the server ends them then) and back off briefly, so a test
// sees several re-watches and recoveries in seconds.
func fastReflector(watchTimeout time.Duration) reflector.Options {
	return reflector.Options{
		MinWatchTimeout: watchTimeout,
		MaxWatchTimeout: watchTimeout,
		Backoff:         reflector.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond},
	}
}

// startInformer builds an informer over lw, lets setup register handlers
// (before Run, as a controller does), runs it, and waits for it to sync.
// When the test ends it stops the informer and waits for Run to return.
func startInformer(tb testing.TB, lw reflector.ListerWatcher, opts informer.Options, setup func(*informer.SharedIndexInformer)) *informer.SharedIndexInformer {
	tb.Helper()
	inf, stop := runInformer(tb, lw, opts, setup)
	tb.Cleanup(stop)
	return inf
}

// runInformer is startInformer without the cleanup: the caller stops the
// informer with stop, which returns once Run has.
func runInformer(tb testing.TB, lw reflector.ListerWatcher, opts informer.Options, setup func(*informer.SharedIndexInformer)) (inf *informer.SharedIndexInformer, stop func()) {
	tb.Helper()
	inf, err := informer.NewSharedIndexInformer(lw, opts)
	require.NoError(tb, err)
	if setup != nil {
		setup(inf)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ctx)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitLong):
			tb.Error("informer Run did not return after its context ended")
		}
	}
	select {
	case <-inf.Synced():
	case <-time.After(waitLong):
		stop()
		require.FailNow(tb, "informer did not sync")
	}
	return inf, stop
}

// mirror is a handler that rebuilds the server's state from nothing but
// the notifications it gets, and records the tombstones among them. If it
// ends up equal to the server, no notification was lost or misordered.
type mirror struct {
	mu         sync.Mutex
	objs       map[string]string // key → resourceVersion
	tombstones []string
}

func newMirror() *mirror { return &mirror{objs: map[string]string{}} }

func (m *mirror) handler() informer.ResourceEventHandler {
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, _ bool) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.objs[obj.Key()] = obj.Metadata.ResourceVersion
		},
		UpdateFunc: func(_, obj *api.Object) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.objs[obj.Key()] = obj.Metadata.ResourceVersion
		},
		DeleteFunc: func(obj any) {
			m.mu.Lock()
			defer m.mu.Unlock()
			switch o := obj.(type) {
			case *api.Object:
				delete(m.objs, o.Key())
			case fifo.DeletedFinalStateUnknown:
				m.tombstones = append(m.tombstones, o.Key)
				delete(m.objs, o.Key)
			default:
				m.objs["unexpected delete argument "+strconv.Quote(describeAny(obj))] = ""
			}
		},
	}
}

func describeAny(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func (m *mirror) state() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.objs)
}

func (m *mirror) tombstoned() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.tombstones)
}

// model makes random changes to ConfigMaps across several namespaces
// through the REST API, remembering what exists.
type model struct {
	t    *testing.T
	ctx  context.Context
	c    *client.Client
	nss  []string
	rng  *rand.Rand
	objs map[string]*api.Object // key → last written
	seq  int
	ops  int
}

func newModel(t *testing.T, c *client.Client, nss []string, seed uint64) *model {
	return &model{t: t, ctx: testContext(t), c: c, nss: nss, rng: newRand(seed), objs: map[string]*api.Object{}}
}

func (m *model) keys() []string { return slices.Sorted(maps.Keys(m.objs)) }

func (m *model) create() string {
	m.t.Helper()
	m.seq++
	ns := m.nss[m.rng.IntN(len(m.nss))]
	got, err := m.c.Resource(configMaps).Namespace(ns).Create(m.ctx, configMap(ns, "obj-"+strconv.Itoa(m.seq), "v0"))
	require.NoError(m.t, err)
	m.objs[got.Key()] = got
	m.ops++
	return got.Key()
}

func (m *model) update(key string) {
	m.t.Helper()
	m.seq++
	next := m.objs[key].DeepCopy()
	require.NoError(m.t, next.Set("data", json.RawMessage(`{"value":"v`+strconv.Itoa(m.seq)+`"}`)))
	got, err := m.c.Resource(configMaps).Namespace(next.Metadata.Namespace).Update(m.ctx, next)
	require.NoError(m.t, err)
	m.objs[key] = got
	m.ops++
}

func (m *model) delete(key string) {
	m.t.Helper()
	o := m.objs[key]
	require.NoError(m.t, m.c.Resource(configMaps).Namespace(o.Metadata.Namespace).Delete(m.ctx, o.Metadata.Name, client.DeleteOptions{}))
	delete(m.objs, key)
	m.ops++
}

// random makes n random changes: creates, updates and deletes.
func (m *model) random(n int) {
	m.t.Helper()
	for range n {
		keys := m.keys()
		switch r := m.rng.IntN(100); {
		case len(keys) < 5 || r < 40:
			m.create()
		case r < 75:
			m.update(keys[m.rng.IntN(len(keys))])
		default:
			m.delete(keys[m.rng.IntN(len(keys))])
		}
	}
}

// pick returns n distinct random existing keys.
func (m *model) pick(n int) []string {
	keys := m.keys()
	require.GreaterOrEqual(m.t, len(keys), n)
	for i := range n {
		j := i + m.rng.IntN(len(keys)-i)
		keys[i], keys[j] = keys[j], keys[i]
	}
	return keys[:n]
}

// requireConverged waits until the informer's cache and the mirror handler
// both hold exactly what the server lists now.
func requireConverged(t *testing.T, rc *client.ResourceClient, inf *informer.SharedIndexInformer, mir *mirror, when string) {
	t.Helper()
	want := serverState(t, rc)
	ok := assert.Eventually(t, func() bool {
		return maps.Equal(want, stateOf(inf.GetIndexer().List())) && maps.Equal(want, mir.state())
	}, waitLong, tick, "informer did not converge %s", when)
	if !ok {
		assert.Equal(t, want, stateOf(inf.GetIndexer().List()), "cache vs server %s", when)
		assert.Equal(t, want, mir.state(), "handler's view vs server %s", when)
		t.FailNow()
	}
}

// An informer's cache, and what its handler was told, end up equal to the
// server's state after a few hundred random creates, updates and deletes
// across four namespaces, while the server ends its watch every second,
// kills its connection, and finally loses the history it would need to
// resume (it was cut off while the watch cache's window moved on and the
// store was compacted). That last one forces a 410 and a re-list, and the
// re-list must report the deletes that happened while it was cut off as
// tombstones (DeletedFinalStateUnknown): for exactly those keys. All
// three queues, both ways of fetching the initial state, both transports.
func TestInformerConverges(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		// Every queue; the initial state streamed (watch-list, the
		// default) for the atomic queue and DeltaFIFO, listed for RealFIFO.
		for i, q := range informer.QueueKinds() {
			mode := reflector.WatchList
			if q == informer.RealFIFO {
				mode = reflector.ListThenWatch
			}
			// Each runs its own server and spends most of its time waiting
			// for watches to time out, so they run side by side; the leak
			// check is forEachTransport's, once all three have ended.
			t.Run(string(q)+"/"+string(mode), func(t *testing.T) {
				t.Parallel()
				testInformerConverges(t, tk, q, mode, uint64(i+1))
			})
		}
	})
}

func testInformerConverges(t *testing.T, tk client.TransportKind, q informer.QueueKind, mode reflector.InitialListMode, seed uint64) {
	const history = 100 // the watch cache's window, in events
	srv := startServer(t, apiserver.Config{HistorySize: history})
	c := newClient(t, srv, client.Config{Transport: tk})
	nss := []string{"ns-a", "ns-b", "ns-c", "ns-d"}
	createNamespaces(t, c, nss...)
	all := c.Resource(configMaps)
	m := newModel(t, c, nss, seed)
	for range 40 { // what the first list finds
		m.create()
	}

	g := newGate(all)
	mir := newMirror()
	var expired atomic.Int64
	ropts := fastReflector(time.Second)
	ropts.InitialList = mode
	inf := startInformer(t, g, informer.Options{Queue: q, Reflector: ropts}, func(inf *informer.SharedIndexInformer) {
		_, err := inf.AddEventHandler(mir.handler())
		require.NoError(t, err)
		require.NoError(t, inf.SetWatchErrorHandler(func(_ *reflector.Reflector, err error) {
			if api.IsResourceExpired(err) || api.IsGone(err) {
				expired.Add(1)
			}
		}))
	})
	requireConverged(t, all, inf, mir, "after the initial list")

	// 1. The server ends the watch (timeoutSeconds=1) three times, with
	// changes in flight. The informer watches again from where it was,
	// without listing again: the first article's question answered.
	for range 3 {
		before := g.watches.Load()
		m.random(40)
		g.waitWatches(t, before, "the server's watch timeout")
	}
	requireConverged(t, all, inf, mir, "across server watch timeouts")
	assert.Equal(t, int64(1), g.lists.Load(), "a watch that timed out is re-opened, not re-listed")

	// 2. The connection is killed mid-stream.
	before := g.watches.Load()
	m.random(20)
	require.Eventually(t, func() bool { return srv.Faults().KillWatchConnections() > 0 }, waitLong, tick)
	m.random(20)
	g.waitWatches(t, before, "a killed connection")
	requireConverged(t, all, inf, mir, "after a killed connection")
	// A kill that lands on a watch less than a second old that has seen
	// nothing yet is "very short", and the Reflector re-lists (client-go
	// does the same), which may legitimately report a tombstone or two.
	// Without a re-list, the watch carried every delete itself.
	if g.lists.Load() == 1 {
		require.Empty(t, mir.tombstoned(), "no tombstones while the watch kept up")
	}
	tombstonesBefore := len(mir.tombstoned())

	// 3. Cut off (the gate refuses its next watch once the current one
	// times out) while some objects are deleted, others updated, enough
	// new ones created to push its resourceVersion out of the watch
	// cache's window, and the store is compacted. When the network heals,
	// the re-watch gets 410 Expired and the informer re-lists. (The window
	// is what forces the 410 here, as in Kubernetes, whose watch cache
	// also keeps replaying from its own history after an etcd compaction;
	// TestRetryWatcherStopsOn410 checks the compaction alone.)
	g.partition()
	g.waitRefused(t)
	deleted := m.pick(15)
	for _, k := range deleted {
		m.delete(k)
	}
	for _, k := range m.pick(min(20, len(m.objs))) {
		m.update(k)
	}
	for range history {
		m.create()
	}
	srv.Faults().CompactNow()
	waitCacheCaughtUp(t, srv) // so its window has moved on by the time we reconnect
	listsBefore := g.lists.Load()
	g.heal()
	require.Eventually(t, func() bool { return expired.Load() > 0 }, waitLong, tick, "the re-watch should have got 410 Expired")
	require.Eventually(t, func() bool { return g.lists.Load() > listsBefore }, waitLong, tick, "no re-list after the 410")
	requireConverged(t, all, inf, mir, "after the re-list")
	assert.ElementsMatch(t, deleted, mir.tombstoned()[tombstonesBefore:],
		"the re-list reports exactly the deletes made while cut off, as tombstones")

	// 4. Business as usual on the new watch. A watch of timeoutSeconds=1
	// that a busy machine leaves "very short" (less than a second, no
	// event) makes the Reflector re-list, as client-go's does, and a
	// delete that lands between that watch's end and the list is reported
	// as a tombstone: allowed, but only for an object that is really gone.
	listsBefore = g.lists.Load()
	tombstonesBefore = len(mir.tombstoned())
	m.random(40)
	requireConverged(t, all, inf, mir, "at the end")
	late := mir.tombstoned()[tombstonesBefore:]
	if g.lists.Load() == listsBefore {
		assert.Empty(t, late, "no tombstones while the watch kept up")
	}
	for _, k := range late {
		assert.NotContains(t, m.objs, k, "a tombstone for an object that still exists")
	}
	t.Logf("%d writes, %d watches, %d lists, %d objects at the end", m.ops, g.watches.Load(), g.lists.Load(), len(m.objs))
}

// A handler that takes its time (here: blocked until released) does not
// delay another handler of the same informer: each has its own goroutines
// and an unbounded buffer. The fast handler sees every event while the
// slow one's backlog (Pending) grows to hold them all.
func TestSlowHandlerDoesNotDelayFastOne(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	cms := c.Resource(configMaps).Namespace("default")

	release := make(chan struct{})
	var releaseOnce sync.Once
	var slowSeen, fastSeen, fastUpdates atomic.Int64
	var slowReg, fastReg informer.ResourceEventHandlerRegistration
	startInformer(t, cms, informer.Options{}, func(inf *informer.SharedIndexInformer) {
		var err error
		slowReg, err = inf.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
			AddFunc: func(*api.Object, bool) {
				<-release
				slowSeen.Add(1)
			},
		}, informer.HandlerOptions{Name: "slow"})
		require.NoError(t, err)
		fastReg, err = inf.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
			AddFunc:    func(*api.Object, bool) { fastSeen.Add(1) },
			UpdateFunc: func(_, _ *api.Object) { fastUpdates.Add(1) },
		}, informer.HandlerOptions{Name: "fast"})
		require.NoError(t, err)
	})
	// Registered after the informer's cleanup, so it runs before it: a
	// handler still blocked would keep Run from returning.
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	const n = 100
	wr := newWriter(t, testContext(t), cms)
	for range 2 * n { // alternately create and update: n creates
		_, ok := wr.step("default")
		require.True(t, ok)
	}
	// The fast handler sees every add and every update; the last
	// notification may be an update, so waiting for the adds alone would
	// look at its backlog while it still holds that one.
	require.Eventually(t, func() bool { return fastSeen.Load() == n && fastUpdates.Load() == n }, waitLong, tick,
		"the fast handler must see every add and update")
	assert.Zero(t, slowSeen.Load(), "the slow handler is still stuck in its first call")
	// The slow one's first notification is in its handler; all the rest
	// (n-1 adds and n updates) wait in its buffer.
	require.Eventually(t, func() bool { return slowReg.Pending() == 2*n-1 }, waitLong, tick,
		"slow handler's backlog: %d", slowReg.Pending())
	assert.Zero(t, fastReg.Pending(), "the fast handler has no backlog")

	releaseOnce.Do(func() { close(release) })
	require.Eventually(t, func() bool { return slowSeen.Load() == n && slowReg.Pending() == 0 }, waitLong, tick,
		"released, the slow handler catches up")
}

// A half-open connection: the server stops writing to the watch but never
// closes it (Faults.StallWatches), as when a NAT entry or a peer vanishes
// without a FIN or RST. TCP would not notice for a long time, and the
// watch's own timeout is far away. With bookmarks every second, a client
// whose IdleWatchTimeout is a little above that knows a silent watch is a
// dead one, drops it and watches again from where it was; the changes the
// stalled stream swallowed arrive on the new one.
const (
	halfOpenBookmarkInterval = time.Second
	halfOpenIdleTimeout      = 2 * time.Second
)

func TestHalfOpenWatchIsNoticedByInformer(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv := startServer(t, apiserver.Config{BookmarkInterval: halfOpenBookmarkInterval})
		idle := newIdleRecorder()
		c := newClient(t, srv, client.Config{Transport: tk, IdleWatchTimeout: halfOpenIdleTimeout, Tracer: idle.tracer()})
		cms := c.Resource(configMaps).Namespace("default")
		g := newGate(cms)
		mir := newMirror()
		inf := startInformer(t, g, informer.Options{Reflector: fastReflector(time.Minute)}, func(inf *informer.SharedIndexInformer) {
			_, err := inf.AddEventHandler(mir.handler())
			require.NoError(t, err)
		})
		wr := newWriter(t, testContext(t), cms)
		for range 5 {
			wr.step("default")
		}
		requireConverged(t, cms, inf, mir, "before the stall")

		before := g.watches.Load()
		srv.Faults().StallWatches()
		for range 10 { // the first of these wakes the stalled writer, which then drops them all
			wr.step("default")
		}
		g.waitWatches(t, before, "the watch went silent")
		requireConverged(t, cms, inf, mir, "after the half-open watch was replaced")
		assert.Equal(t, int64(1), g.lists.Load(), "a re-watch from the last resourceVersion, no re-list")
		assert.Positive(t, idle.count(), "the client's idle timeout is what ended the stalled watch")
	})
}

func TestHalfOpenWatchIsNoticedByRetryWatcher(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk client.TransportKind) {
		srv := startServer(t, apiserver.Config{})
		srv.Faults().SetBookmarkInterval(halfOpenBookmarkInterval) // the same, switched at run time
		idle := newIdleRecorder()
		c := newClient(t, srv, client.Config{Transport: tk, IdleWatchTimeout: halfOpenIdleTimeout, Tracer: idle.tracer()})
		cms := c.Resource(configMaps).Namespace("default")
		ctx := testContext(t)
		g := newGate(cms)
		rw := startRetryWatcher(t, ctx, listResourceVersion(t, cms), g, client.RetryWatcherOptions{})
		wr := newWriter(t, ctx, cms)

		var got []string
		for range 5 {
			wr.step("default")
			got = append(got, describe(receive(t, rw.ResultChan())))
		}
		before := g.watches.Load()
		srv.Faults().StallWatches()
		for range 10 {
			wr.step("default")
		}
		for range 10 {
			got = append(got, describe(receive(t, rw.ResultChan())))
		}
		assert.Equal(t, wr.events(), got, "every event exactly once, in order, across the half-open watch")
		assert.Greater(t, g.watches.Load(), before, "the silent watch was replaced")
		assert.Positive(t, idle.count(), "the client's idle timeout is what ended the stalled watch")
	})
}

// idleRecorder counts the client's narration of an idle watch being
// dropped (client.Config.IdleWatchTimeout firing). The client ends such a
// watch quietly, like any dropped connection, so its narration is the one
// place the cause shows.
type idleRecorder struct {
	mu sync.Mutex
	n  int
}

func newIdleRecorder() *idleRecorder { return &idleRecorder{} }

func (r *idleRecorder) tracer() *narrate.Tracer {
	return narrate.New(io.Discard, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
		if layer == narrate.StreamWatcher && strings.Contains(line, "half-open") {
			r.mu.Lock()
			r.n++
			r.mu.Unlock()
		}
		return false
	}))
}

func (r *idleRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

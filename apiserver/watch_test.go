package apiserver

import (
	"context"
	"encoding/json"
	"log"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/syncbuf"
	"listwatch/narrate"
)

// The watch through our routes, over both transports with one suite. The
// watch cache's own behaviour (replay, bookmarks, slow watchers) is tested
// in apiserver/cacher; here we check what the REST layer adds: routes,
// query parsing, timeouts, transports, faults and shutdown.

var transports = []transport{chunked, websocketTransport}

// forEachTransport runs a watch test once per transport.
func forEachTransport(t *testing.T, test func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) { test(t, tr) })
	}
}

func dataK(t *testing.T, o *api.Object) string {
	t.Helper()
	var d map[string]string
	require.NoError(t, json.Unmarshal(o.Get("data"), &d))
	return d["k"]
}

func requireEvent(t *testing.T, ev api.Event, typ api.EventType, name string) *api.Object {
	t.Helper()
	require.Equal(t, typ, ev.Type, "event %+v", ev)
	require.NotNil(t, ev.Object)
	require.Equal(t, name, ev.Object.Metadata.Name)
	return ev.Object
}

func TestWatchEvents(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		ts := startServer(t, Config{})
		seedFixtures(t, ts)
		w := ts.watch(tr, cms+"?watch=true")
		// Without a resourceVersion: the current state first, as ADDED
		// events sorted by key, then the changes.
		for _, name := range []string{"alpha", "beta", "gamma"} {
			o := requireEvent(t, w.next(), api.Added, name)
			assert.Equal(t, "ConfigMap", o.Kind, "objects in events carry kind")
			assert.Equal(t, "v1", o.APIVersion)
		}
		ts.createConfigMap("default", "elsewhere", nil, nil)
		ts.do(req{method: "PATCH", path: cms + "/alpha", body: `{"data":{"k":"v2"}}`,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
		assert.Equal(t, "v2", dataK(t, requireEvent(t, w.next(), api.Modified, "alpha")))

		beta := ts.get(cms + "/beta").object(t)
		ts.do(req{method: "DELETE", path: cms + "/beta"}).mustCode(t, http.StatusOK)
		gone := requireEvent(t, w.next(), api.Deleted, "beta")
		assert.Equal(t, "b", dataK(t, gone), "a DELETED event carries the last state")
		assert.Greater(t, revisionOf(gone), revisionOf(beta), "stamped with the deletion's revision")
		assert.Equal(t, strconv.FormatInt(ts.revision(), 10), gone.Metadata.ResourceVersion)

		ts.createConfigMap("fixtures", "delta", nil, nil)
		requireEvent(t, w.next(), api.Added, "delta")
	})
}

func TestWatchFromResourceVersion(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		ts := startServer(t, Config{})
		seedFixtures(t, ts)
		rv := ts.get(cms).list(t).Metadata.ResourceVersion
		ts.createConfigMap("fixtures", "delta", nil, nil)
		ts.do(req{method: "DELETE", path: cms + "/alpha"}).mustCode(t, http.StatusOK)
		// From a list's resourceVersion: exactly the changes after it.
		w := ts.watch(tr, cms+"?watch=1&resourceVersion="+rv)
		requireEvent(t, w.next(), api.Added, "delta")
		requireEvent(t, w.next(), api.Deleted, "alpha")
	})
}

func TestWatchTimeoutEndsCleanly(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tr transport) {
		ts := startServer(t, Config{})
		start := time.Now()
		w := ts.watch(tr, "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
		require.NoError(t, w.ended(), "the server ends a watch cleanly at its timeout")
		assert.GreaterOrEqual(t, time.Since(start), time.Second)
	})
}

func TestWatchDefaultTimeout(t *testing.T) {
	ts := startServer(t, Config{MinRequestTimeout: time.Second})
	for range 20 {
		d := ts.Server.watch.Timeout(0)
		assert.GreaterOrEqual(t, d, time.Second)
		assert.Less(t, d, 2*time.Second, "MinRequestTimeout × (1 + rand)")
	}
	assert.Equal(t, 5*time.Second, ts.Server.watch.Timeout(5*time.Second), "timeoutSeconds is exact")
	assert.Less(t, ts.Server.watch.Timeout(0), 2*time.Second, "0 means the default")

	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	require.NoError(t, w.ended())
}

func TestWatchSelectorTransitions(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	rv := ts.get(cms).list(t).Metadata.ResourceVersion
	w := ts.watch(chunked, cms+"?watch=1&labelSelector=app%3Dselected&resourceVersion="+rv)
	patch := func(name, body string) {
		ts.do(req{method: "PATCH", path: cms + "/" + name, body: body,
			header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
	}
	// The sequence of watch-labelselector-transitions.jsonl.
	ts.createConfigMap("fixtures", "sel", map[string]string{"app": "selected"}, map[string]string{"k": "1"})
	requireEvent(t, w.next(), api.Added, "sel")
	patch("sel", `{"data":{"k":"2"}}`)
	requireEvent(t, w.next(), api.Modified, "sel")
	patch("sel", `{"metadata":{"labels":{"app":"other"}},"data":{"k":"3"}}`)
	left := requireEvent(t, w.next(), api.Deleted, "sel")
	assert.Equal(t, "selected", left.Metadata.Labels["app"], "the DELETED of a transition carries the previous state")
	assert.Equal(t, "2", dataK(t, left))
	patch("sel", `{"data":{"k":"4"}}`)
	patch("sel", `{"metadata":{"labels":{"app":"selected"}}}`)
	back := requireEvent(t, w.next(), api.Added, "sel")
	assert.Equal(t, "4", dataK(t, back), "matching again: ADDED with the current object")
	ts.createConfigMap("fixtures", "unsel", map[string]string{"app": "other"}, nil)
	ts.do(req{method: "DELETE", path: cms + "/sel"}).mustCode(t, http.StatusOK)
	requireEvent(t, w.next(), api.Deleted, "sel")
	ts.do(req{method: "DELETE", path: cms + "/unsel"}).mustCode(t, http.StatusOK)
	ts.createConfigMap("fixtures", "last", map[string]string{"app": "selected"}, nil)
	requireEvent(t, w.next(), api.Added, "last")
}

func TestWatchPaths(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	ts.createNamespace("other")
	paths := map[string][]string{
		// The legacy path with a name watches that object only.
		"/api/v1/watch/namespaces/fixtures/configmaps/beta": {"beta"},
		// So does ?watch on the object's own path.
		cms + "/gamma?watch=true": {"gamma"},
		// The legacy collection path, and all namespaces.
		"/api/v1/watch/namespaces/fixtures/configmaps?fieldSelector=metadata.name%3Dalpha": {"alpha"},
		"/api/v1/watch/configmaps?labelSelector=app%3Dother":                               {"gamma", "o"},
		"/api/v1/configmaps?watch=1&fieldSelector=metadata.namespace%3Dother":              {"o"},
		"/api/v1/watch/namespaces?labelSelector=kubernetes.io%2Fmetadata.name%3Dother":     {"other"},
	}
	watches := map[string]*watchConn{}
	for p := range paths {
		watches[p] = ts.watch(chunked, p)
	}
	for p, names := range paths {
		if p == "/api/v1/watch/configmaps?labelSelector=app%3Dother" || p == "/api/v1/configmaps?watch=1&fieldSelector=metadata.namespace%3Dother" {
			continue
		}
		requireEvent(t, watches[p].next(), api.Added, names[0])
	}
	requireEvent(t, watches["/api/v1/watch/configmaps?labelSelector=app%3Dother"].next(), api.Added, "gamma")
	ts.createConfigMap("other", "o", map[string]string{"app": "other"}, nil)
	o := requireEvent(t, watches["/api/v1/watch/configmaps?labelSelector=app%3Dother"].next(), api.Added, "o")
	assert.Equal(t, "other", o.Metadata.Namespace)
	requireEvent(t, watches["/api/v1/configmaps?watch=1&fieldSelector=metadata.namespace%3Dother"].next(), api.Added, "o")
	ts.do(req{method: "DELETE", path: cms + "/beta"}).mustCode(t, http.StatusOK)
	requireEvent(t, watches["/api/v1/watch/namespaces/fixtures/configmaps/beta"].next(), api.Deleted, "beta")
	assert.Equal(t, int64(len(paths)), ts.debugView().WatchesOpen)
}

func TestWatchInitialEventsAndBookmarks(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	w := ts.watch(chunked, cms+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=30")
	for _, name := range []string{"alpha", "beta", "gamma"} {
		requireEvent(t, w.next(), api.Added, name)
	}
	bm := w.next()
	require.Equal(t, api.Bookmark, bm.Type)
	assert.Equal(t, "true", bm.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
	assert.Equal(t, "ConfigMap", bm.Object.Kind)
}

func TestWatchTooOldResourceVersion(t *testing.T) {
	ts := startServer(t, Config{HistorySize: 2})
	for i := range 6 {
		ts.createConfigMap("default", "c"+strconv.Itoa(i), nil, nil)
	}
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=2")
	ev := w.next()
	require.Equal(t, api.Error, ev.Type)
	assert.Equal(t, int32(http.StatusGone), ev.Status.Code)
	assert.Equal(t, api.ReasonExpired, ev.Status.Reason)
	assert.Contains(t, ev.Status.Message, "too old resource version: 2")
	require.NoError(t, w.ended(), "the stream ends after the ERROR event")
}

func TestStopEndsWatchesCleanly(t *testing.T) {
	ts := startServer(t, Config{})
	ws := ts.watch(websocketTransport, "/api/v1/namespaces/default/configmaps?watch=1")
	ch := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	ts.createConfigMap("default", "x", nil, nil)
	requireEvent(t, ws.next(), api.Added, "x")
	requireEvent(t, ch.next(), api.Added, "x")
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, ts.Stop(ctx))
	assert.NoError(t, ch.ended(), "the chunked stream got its terminating chunk")
	assert.NoError(t, ws.ended(), "the websocket got a close frame")
}

func TestFaultKillWatchConnections(t *testing.T) {
	ts := startServer(t, Config{})
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	ws := ts.watch(websocketTransport, "/api/v1/namespaces/default/configmaps?watch=1")
	ts.createConfigMap("default", "x", nil, nil)
	requireEvent(t, w.next(), api.Added, "x")
	requireEvent(t, ws.next(), api.Added, "x")
	assert.Equal(t, 2, ts.Faults().KillWatchConnections())
	assert.Error(t, w.ended(), "a killed watch is not a clean end of stream")
	_ = ws.ended() // the websocket ends; how depends on the client
	// New watches work.
	again := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	requireEvent(t, again.next(), api.Added, "x")
	assert.Equal(t, int64(2), ts.debugView().Faults.Counts.Killed)
}

func TestFaultStallWatches(t *testing.T) {
	ts := startServer(t, Config{})
	stalled := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	ts.createConfigMap("default", "before", nil, nil)
	requireEvent(t, stalled.next(), api.Added, "before")
	ts.Faults().StallWatches()
	fresh := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	requireEvent(t, fresh.next(), api.Added, "before")
	ts.createConfigMap("default", "after", nil, nil)
	requireEvent(t, fresh.next(), api.Added, "after")
	// Once the stalled watch holds its connection it writes nothing more:
	// what it had not delivered by then, it never will. No short wait to
	// see that nothing comes.
	require.Eventually(t, func() bool { return ts.Faults().Held().Load() == 1 }, safetyTimeout, 10*time.Millisecond,
		"the stalled watch holds its connection")
	select {
	case ev, ok := <-stalled.events:
		t.Fatalf("a stalled watch delivered %v (open: %v)", ev.Type, ok)
	default:
	}
	stalled.close()
}

// A stalled connection has left the watch cache, but the kill fault must
// still drop it: a half-open connection is exactly what tcpkill is for.
func TestFaultKillDropsStalledWatches(t *testing.T) {
	ts := startServer(t, Config{})
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	ws := ts.watch(websocketTransport, "/api/v1/namespaces/default/configmaps?watch=1")
	ts.Faults().StallWatches()
	ts.createConfigMap("default", "unsent", nil, nil) // makes both writers notice the stall
	require.Eventually(t, func() bool { return ts.Faults().Held().Load() == 2 },
		safetyTimeout, 10*time.Millisecond, "both connections are held stalled")
	assert.Equal(t, 2, ts.Faults().KillWatchConnections())
	assert.Error(t, w.ended(), "a killed stalled watch breaks, it does not end cleanly")
	_ = ws.ended() // the websocket ends; how depends on the client
	require.Eventually(t, func() bool { return ts.Faults().Held().Load() == 0 },
		safetyTimeout, 10*time.Millisecond, "no stalled connection is held any more")
}

// The expire fault ends an open watch as its timeout does: cleanly, after
// the events it was sent; a watch opened later keeps its own timeout.
func TestFaultExpireEndsWatchesCleanly(t *testing.T) {
	ts := startServer(t, Config{})
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	ts.createConfigMap("default", "x", nil, nil)
	requireEvent(t, w.next(), api.Added, "x")
	ts.Faults().ExpireWatches()
	require.NoError(t, w.ended(), "an expired watch ends cleanly, as at its timeout")

	later := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	requireEvent(t, later.next(), api.Added, "x") // the state, as no resourceVersion was given
	ts.createConfigMap("default", "y", nil, nil)
	requireEvent(t, later.next(), api.Added, "y")
}

func TestFaultWatchTimeoutAndBookmarkInterval(t *testing.T) {
	ts := startServer(t, Config{})
	ts.Faults().SetWatchTimeout(time.Second)
	short := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	require.NoError(t, short.ended(), "the runtime default timeout applies")
	ts.Faults().SetWatchTimeout(0)
	assert.Greater(t, ts.Server.watch.Timeout(0), time.Hour/2)

	ts.Faults().SetBookmarkInterval(100 * time.Millisecond)
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=60")
	end := w.next() // a watch-list's end of the (empty) current state (1.37's default)
	assert.Equal(t, "true", end.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
	ts.createConfigMap("default", "x", nil, nil)
	requireEvent(t, w.next(), api.Added, "x")
	bm := w.next()
	assert.Equal(t, api.Bookmark, bm.Type)
	assert.Equal(t, "ConfigMap", bm.Object.Kind)
}

// A list's write deadline must not outlive it: client-go lists, then
// watches on the same kept-alive connection.
func TestWatchAfterListOnTheSameConnection(t *testing.T) {
	ts := startServer(t, Config{})
	const writeTimeout = time.Second
	ts.writeTimeout = writeTimeout
	ts.get("/api/v1/namespaces/default/configmaps").mustCode(t, http.StatusOK)
	listed := time.Now()
	w := ts.watch(chunked, "/api/v1/namespaces/default/configmaps?watch=1")
	// The list's deadline was set when its answer started, before the
	// answer came, so it has passed once writeTimeout has gone by since.
	// Not a wait for something to happen but a lower bound on time: the
	// state this test needs is "the list's deadline is in the past", and
	// only time passing makes it so (a busy machine only makes the wait
	// longer). The deadline is the connection's own, in the kernel's and
	// the runtime's clock: there is no clock of ours to step instead.
	time.Sleep(time.Until(listed.Add(writeTimeout)))
	ts.createConfigMap("default", "late", nil, nil)
	requireEvent(t, w.next(), api.Added, "late")
}

// An HTTP/1.1 watch outlives its handler: once the headers are out,
// net/http's connection goroutine (and the buffers it holds) is gone while
// the watch goes on, and the watch's clean-up (counter, trace, request log
// with 200 and the watch's whole duration) happens when it ends.
func TestChunkedWatchOutlivesItsHandler(t *testing.T) {
	var logged, traced syncbuf.Buffer
	ts := startServer(t, Config{Logger: log.New(&logged, "", 0), Tracer: narrate.New(&traced, narrate.WithoutTimes())})
	// The first request on this server, so no kept-alive connection has
	// a net/http goroutine of its own. The watch ends when the test hangs
	// up, not at a timeout that a busy machine could reach before the
	// checks of the running watch are done.
	w := ts.watch(chunked, "/api/v1/namespaces?watch=1&timeoutSeconds=3600")
	requireEvent(t, w.next(), api.Added, "default")
	requireEvent(t, w.next(), api.Added, "kube-system")
	require.Eventually(t, func() bool { return !httpConnServing() }, safetyTimeout, 10*time.Millisecond,
		"net/http's connection goroutine ends with the handler")
	assert.NotContains(t, logged.String(), "watch=1", "the watch is logged when it ends")
	started, ended := ts.Server.watch.Counts()
	assert.Equal(t, int64(1), started-ended)

	w.close()
	require.Eventually(t, func() bool { started, ended := ts.Server.watch.Counts(); return started == ended },
		safetyTimeout, 10*time.Millisecond)
	require.Eventually(t, func() bool { return strings.Contains(logged.String(), "watch=1") }, safetyTimeout, 10*time.Millisecond)
	assert.Regexp(t, `(?m)^GET /api/v1/namespaces\?watch=1&timeoutSeconds=3600 200 \S+ "fixture-recorder"$`, logged.String())
	assert.Contains(t, traced.String(), "WATCH namespaces ended")
}

// httpConnServing reports whether a goroutine of net/http is serving a
// connection (running a handler or waiting for the next request).
func httpConnServing() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "net/http.(*conn).serve")
}

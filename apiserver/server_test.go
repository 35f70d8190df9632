package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/faults"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/watchserver"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
	"listwatch/narrate"
)

func TestTokenAuthentication(t *testing.T) {
	ts := startServer(t, Config{Token: "s3cret"})
	for _, h := range []map[string]string{nil, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic s3cret"}, {"Authorization": "Bearer"}} {
		r := ts.do(req{path: "/api/v1/namespaces", header: h})
		assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`+"\n",
			string(r.mustCode(t, http.StatusUnauthorized)))
	}
	ts.do(req{path: "/version"}).mustCode(t, http.StatusUnauthorized)
	ts.do(req{path: "/api/v1/namespaces", header: map[string]string{"Authorization": "Bearer s3cret"}}).mustCode(t, http.StatusOK)
	ts.do(req{path: "/api/v1/namespaces", header: map[string]string{"Authorization": "bearer s3cret"}}).mustCode(t, http.StatusOK)
}

func TestBodyLimit(t *testing.T) {
	ts := startServer(t, Config{})
	big := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", MaxRequestBodyBytes) + `"}}`
	r := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/configmaps", body: big})
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`+"\n",
		string(r.mustCode(t, http.StatusRequestEntityTooLarge)))

	// Without a Content-Length the limit applies while reading.
	hr, err := http.NewRequest("PUT", ts.URL()+"/api/v1/namespaces/default/configmaps/big", io.MultiReader(strings.NewReader(big)))
	require.NoError(t, err)
	hr.ContentLength = -1
	resp, err := ts.client.Do(hr)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	fits := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"big"},"data":{"k":"` + strings.Repeat("x", MaxRequestBodyBytes-200) + `"}}`
	ts.do(req{method: "POST", path: "/api/v1/namespaces/default/configmaps", body: fits}).mustCode(t, http.StatusCreated)
	ts.get("/version").mustCode(t, http.StatusOK)
}

func TestRequestLogAndNarration(t *testing.T) {
	var logged, traced syncbuf.Buffer
	ts := startServer(t, Config{Logger: log.New(&logged, "", 0), Tracer: narrate.New(&traced, narrate.WithoutTimes())})
	ts.get("/api/v1/namespaces?limit=1")
	ts.createConfigMap("default", "x", nil, nil)
	ts.get("/nope")
	assert.Regexp(t, `(?m)^GET /api/v1/namespaces\?limit=1 200 \S+ "fixture-recorder"$`, logged.String())
	assert.Regexp(t, `(?m)^POST /api/v1/namespaces/default/configmaps 201 \S+ "fixture-recorder"$`, logged.String())
	assert.Regexp(t, `(?m)^GET /nope 404 `, logged.String())
	assert.Contains(t, traced.String(), "CREATE configmaps default/x → rv")
	assert.Contains(t, traced.String(), "LIST namespaces → 1 item(s)")
}

func TestStartAndStop(t *testing.T) {
	defer leakcheck.Check(t)()
	_, err := Start(context.Background(), Config{Listen: "256.0.0.1:1"})
	require.Error(t, err)

	srv, err := Start(context.Background(), Config{})
	require.NoError(t, err)
	assert.Regexp(t, `^http://127\.0\.0\.1:\d+$`, srv.URL())
	require.NoError(t, srv.Stop(context.Background()))
	require.NoError(t, srv.Stop(context.Background()), "Stop is idempotent")
	_, err = http.Get(srv.URL() + "/version")
	assert.Error(t, err, "nothing listens after Stop")
}

func TestFailResource(t *testing.T) {
	ts := startServer(t, Config{})
	f := ts.Faults()
	cm := api.GroupResource{Resource: "configmaps"}
	require.NoError(t, f.FailResource(cm, http.StatusTooManyRequests, time.Hour))
	r := ts.get("/api/v1/namespaces/default/configmaps")
	r.mustCode(t, http.StatusTooManyRequests)
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	st := r.status(t)
	assert.Equal(t, api.ReasonTooManyRequests, st.Reason)
	assert.Equal(t, int32(1), st.Details.RetryAfterSeconds)
	ts.get("/api/v1/namespaces/default/secrets").mustCode(t, http.StatusOK)

	require.NoError(t, f.FailResource(cm, http.StatusForbidden, time.Hour))
	forbidden := ts.get("/api/v1/namespaces/default/configmaps/x")
	forbidden.mustCode(t, http.StatusForbidden)
	assert.Equal(t, api.ReasonForbidden, forbidden.status(t).Reason)

	require.NoError(t, f.FailResource(cm, http.StatusForbidden, 0))
	ts.get("/api/v1/namespaces/default/configmaps").mustCode(t, http.StatusOK)
	require.NoError(t, f.FailResource(cm, http.StatusForbidden, time.Nanosecond))
	// A lower bound on time, not a wait for an event: the failure's end
	// is on the wall clock, a nanosecond away, and has passed after this.
	time.Sleep(time.Millisecond)
	ts.get("/api/v1/namespaces/default/configmaps").mustCode(t, http.StatusOK)

	assert.Error(t, f.FailResource(cm, 500, time.Minute))
	assert.Error(t, f.FailResource(api.GroupResource{Resource: "foos"}, 403, time.Minute))
	assert.Equal(t, int64(2), ts.debugView().Faults.Counts.Failures)
}

func TestRequestDelay(t *testing.T) {
	ts := startServer(t, Config{})
	ts.Faults().SetRequestDelay(150 * time.Millisecond)
	start := time.Now()
	ts.get("/api/v1/namespaces").mustCode(t, http.StatusOK)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	ts.Faults().SetRequestDelay(0)
	assert.Empty(t, ts.Faults().State().RequestDelay)
}

func TestFaultsOverHTTP(t *testing.T) {
	off := startServer(t, Config{})
	r := off.do(req{method: "POST", path: "/faults/compact"})
	assert.Equal(t, "404 page not found\n", string(r.mustCode(t, http.StatusNotFound)), "faults are off unless enabled")

	ts := startServer(t, Config{EnableFaults: true})
	ts.createConfigMap("default", "x", nil, nil)
	post := func(path string) map[string]any {
		r := ts.do(req{method: "POST", path: path})
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.mustCode(t, http.StatusOK), &m), "%s", r.body)
		return m
	}
	assert.Equal(t, float64(ts.revision()), post("/faults/compact")["compactedRevision"])
	assert.Equal(t, ts.revision(), ts.Store().CompactedRevision())
	killed := post("/faults/kill-watches")
	assert.Equal(t, float64(0), killed["killed"])
	assert.Equal(t, float64(2), killed["seq"], "the answer numbers the switch as the log does")
	post("/faults/stall-watches")
	post("/faults/expire-watches")
	assert.Equal(t, "2s", post("/faults/watch-timeout?duration=2")["watchTimeout"])
	assert.Equal(t, "500ms", post("/faults/bookmark-interval?duration=500ms")["bookmarkInterval"])
	post("/faults/request-delay?duration=0s")
	post("/faults/fail-resource?resource=secrets&code=403&duration=1m")
	ts.get("/api/v1/namespaces/default/secrets").mustCode(t, http.StatusForbidden)
	post("/faults/fail-resource?resource=deployments&group=apps&code=429&duration=1m")
	ts.get("/apis/apps/v1/deployments").mustCode(t, http.StatusTooManyRequests)

	var state faults.State
	require.NoError(t, json.Unmarshal(ts.get("/faults").mustCode(t, http.StatusOK), &state))
	assert.Equal(t, "2s", state.WatchTimeout)
	assert.Equal(t, "500ms", state.BookmarkInterval)
	assert.Contains(t, state.Failing, "secrets")
	assert.Contains(t, state.Failing, "deployments.apps")
	assert.Equal(t, int64(1), state.Counts.Compactions)
	assert.Equal(t, int64(1), state.Counts.Stalls)
	assert.Equal(t, int64(1), state.Counts.Expiries)
	// The log of switches thrown over HTTP, for the live page's timeline:
	// what, with what result, and who.
	var names []string
	for i, sw := range state.Switched {
		names = append(names, sw.Name)
		assert.Equal(t, int64(i+1), sw.Seq)
		assert.NotEmpty(t, sw.RemoteAddr)
		assert.NotEmpty(t, sw.UserAgent)
	}
	assert.Equal(t, []string{"compact", "kill-watches", "stall-watches", "expire-watches", "watch-timeout",
		"bookmark-interval", "request-delay", "fail-resource", "fail-resource"}, names)
	assert.Equal(t, "killed=0", state.Switched[1].Detail)
	assert.Equal(t, "code=429, duration=1m0s, resource=deployments", state.Switched[8].Detail)

	for path, code := range map[string]int{
		"/faults/watch-timeout":                                     400,
		"/faults/watch-timeout?duration=soon":                       400,
		"/faults/fail-resource?resource=foos&code=403&duration=1m":  400,
		"/faults/fail-resource?resource=secrets&code=x&duration=1m": 400,
		"/faults/nope": 404,
	} {
		ts.do(req{method: "POST", path: path}).mustCode(t, code)
	}
	ts.get("/faults/compact").mustCode(t, http.StatusMethodNotAllowed)
	ts.do(req{method: "POST", path: "/faults"}).mustCode(t, http.StatusMethodNotAllowed)
}

func TestDebugView(t *testing.T) {
	ts := startServer(t, Config{WatchWriters: 3})
	ts.createConfigMap("default", "x", nil, nil)
	ts.get("/api/v1/namespaces/default/configmaps")
	ts.do(req{method: "POST", path: "/debug/listwatch"}).mustCode(t, http.StatusMethodNotAllowed)
	r := ts.get("/debug/listwatch")
	var v map[string]any
	require.NoError(t, json.Unmarshal(r.mustCode(t, http.StatusOK), &v))
	assert.Equal(t, float64(ts.revision()), v["storeRevision"])
	verbs := v["requestsByVerb"].(map[string]any)
	assert.Equal(t, float64(1), verbs["create"])
	assert.Equal(t, float64(1), verbs["list"])
	caches := v["watchCaches"].([]any)
	cached := 1 // customresourcedefinitions
	for _, res := range registry.Builtin() {
		if !res.NotWatchCached {
			cached++
		}
	}
	require.Len(t, caches, cached, "the built-in resources but Events, and customresourcedefinitions")
	for _, key := range []string{"gone410", "watchesStarted", "watchesEnded", "watchesOpen", "closedTooSlow", "faults"} {
		assert.Contains(t, v, key)
	}
	first := caches[0].(map[string]any)
	for _, key := range []string{"resource", "revision", "historyLen", "historyCap", "closedTooSlow", "watchers"} {
		assert.Contains(t, first, key)
	}
	assert.Equal(t, map[string]any{"limit": float64(3), "awake": float64(0), "waiting": float64(0)}, v["watchWriters"])
}

// Go's profiler is served under kube-apiserver's path only when asked for.
func TestProfilingIsOffUnlessEnabled(t *testing.T) {
	off := startServer(t, Config{})
	off.get("/debug/pprof/").mustCode(t, http.StatusNotFound)
	off.get("/debug/pprof/heap").mustCode(t, http.StatusNotFound)

	on := startServer(t, Config{Profiling: true})
	assert.Contains(t, string(on.get("/debug/pprof/").mustCode(t, http.StatusOK)), "goroutine")
	assert.NotEmpty(t, on.get("/debug/pprof/heap").mustCode(t, http.StatusOK))
	assert.Contains(t, string(on.get("/debug/pprof/cmdline").mustCode(t, http.StatusOK)), "apiserver")
}

// The live page is served at /ui/, and the debug view it draws tells each
// watch's transport and bookmarks apart.
func TestLivePageAndItsDebugFields(t *testing.T) {
	ts := startServer(t, Config{})
	r := ts.get("/ui/")
	assert.Contains(t, string(r.mustCode(t, http.StatusOK)), `<script type="module" src="js/main.js">`)
	assert.Equal(t, "text/html; charset=utf-8", r.header.Get("Content-Type"))
	ts.get("/ui/js/reflector.js").mustCode(t, http.StatusOK)
	assert.Contains(t, string(ts.get("/ui").mustCode(t, http.StatusOK)), "listwatch", "/ui is redirected to /ui/")
	ts.get("/ui/nope.js").mustCode(t, http.StatusNotFound)

	// From the current revision: a watch from none would be a watch-list
	// and get its initial-events-end bookmark.
	path := "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&resourceVersion=" + strconv.FormatInt(ts.revision(), 10)
	for _, tr := range []transport{chunked, websocketTransport} {
		wc := ts.watch(tr, path)
		defer wc.close()
	}
	caches := ts.debugView().Caches
	i := slices.IndexFunc(caches, func(c cacher.Stats) bool { return c.Resource == "configmaps" })
	require.GreaterOrEqual(t, i, 0)
	transports := map[string]bool{}
	for _, w := range caches[i].Watchers {
		transports[w.Transport] = true
		assert.Equal(t, path, w.Request)
		assert.Zero(t, w.BookmarksSent, "the cache has not moved past the watches' start")
		assert.Contains(t, w.RemoteAddr, "127.0.0.1:", "who is watching: the client's address")
	}
	assert.Equal(t, map[string]bool{watchserver.TransportH1Chunked: true, watchserver.TransportH1Websocket: true}, transports)
}

package apiservertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/store"
)

// waitLong bounds every wait for an answer or a watch event. It only turns
// a hang into a failure, so it is generous: on a busy machine under -race a
// correct server answers in far less, and it is no bound on how fast.
const waitLong = 2 * time.Minute

// Run runs the suite: each test as a subtest with a new apiserver on a
// store from newStore (the factory arranges the store's cleanup; the
// apiserver does not close a store it was given).
func Run(t *testing.T, newStore func(t *testing.T) store.Interface) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s *server)
	}{
		{"CreateGetUpdateDelete", testCRUD},
		{"Patch", testPatch},
		{"ListConsistentAndPaged", testListPaged},
		{"ListFromCache", testListFromCache},
		{"ListNotOlderThanAnotherResource", testListNotOlderThanAnotherResource},
		{"WatchFromListResourceVersion", testWatchFromList},
		{"WatchList", testWatchList},
		{"CompactionMeans410", testCompaction},
		{"DeleteCollection", testDeleteCollection},
		{"WatchFromZero", testWatchFromZero},
		{"WatchSelectorTransitions", testWatchSelectorTransitions},
		{"PeriodicBookmarks", testPeriodicBookmarks},
		{"KilledWatchResumes", testKilledWatchResumes},
		{"GenerateNameGenerationAndNamespaceDeletion", testGenerateNameEtc},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, start(t, newStore(t)))
		})
	}
}

// server is one apiserver under test, with a namespace of its own.
type server struct {
	t   *testing.T
	srv *apiserver.Server
	hc  *http.Client
	ns  string
}

var nsSeq struct{ n int }

func start(t *testing.T, st store.Interface) *server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Store: st, BookmarkInterval: time.Second})
	require.NoError(t, err)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	s := &server{t: t, srv: srv, hc: &http.Client{Transport: transport}}
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()
		assert.NoError(t, srv.Stop(stopCtx))
		transport.CloseIdleConnections()
	})
	nsSeq.n++
	s.ns = fmt.Sprintf("suite-%d-%d", time.Now().UnixNano()%1e9, nsSeq.n)
	s.mustDo(http.MethodPost, "/api/v1/namespaces", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+s.ns+`"}}`, http.StatusCreated)
	return s
}

// do sends one request and returns the status code and body.
func (s *server) do(method, path, body string, contentType ...string) (int, []byte) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL()+path, r)
	require.NoError(s.t, err)
	if body != "" {
		ct := "application/json"
		if len(contentType) > 0 {
			ct = contentType[0]
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := s.hc.Do(req)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, b
}

// mustDo is do that requires a status code and decodes the JSON answer.
func (s *server) mustDo(method, path, body string, want int) map[string]any {
	s.t.Helper()
	code, b := s.do(method, path, body)
	require.Equal(s.t, want, code, "%s %s: %s", method, path, b)
	var v map[string]any
	require.NoError(s.t, json.Unmarshal(b, &v), "%s", b)
	return v
}

func (s *server) cms() string { return "/api/v1/namespaces/" + s.ns + "/configmaps" }

func (s *server) create(name, value string) map[string]any {
	s.t.Helper()
	return s.mustDo(http.MethodPost, s.cms(), configMap(name, value), http.StatusCreated)
}

func configMap(name, value string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"v":"` + value + `"}}`
}

func meta(v map[string]any) map[string]any {
	m, _ := v["metadata"].(map[string]any)
	return m
}

func rv(v map[string]any) string {
	s, _ := meta(v)["resourceVersion"].(string)
	return s
}

func rvNum(t *testing.T, v map[string]any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv(v), 10, 64)
	require.NoError(t, err, "resourceVersion %q", rv(v))
	return n
}

func items(v map[string]any) []string {
	list, _ := v["items"].([]any)
	out := []string{}
	for _, it := range list {
		m, _ := it.(map[string]any)
		name, _ := meta(m)["name"].(string)
		out = append(out, name)
	}
	return out
}

func testCRUD(t *testing.T, s *server) {
	a := s.create("a", "1")
	assert.NotEmpty(t, meta(a)["uid"])
	s.mustDo(http.MethodPost, s.cms(), configMap("a", "2"), http.StatusConflict)

	got := s.mustDo(http.MethodGet, s.cms()+"/a", "", http.StatusOK)
	assert.Equal(t, rv(a), rv(got))

	stale := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"` +
		strconv.FormatInt(rvNum(t, a)+1000, 10) + `"},"data":{"v":"x"}}`
	st := s.mustDo(http.MethodPut, s.cms()+"/a", stale, http.StatusConflict)
	assert.Equal(t, "Conflict", st["reason"])

	fresh := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"` + rv(a) + `"},"data":{"v":"2"}}`
	u := s.mustDo(http.MethodPut, s.cms()+"/a", fresh, http.StatusOK)
	assert.Greater(t, rvNum(t, u), rvNum(t, a))
	assert.Equal(t, meta(a)["uid"], meta(u)["uid"])

	wrongUID := `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"not-it"}}`
	s.mustDo(http.MethodDelete, s.cms()+"/a", wrongUID, http.StatusConflict)
	s.mustDo(http.MethodDelete, s.cms()+"/a", "", http.StatusOK)
	st = s.mustDo(http.MethodGet, s.cms()+"/a", "", http.StatusNotFound)
	assert.Equal(t, "NotFound", st["reason"])
}

func testPatch(t *testing.T, s *server) {
	a := s.create("p", "1")
	code, b := s.do(http.MethodPatch, s.cms()+"/p", `{"metadata":{"labels":{"app":"x"}}}`, "application/merge-patch+json")
	require.Equal(t, http.StatusOK, code, "%s", b)
	var p map[string]any
	require.NoError(t, json.Unmarshal(b, &p))
	assert.Equal(t, map[string]any{"app": "x"}, meta(p)["labels"])
	assert.Greater(t, rvNum(t, p), rvNum(t, a))
}

func testListPaged(t *testing.T, s *server) {
	var last map[string]any
	for _, n := range []string{"c", "a", "e", "b", "d"} {
		last = s.create(n, "1")
	}
	all := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	assert.Equal(t, []string{"a", "b", "c", "d", "e"}, items(all))
	assert.GreaterOrEqual(t, rvNum(t, all), rvNum(t, last), "a list without resourceVersion is a consistent read")

	first := s.mustDo(http.MethodGet, s.cms()+"?limit=2", "", http.StatusOK)
	assert.Equal(t, []string{"a", "b"}, items(first))
	cont, _ := meta(first)["continue"].(string)
	require.NotEmpty(t, cont)
	assert.EqualValues(t, 3, meta(first)["remainingItemCount"])

	s.mustDo(http.MethodDelete, s.cms()+"/c", "", http.StatusOK)
	s.create("bb", "1")
	second := s.mustDo(http.MethodGet, s.cms()+"?limit=10&continue="+url.QueryEscape(cont), "", http.StatusOK)
	assert.Equal(t, []string{"c", "d", "e"}, items(second), "the continue reads at the first page's revision")
	assert.Equal(t, rv(first), rv(second))
}

func testListFromCache(t *testing.T, s *server) {
	a := s.create("a", "1")
	l := s.mustDo(http.MethodGet, s.cms()+"?resourceVersion="+rv(a)+"&resourceVersionMatch=NotOlderThan", "", http.StatusOK)
	assert.Equal(t, []string{"a"}, items(l))
	assert.GreaterOrEqual(t, rvNum(t, l), rvNum(t, a))
	l = s.mustDo(http.MethodGet, s.cms()+"?resourceVersion=0", "", http.StatusOK)
	assert.Contains(t, items(l), "a", "resourceVersion=0 is whatever the cache has, which includes a by now")

	exact := s.mustDo(http.MethodGet, s.cms()+"?resourceVersion="+rv(a)+"&resourceVersionMatch=Exact", "", http.StatusOK)
	assert.Equal(t, rv(a), rv(exact))
}

// A resourceVersion made by a write to another resource is reached by the
// configmaps cache through progress (the in-memory store's progress event,
// etcd's progress notification), not a 504 after 3 s.
func testListNotOlderThanAnotherResource(t *testing.T, s *server) {
	sec := s.mustDo(http.MethodPost, "/api/v1/namespaces/"+s.ns+"/secrets",
		`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, http.StatusCreated)
	l := s.mustDo(http.MethodGet, s.cms()+"?resourceVersion="+rv(sec)+"&resourceVersionMatch=NotOlderThan", "", http.StatusOK)
	assert.GreaterOrEqual(t, rvNum(t, l), rvNum(t, sec))
}

// watchEvent is one line of a watch stream.
type watchEvent struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// stream is an open watch.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan watchEvent
}

func (s *server) watch(query string) *stream {
	s.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.srv.URL()+s.cms()+"?watch=true&"+query, nil)
	require.NoError(s.t, err)
	resp, err := s.hc.Do(req)
	require.NoError(s.t, err)
	require.Equal(s.t, http.StatusOK, resp.StatusCode)
	w := &stream{t: s.t, cancel: cancel, events: make(chan watchEvent, 100)}
	go func() {
		defer close(w.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &ev) == nil {
				w.events <- ev
			}
		}
	}()
	s.t.Cleanup(w.stop)
	return w
}

func (w *stream) stop() {
	w.cancel()
	for range w.events {
	}
}

// next returns the next event that is not a periodic BOOKMARK, unless
// bookmarks are asked for.
func (w *stream) next(bookmarks bool) watchEvent {
	w.t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case ev, ok := <-w.events:
			require.True(w.t, ok, "watch stream ended")
			if ev.Type == string(api.Bookmark) && !bookmarks {
				continue
			}
			return ev
		case <-timeout:
			require.FailNow(w.t, "no watch event in time")
		}
	}
}

func testWatchFromList(t *testing.T, s *server) {
	s.create("before", "1")
	l := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	w := s.watch("resourceVersion=" + rv(l))
	a := s.create("a", "1")
	fresh := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"` + rv(a) + `"},"data":{"v":"2"}}`
	u := s.mustDo(http.MethodPut, s.cms()+"/a", fresh, http.StatusOK)
	s.mustDo(http.MethodDelete, s.cms()+"/a", "", http.StatusOK)

	ev := w.next(false)
	assert.Equal(t, "ADDED", ev.Type)
	assert.Equal(t, rv(a), rv(ev.Object))
	ev = w.next(false)
	assert.Equal(t, "MODIFIED", ev.Type)
	assert.Equal(t, rv(u), rv(ev.Object))
	ev = w.next(false)
	assert.Equal(t, "DELETED", ev.Type)
	assert.Greater(t, rvNum(t, ev.Object), rvNum(t, u), "DELETED carries the deletion's revision")
}

func testWatchList(t *testing.T, s *server) {
	s.create("a", "1")
	s.create("b", "1")
	w := s.watch("sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan")
	var names []string
	for {
		ev := w.next(true)
		if ev.Type == string(api.Bookmark) {
			ann, _ := meta(ev.Object)["annotations"].(map[string]any)
			if ann[api.InitialEventsEndAnnotation] == "true" {
				break
			}
			continue
		}
		require.Equal(t, "ADDED", ev.Type)
		name, _ := meta(ev.Object)["name"].(string)
		names = append(names, name)
	}
	assert.Equal(t, []string{"a", "b"}, names, "the initial state, then the bookmark that ends it")
	c := s.create("c", "1")
	ev := w.next(false)
	assert.Equal(t, "ADDED", ev.Type)
	assert.Equal(t, rv(c), rv(ev.Object))
}

func testCompaction(t *testing.T, s *server) {
	a := s.create("a", "1")
	s.create("b", "1")
	s.create("c", "1")
	first := s.mustDo(http.MethodGet, s.cms()+"?limit=1", "", http.StatusOK)
	cont, _ := meta(first)["continue"].(string)
	require.NotEmpty(t, cont)
	s.create("d", "1")

	at := s.srv.Faults().CompactNow()
	require.Greater(t, at, rvNum(t, a))

	st := s.mustDo(http.MethodGet, s.cms()+"?resourceVersion="+rv(a)+"&resourceVersionMatch=Exact", "", http.StatusGone)
	assert.Equal(t, "Expired", st["reason"])
	st = s.mustDo(http.MethodGet, s.cms()+"?limit=1&continue="+url.QueryEscape(cont), "", http.StatusGone)
	assert.Equal(t, "Expired", st["reason"])

	w := s.watch("resourceVersion=" + rv(a))
	ev := w.next(false)
	assert.Equal(t, "ERROR", ev.Type, "a watch from a compacted revision gets 410 in the stream")
	assert.EqualValues(t, http.StatusGone, ev.Object["code"])
}

func testDeleteCollection(t *testing.T, s *server) {
	s.create("a", "1")
	s.create("b", "1")
	s.mustDo(http.MethodDelete, s.cms(), "", http.StatusOK)
	l := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	assert.Empty(t, items(l))
}

func testWatchFromZero(t *testing.T, s *server) {
	a := s.create("a", "1")
	w := s.watch("resourceVersion=0")
	ev := w.next(false)
	assert.Equal(t, "ADDED", ev.Type, "the current state first, as synthetic ADDED events")
	assert.Equal(t, rv(a), rv(ev.Object))
	b := s.create("b", "1")
	ev = w.next(false)
	assert.Equal(t, "ADDED", ev.Type)
	assert.Equal(t, rv(b), rv(ev.Object))
}

func (s *server) mergePatch(name, body string) {
	s.t.Helper()
	code, b := s.do(http.MethodPatch, s.cms()+"/"+name, body, "application/merge-patch+json")
	require.Equal(s.t, http.StatusOK, code, "%s", b)
}

// A label selector turns an object that stops matching into DELETED (with
// its previous state) and one that starts matching into ADDED.
func testWatchSelectorTransitions(t *testing.T, s *server) {
	l := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	w := s.watch("labelSelector=app%3Dselected&resourceVersion=" + rv(l))
	s.mustDo(http.MethodPost, s.cms(), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"sel","labels":{"app":"selected"}}}`, http.StatusCreated)
	assert.Equal(t, "ADDED", w.next(false).Type)
	s.mergePatch("sel", `{"metadata":{"labels":{"app":"other"}}}`)
	left := w.next(false)
	assert.Equal(t, "DELETED", left.Type)
	labels, _ := meta(left.Object)["labels"].(map[string]any)
	assert.Equal(t, "selected", labels["app"], "the previous state")
	s.mergePatch("sel", `{"metadata":{"labels":{"app":"selected"}}}`)
	assert.Equal(t, "ADDED", w.next(false).Type)
}

// A watch that allows bookmarks gets them periodically (the suite's
// servers send one a second) once the cache has moved past where the watch
// started, at a resourceVersion at least as new as what it delivered.
func testPeriodicBookmarks(t *testing.T, s *server) {
	a := s.create("a", "1")
	w := s.watch("allowWatchBookmarks=true&resourceVersion=" + rv(a))
	b := s.create("b", "1")
	ev := w.next(true)
	require.Equal(t, "ADDED", ev.Type)
	ev = w.next(true)
	require.Equal(t, string(api.Bookmark), ev.Type)
	assert.Equal(t, "ConfigMap", ev.Object["kind"])
	assert.GreaterOrEqual(t, rvNum(t, ev.Object), rvNum(t, b))
}

// The kill fault drops every watch connection; a client that watches
// again from the last resourceVersion it saw misses nothing.
func testKilledWatchResumes(t *testing.T, s *server) {
	l := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	w := s.watch("resourceVersion=" + rv(l))
	a := s.create("a", "1")
	ev := w.next(false)
	require.Equal(t, rv(a), rv(ev.Object))
	s.srv.Faults().KillWatchConnections()
	for range w.events {
	}
	b := s.create("b", "1")
	w2 := s.watch("resourceVersion=" + rv(ev.Object))
	ev = w2.next(false)
	assert.Equal(t, "ADDED", ev.Type)
	assert.Equal(t, rv(b), rv(ev.Object), "the change made while disconnected")
}

func testGenerateNameEtc(t *testing.T, s *server) {
	g := s.mustDo(http.MethodPost, s.cms(), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"generateName":"demo-"}}`, http.StatusCreated)
	name, _ := meta(g)["name"].(string)
	assert.Regexp(t, `^demo-[a-z0-9]{5}$`, name)

	deps := "/apis/apps/v1/namespaces/" + s.ns + "/deployments"
	d := s.mustDo(http.MethodPost, deps, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1}}`, http.StatusCreated)
	assert.EqualValues(t, 1, meta(d)["generation"])
	code, b := s.do(http.MethodPatch, deps+"/web", `{"spec":{"replicas":3}}`, "application/merge-patch+json")
	require.Equal(t, http.StatusOK, code, "%s", b)
	var p map[string]any
	require.NoError(t, json.Unmarshal(b, &p))
	assert.EqualValues(t, 2, meta(p)["generation"], "a spec change bumps generation")

	// Deleting a namespace marks it Terminating: what it holds stays (the
	// namespace controller deletes it), nothing new may be created, and
	// the finalize write that empties spec.finalizers deletes it.
	s.create("c", "1")
	ns := s.mustDo(http.MethodDelete, "/api/v1/namespaces/"+s.ns, "", http.StatusOK)
	assert.Equal(t, map[string]any{"phase": "Terminating"}, ns["status"])
	l := s.mustDo(http.MethodGet, s.cms(), "", http.StatusOK)
	assert.NotEmpty(t, items(l))
	s.mustDo(http.MethodPost, s.cms(), configMap("after", "1"), http.StatusForbidden)
	s.mustDo(http.MethodPut, "/api/v1/namespaces/"+s.ns+"/finalize",
		`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+s.ns+`"},"spec":{"finalizers":[]}}`, http.StatusOK)
	s.mustDo(http.MethodGet, "/api/v1/namespaces/"+s.ns, "", http.StatusNotFound)
	s.mustDo(http.MethodPost, s.cms(), configMap("after", "1"), http.StatusNotFound)
}

package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/websocket"

	"listwatch/api"
	"listwatch/internal/fixtures"
	"listwatch/internal/leakcheck"
)

// testServer is a Server on a loopback port plus an HTTP client of its own,
// so a test can close the client's idle connections and prove the server
// left no goroutine behind.
type testServer struct {
	*Server
	t      *testing.T
	client *http.Client
}

// revision is the store's current revision.
func (ts *testServer) revision() int64 {
	ts.t.Helper()
	rev, err := ts.Store().CurrentRevision(context.Background())
	require.NoError(ts.t, err)
	return rev
}

// startServer starts a server for one test and stops it (then checks for
// leaked goroutines) when the test ends.
func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	t.Cleanup(leakcheck.Check(t))
	srv, err := Start(context.Background(), cfg)
	require.NoError(t, err)
	transport := &http.Transport{DisableCompression: true}
	ts := &testServer{Server: srv, t: t, client: &http.Client{Transport: transport}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
		transport.CloseIdleConnections()
	})
	return ts
}

// response is an answer, fully read.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// req is one request to send.
type req struct {
	method string
	path   string
	body   string
	header map[string]string
}

// do sends a request with a non-curl User-Agent (compact JSON, as for
// client-go) and Accept: application/json unless the request says otherwise.
func (ts *testServer) do(r req) response {
	ts.t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, ts.URL()+r.path, body)
	require.NoError(ts.t, err)
	hr.Header.Set("User-Agent", "fixture-recorder")
	hr.Header.Set("Accept", "application/json")
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	resp, err := ts.client.Do(hr)
	require.NoError(ts.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(ts.t, err)
	return response{code: resp.StatusCode, header: resp.Header, body: b}
}

func (ts *testServer) get(path string) response { return ts.do(req{path: path}) }

// mustCode checks the code and returns the body.
func (r response) mustCode(t *testing.T, code int) []byte {
	t.Helper()
	require.Equal(t, code, r.code, "body: %s", r.body)
	return r.body
}

// object decodes the body as an object.
func (r response) object(t *testing.T) *api.Object {
	t.Helper()
	o := &api.Object{}
	require.NoError(t, o.UnmarshalJSON(r.body), "body: %s", r.body)
	return o
}

// list decodes the body as a list.
func (r response) list(t *testing.T) *api.List {
	t.Helper()
	l := &api.List{}
	require.NoError(t, l.UnmarshalJSON(r.body), "body: %s", r.body)
	return l
}

// status decodes the body as a Status.
func (r response) status(t *testing.T) *api.Status {
	t.Helper()
	s := &api.Status{}
	require.NoError(t, s.UnmarshalJSON(r.body), "body: %s", r.body)
	return s
}

// configMapJSON is a ConfigMap body.
func configMapJSON(name string, labels map[string]string, data map[string]string) string {
	o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}
	if labels != nil {
		o["metadata"].(map[string]any)["labels"] = labels
	}
	if data != nil {
		o["data"] = data
	}
	b, _ := json.Marshal(o)
	return string(b)
}

// createNamespace creates a namespace through the API.
func (ts *testServer) createNamespace(name string) {
	ts.t.Helper()
	ts.do(req{method: "POST", path: "/api/v1/namespaces",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `"}}`}).mustCode(ts.t, http.StatusCreated)
}

// createConfigMap creates a ConfigMap and returns it.
func (ts *testServer) createConfigMap(ns, name string, labels, data map[string]string) *api.Object {
	ts.t.Helper()
	r := ts.do(req{method: "POST", path: "/api/v1/namespaces/" + ns + "/configmaps", body: configMapJSON(name, labels, data)})
	r.mustCode(ts.t, http.StatusCreated)
	return r.object(ts.t)
}

// fixture reads a recorded response.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return fixtures.Read(t, name)
}

// volatile are values that differ between any two recordings: identities,
// revisions, times, tokens.
var volatile = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true,
	"time": true, "continue": true, "buildDate": true, "goVersion": true, "serverAddress": true}

var digits = regexp.MustCompile(`\d+`)

// normalize decodes JSON and blanks what may legitimately differ from a
// recording: managedFields (we keep none), volatile values, and numbers
// inside messages.
func normalize(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	return normalizeValue(v, "")
}

func normalizeValue(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "managedFields" {
				continue
			}
			out[k] = normalizeValue(e, k)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e, key)
		}
		return out
	case string:
		if volatile[key] {
			return "<" + key + ">"
		}
		if key == "message" {
			return digits.ReplaceAllString(x, "N")
		}
	}
	return v
}

// requireSameJSON checks got equals the fixture once both are normalized,
// and that both end (or not) in a newline the same way.
func requireSameJSON(t *testing.T, fixtureName string, got []byte) {
	t.Helper()
	want := fixture(t, fixtureName)
	require.Equal(t, bytes.HasSuffix(want, []byte("\n")), bytes.HasSuffix(got, []byte("\n")), "trailing newline, got %q", got)
	require.Equal(t, normalize(t, want), normalize(t, got), "fixture %s\n got: %s", fixtureName, got)
}

// shapeOf reduces a JSON value to its shape: objects keep their keys,
// arrays their first element, scalars their type. Lists in a recording and
// ours hold different numbers of items; their items must look alike.
func shapeOf(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			switch k {
			case "managedFields":
			case "labels", "annotations", "data":
				// User data: its keys are not part of the shape.
				out[k] = "map"
			default:
				out[k] = shapeOf(e)
			}
		}
		return out
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		return []any{shapeOf(x[0])}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "?"
}

// requireSameShape checks got has the fixture's shape field for field, and
// the same kind and apiVersion.
func requireSameShape(t *testing.T, fixtureName string, got []byte) {
	t.Helper()
	want := fixture(t, fixtureName)
	var w, g map[string]any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(got, &g), "%s", got)
	require.Equal(t, w["kind"], g["kind"], "kind")
	require.Equal(t, w["apiVersion"], g["apiVersion"], "apiVersion")
	require.Equal(t, bytes.HasSuffix(want, []byte("\n")), bytes.HasSuffix(got, []byte("\n")), "trailing newline")
	require.Equal(t, shapeOf(w), shapeOf(g), "fixture %s\n got: %s", fixtureName, got)
}

// watchConn is an open watch being read event by event.
type watchConn struct {
	t      *testing.T
	events chan api.Event
	errc   chan error
	close  func()
}

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// the server must be: on a busy machine under -race a correct one answers
// in far less, and a test that needs something to happen waits for it.
const safetyTimeout = 2 * time.Minute

// next returns the next event, failing the test after a bounded wait.
func (wc *watchConn) next() api.Event {
	wc.t.Helper()
	select {
	case ev, ok := <-wc.events:
		if !ok {
			wc.t.Fatalf("watch ended early: %v", <-wc.errc)
		}
		return ev
	case <-time.After(safetyTimeout):
		wc.t.Fatalf("no watch event within %s", safetyTimeout)
		return api.Event{}
	}
}

// ended waits for the stream to end and returns how (nil: clean EOF).
func (wc *watchConn) ended() error {
	wc.t.Helper()
	deadline := time.After(safetyTimeout)
	for {
		select {
		case ev, ok := <-wc.events:
			if !ok {
				return <-wc.errc
			}
			wc.t.Logf("event before the end: %s", ev.Type)
		case <-deadline:
			wc.t.Fatalf("watch did not end within %s", safetyTimeout)
			return nil
		}
	}
}

// transport is how a watch is read: chunked HTTP or websocket.
type transport string

const (
	chunked            transport = "chunked"
	websocketTransport transport = "websocket"
)

// watch opens a watch over the given transport and decodes its events.
func (ts *testServer) watch(tr transport, path string) *watchConn {
	ts.t.Helper()
	wc := &watchConn{t: ts.t, events: make(chan api.Event, 100), errc: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	var lines func(yield func([]byte) bool) error
	var closeConn func()
	switch tr {
	case chunked:
		hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+path, nil)
		require.NoError(ts.t, err)
		hr.Header.Set("User-Agent", "fixture-recorder")
		resp, err := ts.client.Do(hr)
		require.NoError(ts.t, err)
		require.Equal(ts.t, http.StatusOK, resp.StatusCode)
		require.Equal(ts.t, "application/json", resp.Header.Get("Content-Type"))
		require.Equal(ts.t, []string{"chunked"}, resp.TransferEncoding)
		closeConn = func() { resp.Body.Close() }
		lines = func(yield func([]byte) bool) error {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				if !yield(sc.Bytes()) {
					return nil
				}
			}
			return sc.Err()
		}
	case websocketTransport:
		u, err := url.Parse(ts.URL() + path)
		require.NoError(ts.t, err)
		u.Scheme = "ws"
		cfg, err := websocket.NewConfig(u.String(), "http://localhost")
		require.NoError(ts.t, err)
		conn, err := cfg.DialContext(ctx)
		require.NoError(ts.t, err)
		closeConn = func() { conn.Close() }
		lines = func(yield func([]byte) bool) error {
			for {
				var msg []byte
				if err := websocket.Message.Receive(conn, &msg); err != nil {
					if err == io.EOF {
						return nil
					}
					return err
				}
				if !bytes.HasSuffix(msg, []byte("\n")) {
					return io.ErrUnexpectedEOF
				}
				if !yield(bytes.TrimSuffix(msg, []byte("\n"))) {
					return nil
				}
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var decodeErr error
		err := lines(func(line []byte) bool {
			var ev api.Event
			if decodeErr = ev.UnmarshalJSON(line); decodeErr != nil {
				return false
			}
			select {
			case wc.events <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		})
		close(wc.events)
		wc.errc <- errors.Join(decodeErr, err)
	}()
	var once sync.Once
	wc.close = func() {
		once.Do(func() {
			cancel()
			closeConn()
			<-done
		})
	}
	ts.t.Cleanup(wc.close)
	return wc
}

// revisionOf is the revision an object was last written at.
func revisionOf(obj *api.Object) int64 {
	n, _ := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	return n
}

// deleteAtOnce deletes the object at path, and, for a namespace, which a
// DELETE only marks Terminating, also does the namespace controller's
// part: the finalize write that removes it.
func (ts *testServer) deleteAtOnce(path string) {
	ts.t.Helper()
	ts.do(req{method: "DELETE", path: path}).mustCode(ts.t, http.StatusOK)
	if name, ok := strings.CutPrefix(path, "/api/v1/namespaces/"); ok && !strings.Contains(name, "/") {
		ts.do(req{method: "PUT", path: path + "/finalize",
			body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + name + `"},"spec":{"finalizers":[]}}`}).mustCode(ts.t, http.StatusOK)
	}
}

package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	restclientwatch "k8s.io/client-go/rest/watch"

	"listwatch/api"
	"listwatch/client"
	"listwatch/internal/fixtures"
	"listwatch/interop"
)

// fixturesDir is where the recordings of a real kube-apiserver v1.37 live:
// the repository's testdata/fixtures, found by internal/fixtures.
func fixturesDir(t testing.TB) string {
	t.Helper()
	fixtures.Path(t, "README.md")
	return fixtures.Dir()
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	return fixtures.Read(t, name)
}

// wireEvent is what the recording itself says about one event, read with
// encoding/json: the ground truth both decoders are held against.
type wireEvent struct {
	Type   string `json:"type"`
	Object struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name            string `json:"name"`
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Code int32 `json:"code"`
	} `json:"object"`
}

// eventSummary is the part of an event every decoder must agree on.
type eventSummary struct {
	Type, Kind, Name, RV string
	Code                 int32
}

func (w wireEvent) summary() eventSummary {
	return eventSummary{w.Type, w.Object.Kind, w.Object.Metadata.Name, w.Object.Metadata.ResourceVersion, w.Object.Code}
}

func wireEvents(t testing.TB, data []byte) []eventSummary {
	t.Helper()
	var out []eventSummary
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev wireEvent
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		out = append(out, ev.summary())
	}
	require.NoError(t, sc.Err())
	return out
}

// clientGoScheme knows the typed core objects plus meta.k8s.io/v1 Table,
// so client-go decodes every recorded event into a typed object.
var clientGoScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := metav1.AddMetaToScheme(s); err != nil {
		panic(err)
	}
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// newClientGoWatcher decodes a JSON watch body exactly as client-go's
// rest.Request.Watch does: a JSON framer, a streaming decoder for the
// WatchEvent envelope, the embedded object decoded by the typed scheme,
// all under watch.StreamWatcher.
func newClientGoWatcher(body io.ReadCloser) (watch.Interface, error) {
	codecs := serializer.NewCodecFactory(clientGoScheme)
	negotiator := runtime.NewClientNegotiator(codecs.WithoutConversion(), corev1.SchemeGroupVersion)
	objectDecoder, streamingSerializer, framer, err := negotiator.StreamDecoder("application/json", nil)
	if err != nil {
		return nil, err
	}
	dec := streaming.NewDecoder(framer.NewFrameReader(body), streamingSerializer)
	return watch.NewStreamWatcher(restclientwatch.NewDecoder(dec, objectDecoder), errReporter{}), nil
}

// newDynamicClientGoWatcher decodes a watch stream as client-go's dynamic
// client does for custom resources, whose kinds no typed scheme knows: the
// WatchEvent envelope as usual, each object into an
// *unstructured.Unstructured.
func newDynamicClientGoWatcher(body io.ReadCloser) (watch.Interface, error) {
	codecs := serializer.NewCodecFactory(clientGoScheme)
	negotiator := runtime.NewClientNegotiator(codecs.WithoutConversion(), corev1.SchemeGroupVersion)
	_, streamingSerializer, framer, err := negotiator.StreamDecoder("application/json", nil)
	if err != nil {
		return nil, err
	}
	dec := streaming.NewDecoder(framer.NewFrameReader(body), streamingSerializer)
	return watch.NewStreamWatcher(restclientwatch.NewDecoder(dec, unstructured.UnstructuredJSONScheme), errReporter{}), nil
}

// errReporter turns a decode error into a 500 Status event, as client-go's
// errors.NewClientErrorReporter does.
type errReporter struct{}

func (errReporter) AsObject(err error) runtime.Object {
	return &metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: err.Error()}
}

func clientGoSummary(t testing.TB, ev watch.Event) eventSummary {
	t.Helper()
	gvk := ev.Object.GetObjectKind().GroupVersionKind()
	s := eventSummary{Type: string(ev.Type), Kind: gvk.Kind}
	switch o := ev.Object.(type) {
	case *metav1.Status:
		s.Code = o.Code
		s.Kind = "Status"
	case *metav1.Table: // kubectl get -w: one row per event, RV in the list metadata
		s.Kind, s.RV = "Table", o.ResourceVersion
	case metav1.Object:
		s.Name, s.RV = o.GetName(), o.GetResourceVersion()
		if s.Kind == "" { // typed decoding clears TypeMeta; recover it from the scheme
			if kinds, _, err := clientGoScheme.ObjectKinds(ev.Object); err == nil {
				s.Kind = kinds[0].Kind
			}
		}
	default:
		t.Fatalf("client-go decoded a %s event into %T", ev.Type, ev.Object)
	}
	return s
}

func ourSummary(ev api.Event) eventSummary {
	if ev.Type == api.Error {
		return eventSummary{Type: string(ev.Type), Kind: "Status", Code: ev.Status.Code}
	}
	return eventSummary{string(ev.Type), ev.Object.Kind, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, 0}
}

// TestRecordedWatchStreamsDecode feeds every recorded watch stream (HTTP
// and websocket payloads, which are the same newline-terminated JSON) to
// client-go's decoder, as a sanity check of the recordings and of our
// reading of them, and to our StreamWatcher: both must produce exactly the
// events the recording holds, then end quietly.
func TestRecordedWatchStreamsDecode(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir(t), "*.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			want := wireEvents(t, data)

			// A custom resource's stream is read as client-go's dynamic
			// client reads it; every other one with the typed scheme.
			newWatcher := newClientGoWatcher
			if strings.HasPrefix(name, "watch-crd-") {
				newWatcher = newDynamicClientGoWatcher
			}
			cg, err := newWatcher(io.NopCloser(bytes.NewReader(data)))
			require.NoError(t, err)
			var fromClientGo []eventSummary
			for ev := range cg.ResultChan() {
				fromClientGo = append(fromClientGo, clientGoSummary(t, ev))
			}
			assert.Equal(t, want, fromClientGo, "client-go")

			ours := client.NewStreamWatcher(io.NopCloser(bytes.NewReader(data)), nil)
			var fromOurs []eventSummary
			timeout := time.After(safetyTimeout)
		loop:
			for {
				select {
				case ev, ok := <-ours.ResultChan():
					if !ok {
						break loop
					}
					fromOurs = append(fromOurs, ourSummary(ev))
				case <-timeout:
					ours.Stop()
					t.Fatal("our StreamWatcher did not end at EOF")
				}
			}
			assert.Equal(t, want, fromOurs, "listwatch StreamWatcher")
		})
	}
}

// shapeCase is one request replayed against our server and compared with
// the recording of the same request.
type shapeCase struct {
	fixture     string
	method      string
	path        string
	query       url.Values
	contentType string
	body        string
	status      int
	// values adds member names whose values must match too (e.g. message).
	values []string
}

func (c shapeCase) run(t *testing.T, base string) []byte {
	t.Helper()
	method := c.method
	if method == "" {
		method = http.MethodGet
	}
	code, hdr, got := rawDo(t, method, base, c.path, c.query, c.contentType, []byte(c.body))
	assert.Equal(t, c.status, code, "%s %s?%s: %s", method, c.path, c.query.Encode(), got)
	assert.True(t, strings.HasPrefix(hdr.Get("Content-Type"), "application/json"), "Content-Type %q", hdr.Get("Content-Type"))
	assert.True(t, bytes.HasSuffix(got, []byte("\n")), "compact JSON ends with a newline, as kube-apiserver's does")
	opt := interop.DefaultShapeOptions
	opt.Values = append(append([]string{}, opt.Values...), c.values...)
	diffs, err := interop.ShapeDiff(readFixture(t, c.fixture), got, opt)
	require.NoError(t, err, "%s", got)
	assert.Empty(t, diffs, "%s vs %s %s:\n%s", c.fixture, method, c.path, got)
	return got
}

// TestServerOutputMatchesRecordedShapes replays, against our apiserver, the
// requests the fixtures recorded from kube-apiserver v1.37, building the
// same objects first, and compares every answer field for field (values of
// uids, timestamps and resourceVersions ignored; managedFields, which only
// a real apiserver writes, skipped).
func TestServerOutputMatchesRecordedShapes(t *testing.T) {
	fixturesDir(t)
	srv := startServer(t)
	base := srv.url
	cms := "/api/v1/namespaces/fixtures/configmaps"
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	msg := []string{"message"}
	ok := func(fixture string, c shapeCase) {
		t.Run(fixture, func(t *testing.T) {
			c.fixture = fixture
			c.run(t, base)
		})
	}

	ok("create-namespace-201.json", shapeCase{method: "POST", path: "/api/v1/namespaces", contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fixtures"}}`, status: 201})
	ok("list-empty.json", shapeCase{path: cms, status: 200})
	ok("create-configmap-201.json", shapeCase{method: "POST", path: cms, contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","labels":{"app":"demo"}},"data":{"k":"v1"}}`, status: 201})
	ok("create-configmap-beta-201.json", shapeCase{method: "POST", path: cms, contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"beta","labels":{"app":"demo"}},"data":{"k":"b"}}`, status: 201})
	ok("create-configmap-gamma-201.json", shapeCase{method: "POST", path: cms, contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gamma","labels":{"app":"other"}},"data":{"k":"g"}}`, status: 201})
	ok("list.json", shapeCase{path: cms, status: 200})
	// resourceVersion=0 reads the watch cache as it is, which may not have
	// the creates yet (k8s.io/apiserver v0.37.2
	// pkg/storage/cacher/watch_cache.go, waitUntilFreshLocked returns at
	// once for 0), and ours answers list.json's consistent list from the
	// store. A list not older than its revision waits for the cache.
	t.Run("the watch cache has the creates", func(t *testing.T) {
		_, _, body := rawDo(t, http.MethodGet, base, cms, nil, "", nil)
		var l struct {
			Metadata struct{ ResourceVersion string } `json:"metadata"`
		}
		require.NoError(t, json.Unmarshal(body, &l))
		code, _, body := rawDo(t, http.MethodGet, base, cms, q("resourceVersion", l.Metadata.ResourceVersion), "", nil)
		require.Equal(t, http.StatusOK, code, "%s", body)
	})
	ok("list-rv0.json", shapeCase{path: cms, query: q("resourceVersion", "0"), status: 200})
	ok("list-rv0-limit1.json", shapeCase{path: cms, query: q("resourceVersion", "0", "limit", "1"), status: 200})
	var page1 struct {
		Metadata struct{ Continue string } `json:"metadata"`
	}
	t.Run("list-page1-limit2.json", func(t *testing.T) {
		got := shapeCase{fixture: "list-page1-limit2.json", path: cms, query: q("limit", "2"), status: 200}.run(t, base)
		require.NoError(t, json.Unmarshal(got, &page1))
	})
	ok("list-page2-continue.json", shapeCase{path: cms, query: q("limit", "2", "continue", page1.Metadata.Continue), status: 200})
	ok("list-labelselector.json", shapeCase{path: cms, query: q("labelSelector", "app=demo"), status: 200})
	ok("list-fieldselector-name.json", shapeCase{path: cms, query: q("fieldSelector", "metadata.name=gamma"), status: 200})
	ok("get-configmap-200.json", shapeCase{path: cms + "/alpha", status: 200})
	ok("error-404-get-notfound.json", shapeCase{path: cms + "/does-not-exist", status: 404, values: msg})
	ok("error-409-alreadyexists.json", shapeCase{method: "POST", path: cms, contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","labels":{"app":"demo"}},"data":{"k":"v1"}}`, status: 409, values: msg})

	var alpha corev1.ConfigMap
	_, _, b := rawGet(t, base, cms+"/alpha", nil)
	require.NoError(t, json.Unmarshal(b, &alpha))
	staleRV := alpha.ResourceVersion
	ok("update-put-200.json", shapeCase{method: "PUT", path: cms + "/alpha", contentType: "application/json",
		body: fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","namespace":"fixtures","labels":{"app":"demo"},"resourceVersion":%q},"data":{"k":"v2"}}`, staleRV), status: 200})
	ok("error-409-conflict-stale-rv.json", shapeCase{method: "PUT", path: cms + "/alpha", contentType: "application/json",
		body: fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","namespace":"fixtures","labels":{"app":"demo"},"resourceVersion":%q},"data":{"k":"v3"}}`, staleRV), status: 409, values: msg})
	ok("patch-merge-200.json", shapeCase{method: "PATCH", path: cms + "/alpha", contentType: "application/merge-patch+json",
		body: `{"data":{"extra":"x"},"metadata":{"labels":{"tier":"web"}}}`, status: 200})
	ok("error-415-patch-wrong-content-type.json", shapeCase{method: "PATCH", path: cms + "/beta", contentType: "application/json",
		body: `{"data":{"k":"b3"}}`, status: 415})
	ok("delete-200.json", shapeCase{method: "DELETE", path: cms + "/beta", status: 200})
	ok("error-404-delete-notfound.json", shapeCase{method: "DELETE", path: cms + "/beta", status: 404, values: msg})
	ok("error-405-method-not-allowed.json", shapeCase{method: "PUT", path: cms, contentType: "application/json", body: `{}`, status: 405, values: msg})
	ok("error-404-unknown-resource.json", shapeCase{path: "/api/v1/namespaces/fixtures/foos", status: 404, values: msg})
	ok("error-400-bad-labelselector.json", shapeCase{path: cms, query: q("labelSelector", "app===demo"), status: 400})
	ok("error-422-invalid-name.json", shapeCase{method: "POST", path: cms, contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"},"data":{"k":"v"}}`, status: 422})
	ok("error-422-rvmatch-without-rv.json", shapeCase{path: cms, query: q("resourceVersionMatch", "NotOlderThan"), status: 422})
	ok("error-422-sendinitialevents-without-rvmatch.json", shapeCase{path: cms, query: q("watch", "1", "sendInitialEvents", "true", "timeoutSeconds", "2"), status: 422})
	ok("error-400-list-bad-rv.json", shapeCase{path: cms, query: q("resourceVersion", "abc"), status: 400})
	ok("error-500-watch-bad-rv.json", shapeCase{path: cms, query: q("watch", "1", "resourceVersion", "abc", "timeoutSeconds", "2"), status: 500})
}

// TestServerWatchStreamsMatchRecordedShapes replays the recorded watch
// scenarios, each in its own namespace set up like the recording's, and
// compares our stream event by event with the recorded one.
func TestServerWatchStreamsMatchRecordedShapes(t *testing.T) {
	fixturesDir(t)
	srv := startServer(t)
	w := srv.writeClient(t)
	ctx := context.Background()
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	// setup creates namespace ns with alpha (labels app, tier; data k, extra)
	// and gamma (label app; data k), the state of most watch recordings.
	setup := func(t *testing.T, ns string) string {
		createNamespace(t, w, ns)
		a := configMap(ns, "alpha", "v4", map[string]string{"app": "demo", "tier": "web"})
		a.Data["extra"] = "x"
		_, err := w.CoreV1().ConfigMaps(ns).Create(ctx, a, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = w.CoreV1().ConfigMaps(ns).Create(ctx, configMap(ns, "gamma", "g", map[string]string{"app": "other"}), metav1.CreateOptions{})
		require.NoError(t, err)
		list, err := w.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		return list.ResourceVersion
	}
	patch := func(t *testing.T, ns, name, body string) {
		t.Helper()
		code, _, b := rawDo(t, http.MethodPatch, srv.url, "/api/v1/namespaces/"+ns+"/configmaps/"+name, nil, "application/merge-patch+json", []byte(body))
		require.Equal(t, http.StatusOK, code, "%s", b)
	}
	opts := interop.DefaultShapeOptions
	compare := func(t *testing.T, fixture string, got []byte, n int) {
		t.Helper()
		want := readFixture(t, fixture)
		events, err := splitLines(want)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(events), n)
		diffs, err := interop.StreamShapeDiff(bytes.Join(events[:n], nil), got, opts)
		require.NoError(t, err)
		assert.Empty(t, diffs, "ours:\n%s", got)
	}

	t.Run("watch-from-list-rv.jsonl", func(t *testing.T) {
		rv := setup(t, "from-list")
		got := streamWatch(t, srv.url, "/api/v1/namespaces/from-list/configmaps", q("watch", "1", "resourceVersion", rv, "timeoutSeconds", "300"), 4, func() {
			_, err := w.CoreV1().ConfigMaps("from-list").Create(ctx, configMap("from-list", "w1", "1", map[string]string{"app": "demo"}), metav1.CreateOptions{})
			require.NoError(t, err)
			patch(t, "from-list", "w1", `{"data":{"k":"2"}}`)
			patch(t, "from-list", "w1", `{"metadata":{"labels":{"app":"changed"}}}`)
			require.NoError(t, w.CoreV1().ConfigMaps("from-list").Delete(ctx, "w1", metav1.DeleteOptions{}))
		})
		compare(t, "watch-from-list-rv.jsonl", got, 4)
	})
	t.Run("watch-no-rv-synthetic-added.jsonl", func(t *testing.T) {
		setup(t, "no-rv")
		got := streamWatch(t, srv.url, "/api/v1/namespaces/no-rv/configmaps", q("watch", "1", "timeoutSeconds", "300"), 3, func() {
			patch(t, "no-rv", "gamma", `{"data":{"k":"g2"}}`)
		})
		compare(t, "watch-no-rv-synthetic-added.jsonl", got, 3)
	})
	t.Run("watch-rv0.jsonl", func(t *testing.T) {
		setup(t, "rv0")
		got := streamWatch(t, srv.url, "/api/v1/namespaces/rv0/configmaps", q("watch", "1", "resourceVersion", "0", "timeoutSeconds", "300"), 2, nil)
		compare(t, "watch-rv0.jsonl", got, 2)
	})
	t.Run("watch-sendinitialevents.jsonl", func(t *testing.T) {
		setup(t, "initial")
		got := streamWatch(t, srv.url, "/api/v1/namespaces/initial/configmaps", q("watch", "1", "sendInitialEvents", "true",
			"resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true", "timeoutSeconds", "300"), 4, func() {
			patch(t, "initial", "gamma", `{"data":{"k":"g3"}}`)
		})
		compare(t, "watch-sendinitialevents.jsonl", got, 4)
	})
	t.Run("watch-bookmarks-timeout5.jsonl", func(t *testing.T) {
		rv := setup(t, "bookmarks")
		// The recording's BOOKMARK is the one the real server sends 1-2 s
		// before a timeoutSeconds deadline. Its shape is what is compared,
		// and a periodic BOOKMARK has the same; asking for frequent ones
		// makes one follow the patch however late a busy machine writes it,
		// where the pre-deadline one would race the patch (the watch cache's
		// own tests check when that one is due).
		srv.Faults().SetBookmarkInterval(100 * time.Millisecond)
		t.Cleanup(func() { srv.Faults().SetBookmarkInterval(0) })
		got := streamWatch(t, srv.url, "/api/v1/namespaces/bookmarks/configmaps", q("watch", "1", "allowWatchBookmarks", "true",
			"resourceVersion", rv, "timeoutSeconds", "300"), 2, func() {
			patch(t, "bookmarks", "alpha", `{"data":{"k":"v5"}}`)
		})
		compare(t, "watch-bookmarks-timeout5.jsonl", got, 2)
	})
	t.Run("watch-labelselector-transitions.jsonl", func(t *testing.T) {
		rv := setup(t, "transitions")
		got := streamWatch(t, srv.url, "/api/v1/namespaces/transitions/configmaps", q("watch", "1", "labelSelector", "app=selected",
			"resourceVersion", rv, "timeoutSeconds", "300"), 5, func() {
			_, err := w.CoreV1().ConfigMaps("transitions").Create(ctx, configMap("transitions", "sel", "1", map[string]string{"app": "selected"}), metav1.CreateOptions{})
			require.NoError(t, err)
			patch(t, "transitions", "sel", `{"data":{"k":"2"}}`)
			patch(t, "transitions", "sel", `{"metadata":{"labels":{"app":"other"}},"data":{"k":"3"}}`)
			patch(t, "transitions", "sel", `{"data":{"k":"4"}}`)
			patch(t, "transitions", "sel", `{"metadata":{"labels":{"app":"selected"}}}`)
			_, err = w.CoreV1().ConfigMaps("transitions").Create(ctx, configMap("transitions", "unsel", "1", map[string]string{"app": "other"}), metav1.CreateOptions{})
			require.NoError(t, err)
			require.NoError(t, w.CoreV1().ConfigMaps("transitions").Delete(ctx, "sel", metav1.DeleteOptions{}))
			require.NoError(t, w.CoreV1().ConfigMaps("transitions").Delete(ctx, "unsel", metav1.DeleteOptions{}))
		})
		compare(t, "watch-labelselector-transitions.jsonl", got, 5)
	})
	t.Run("watch-410-too-old-rv.jsonl", func(t *testing.T) {
		rv := setup(t, "too-old")
		_, err := w.CoreV1().ConfigMaps("too-old").Create(ctx, configMap("too-old", "newer", "1", nil), metav1.CreateOptions{})
		require.NoError(t, err)
		srv.Faults().CompactNow()
		got := streamWatch(t, srv.url, "/api/v1/namespaces/too-old/configmaps", q("watch", "1", "resourceVersion", rv, "timeoutSeconds", "300"), -1, nil)
		compare(t, "watch-410-too-old-rv.jsonl", got, 1)
	})
}

// splitLines cuts a recorded stream into its newline-terminated events.
func splitLines(data []byte) ([][]byte, error) {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, errors.New("stream does not end with a newline")
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out, nil
}

// streamWatch opens a watch with the recorder's headers, checks the
// response head like the recordings' (200, application/json, chunked),
// runs during, and returns the first n events as raw bytes (n < 0: read to
// the end of the stream). The callers' timeoutSeconds are long, so the
// watch cannot end before a busy machine has written what it should carry.
func streamWatch(t *testing.T, base, path string, query url.Values, n int, during func()) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+query.Encode(), nil)
	require.NoError(t, err)
	req.Header.Set("User-Agent", "fixture-recorder")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.Equal(t, []string{"chunked"}, resp.TransferEncoding)
	if during != nil {
		during()
	}
	br := bufio.NewReader(resp.Body)
	var out []byte
	for i := 0; n < 0 || i < n; i++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) && n < 0 && len(line) == 0 {
			break
		}
		require.NoError(t, err, "after %d events: %s", i, out)
		out = append(out, line...)
	}
	return out
}

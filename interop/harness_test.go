package interop_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"listwatch/apiserver"
)

// testServer is our apiserver running in this process on a loopback port.
type testServer struct {
	*apiserver.Server
	url string
}

// safetyTimeout bounds every wait for an answer, an event or a state. It
// only turns a hang into a failure, so it is generous: on a busy machine
// under -race a correct server answers in far less, and it is no bound on
// how fast anything must be.
const safetyTimeout = 2 * time.Minute

// testTimeout bounds a whole test that makes many requests in turn; like
// safetyTimeout, only a hang gets near it.
const testTimeout = 5 * time.Minute

// serverOption adjusts the apiserver configuration of one test.
type serverOption func(*apiserver.Config)

// withWatchTimeout makes watches without ?timeoutSeconds end after d (the
// server's min-request-timeout shrunk from 30 minutes to seconds).
func withWatchTimeout(d time.Duration) serverOption {
	return func(c *apiserver.Config) { c.MinRequestTimeout = d }
}

// withBookmarkInterval makes the server send periodic BOOKMARKs every d.
func withBookmarkInterval(d time.Duration) serverOption {
	return func(c *apiserver.Config) { c.BookmarkInterval = d }
}

// withHistory sets how many events each watch cache keeps for replay: a
// watch from a revision older than that gets 410 Expired.
func withHistory(events int) serverOption {
	return func(c *apiserver.Config) { c.HistorySize = events }
}

// withWatcherBuffer sets each watcher's queue in the watch cache, in
// frames; a watcher whose queue overflows is closed as too slow.
func withWatcherBuffer(frames int) serverOption {
	return func(c *apiserver.Config) { c.WatcherBuffer = frames }
}

// startServer starts our apiserver on 127.0.0.1:0 with the fault switches
// on, and stops it when the test ends.
func startServer(t testing.TB, opts ...serverOption) *testServer {
	t.Helper()
	cfg := apiserver.Config{Listen: "127.0.0.1:0", EnableFaults: true}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := apiserver.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return &testServer{Server: srv, url: srv.URL()}
}

// restConfig is the client-go configuration a user would write for our
// server: just the host. Everything else is client-go's default, which for
// the typed clientset means protobuf-first Accept headers and protobuf
// request bodies.
func (s *testServer) restConfig() *rest.Config {
	cfg := &rest.Config{Host: s.url, QPS: -1, UserAgent: "interop-test"}
	// A server with a generated certificate (SelfSignedTLS): trust it.
	cfg.CAData = s.CACertificate()
	return cfg
}

// readClient is a clientset on client-go's defaults: its reads ask for
// "application/vnd.kubernetes.protobuf,application/json" and our server
// answers protobuf. Used for reads, pagers, watches and informers.
func (s *testServer) readClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(s.restConfig())
	require.NoError(t, err)
	return cs
}

// writeClient is a clientset that writes JSON bodies (ContentType:
// application/json), the configuration of a client that avoids protobuf;
// defaultClient (defaultconfig_test.go) is the one that does not.
func (s *testServer) writeClient(t testing.TB) kubernetes.Interface {
	t.Helper()
	cfg := s.restConfig()
	cfg.ContentType = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

// createNamespace creates a namespace through client-go.
func createNamespace(t testing.TB, cs kubernetes.Interface, name string) {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// configMap builds a ConfigMap with one data key and optional labels.
func configMap(ns, name, value string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Data:       map[string]string{"k": value},
	}
}

// requestKind classifies a request as the counting transport sees it.
type requestKind int

const (
	kindOther requestKind = iota
	// kindList is a plain LIST (GET on a collection without watch).
	kindList
	// kindWatchList is a watch with sendInitialEvents=true: client-go's
	// streaming replacement for a LIST, so it counts as a (re)list.
	kindWatchList
	// kindWatch is a watch resuming from a resourceVersion.
	kindWatch
)

// requestCounter is an http.RoundTripper wrapper installed with
// rest.Config.WrapTransport. It counts, on the client side, the list and
// watch requests a client sends and the 410 Gone answers it receives, both
// as HTTP status codes and as in-stream ERROR events (the body is scanned as
// it is read, without changing it).
type requestCounter struct {
	rt       http.RoundTripper
	resource string // only requests whose path ends in this are counted

	lists, watchLists, watches atomic.Int64
	gone                       atomic.Int64

	mu      sync.Mutex
	log     []string
	blocked chan struct{} // non-nil while new requests are held back
}

// block holds every new request until unblock: a network partition on the
// client's side (requests already answered are not affected).
func (c *requestCounter) block() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked == nil {
		c.blocked = make(chan struct{})
	}
}

// unblock lets held and new requests through again.
func (c *requestCounter) unblock() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.blocked != nil {
		close(c.blocked)
		c.blocked = nil
	}
}

// wrap installs the counter on cfg.
func (c *requestCounter) wrap(cfg *rest.Config) {
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		c.rt = rt
		return c
	}
}

func classify(r *http.Request, resource string) requestKind {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/"+resource) {
		return kindOther
	}
	q := r.URL.Query()
	watch := q.Get("watch")
	if watch == "" || watch == "0" || watch == "false" {
		return kindList
	}
	if q.Get("sendInitialEvents") == "true" {
		return kindWatchList
	}
	return kindWatch
}

// RoundTrip counts the request and watches the response for 410s.
func (c *requestCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	blocked := c.blocked
	c.mu.Unlock()
	if blocked != nil {
		select {
		case <-blocked:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	kind := classify(r, c.resource)
	switch kind {
	case kindList:
		c.lists.Add(1)
	case kindWatchList:
		c.watchLists.Add(1)
	case kindWatch:
		c.watches.Add(1)
	}
	resp, err := c.rt.RoundTrip(r)
	if kind == kindOther {
		return resp, err
	}
	c.mu.Lock()
	c.log = append(c.log, fmt.Sprintf("%s %s -> %v", r.Method, r.URL.RawQuery, statusOf(resp, err)))
	c.mu.Unlock()
	if err != nil {
		return resp, err
	}
	if resp.StatusCode == http.StatusGone {
		c.gone.Add(1)
		return resp, nil
	}
	resp.Body = &goneScanner{ReadCloser: resp.Body, gone: &c.gone}
	return resp, nil
}

func statusOf(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	return resp.Status
}

// relists is how many times the client (re)built its state from scratch.
func (c *requestCounter) relists() int64 { return c.lists.Load() + c.watchLists.Load() }

func (c *requestCounter) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("lists=%d watchLists=%d watches=%d gone=%d\n%s",
		c.lists.Load(), c.watchLists.Load(), c.watches.Load(), c.gone.Load(), strings.Join(c.log, "\n"))
}

// goneScanner passes a watch body through unchanged and counts in-stream
// ERROR events carrying a 410. It keeps a short tail of the previous read so
// a marker split across two reads is still seen.
type goneScanner struct {
	io.ReadCloser
	gone *atomic.Int64
	tail []byte
}

// goneMarkers are a Status's code 410 in JSON and in protobuf (field 6,
// varint 410), for client-go's default protobuf watches.
var goneMarkers = [][]byte{[]byte(`"code":410`), []byte("\x30\x9a\x03")}

func (g *goneScanner) Read(p []byte) (int, error) {
	n, err := g.ReadCloser.Read(p)
	if n > 0 {
		old := len(g.tail)
		buf := append(g.tail, p[:n]...)
		for _, m := range goneMarkers {
			// Count only occurrences that end in the new bytes: one
			// wholly inside the kept tail was counted last time.
			for i := 0; ; {
				j := bytes.Index(buf[i:], m)
				if j < 0 {
					break
				}
				if i+j+len(m) > old {
					g.gone.Add(1)
				}
				i += j + 1
			}
		}
		// Keep less than the longest marker, enough to see one split
		// across two reads.
		keep := min(len(goneMarkers[0])-1, len(buf))
		g.tail = append(g.tail[:0], buf[len(buf)-keep:]...)
	}
	return n, err
}

// writeKubeconfig writes a kubeconfig for our server into a temp dir and
// returns its path.
func writeKubeconfig(t testing.TB, serverURL string) string {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: listwatch
  cluster:
    server: %s
users:
- name: anonymous
  user: {}
contexts:
- name: listwatch
  context:
    cluster: listwatch
    user: anonymous
    namespace: default
current-context: listwatch
`, serverURL)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
	return path
}

// rawGet does a GET with the headers the fixtures were recorded with.
func rawGet(t testing.TB, base, path string, query url.Values) (int, http.Header, []byte) {
	t.Helper()
	return rawDo(t, http.MethodGet, base, path, query, "", nil)
}

// rawDo sends one request with the fixture recorder's headers and returns
// status, headers and the whole body.
func rawDo(t testing.TB, method, base, path string, query url.Values, contentType string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("User-Agent", "fixture-recorder")
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// mustClientset builds a clientset from cfg.
func mustClientset(t testing.TB, cfg *rest.Config) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	require.NoError(t, err)
	return cs
}

package apiserver

//lint:file-ignore SA1019 the test client is golang.org/x/net/http2's ClientConn, as client-go's transport is x/net's: it gives one connection we dial and PINGs on it.

// The server over TLS and HTTP/2, over real loopback TLS: what a client-go
// program sees of a real cluster. The HTTP/2 client here is
// golang.org/x/net/http2's ClientConn on one TCP connection we dial, so a
// test knows exactly which connection carries which watch and can send
// PINGs on it.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/http2"

	"listwatch/api"
	"listwatch/apiserver/serving"
	"listwatch/apiserver/watchserver"
	"listwatch/internal/fixtures"
)

// clientTLS trusts the server's generated certificate and offers protos.
func clientTLS(t *testing.T, ts *testServer, protos ...string) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ts.CACertificate()), "the server has a certificate to trust")
	return &tls.Config{RootCAs: pool, NextProtos: protos, ServerName: "127.0.0.1"}
}

// h2Conn is one HTTP/2 connection to the server.
type h2Conn struct {
	t  *testing.T
	ts *testServer
	cc *http2.ClientConn
}

// dialH2 opens one TLS connection negotiating h2.
func dialH2(t *testing.T, ts *testServer) *h2Conn {
	t.Helper()
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL(), "https://"), clientTLS(t, ts, http2.NextProtoTLS))
	require.NoError(t, err)
	require.Equal(t, http2.NextProtoTLS, conn.ConnectionState().NegotiatedProtocol, "ALPN picks HTTP/2")
	cc, err := (&http2.Transport{}).NewClientConn(conn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cc.Close() })
	return &h2Conn{t: t, ts: ts, cc: cc}
}

func (c *h2Conn) do(method, path, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, c.ts.URL()+path, strings.NewReader(body))
	require.NoError(c.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return c.cc.RoundTrip(req)
}

// get answers a GET fully read; it fails the test on a transport error.
func (c *h2Conn) get(path string) (int, []byte) {
	c.t.Helper()
	resp, err := c.do(http.MethodGet, path, "")
	require.NoError(c.t, err)
	defer resp.Body.Close()
	require.Equal(c.t, 2, resp.ProtoMajor)
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp.StatusCode, b
}

// h2Watch is one watch, one stream of an h2Conn.
type h2Watch struct {
	t      *testing.T
	body   io.ReadCloser
	events chan api.Event
	err    chan error // the stream's end: nil for a clean end
}

func (c *h2Conn) watch(path string) *h2Watch {
	c.t.Helper()
	resp, err := c.do(http.MethodGet, path, "")
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	require.Equal(c.t, "application/json", resp.Header.Get("Content-Type"))
	require.Empty(c.t, resp.TransferEncoding, "HTTP/2 has its own framing")
	w := &h2Watch{t: c.t, body: resp.Body, events: make(chan api.Event, 100), err: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev api.Event
			if err := ev.UnmarshalJSON(sc.Bytes()); err != nil {
				w.err <- err
				return
			}
			w.events <- ev
		}
		w.err <- sc.Err()
	}()
	c.t.Cleanup(func() { _ = resp.Body.Close() })
	return w
}

func (w *h2Watch) next() api.Event {
	w.t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case err := <-w.err:
		w.t.Fatalf("watch ended (%v) before the next event", err)
	case <-time.After(safetyTimeout):
		w.t.Fatalf("no event within %s", safetyTimeout)
	}
	return api.Event{}
}

// ended waits for the stream's end: nil when it ended cleanly.
func (w *h2Watch) ended() error {
	w.t.Helper()
	deadline := time.After(safetyTimeout)
	for {
		select {
		case <-w.events:
		case err := <-w.err:
			return err
		case <-deadline:
			w.t.Fatalf("watch did not end within %s", safetyTimeout)
			return nil
		}
	}
}

func (ts *testServer) debug(t *testing.T) debugView {
	t.Helper()
	var v debugView
	require.NoError(t, json.Unmarshal(ts.get("/debug/listwatch").mustCode(t, http.StatusOK), &v))
	return v
}

// startTLS starts a server with a generated certificate; its test client
// speaks HTTP/1.1 over TLS.
func startTLS(t *testing.T, cfg Config) *testServer {
	t.Helper()
	cfg.SelfSignedTLS = true
	ts := startServer(t, cfg)
	ts.client.Transport.(*http.Transport).TLSClientConfig = clientTLS(t, ts, "http/1.1")
	return ts
}

func TestTLSServesHTTP2ByALPN(t *testing.T) {
	ts := startTLS(t, Config{})
	require.True(t, strings.HasPrefix(ts.URL(), "https://127.0.0.1:"), ts.URL())

	c := dialH2(t, ts)
	code, body := c.get("/version")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, string(body), `"gitVersion"`)

	w1 := c.watch("/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true")
	// A watch from no resourceVersion is a watch-list (1.37's default): the
	// current state, here nothing, then the bookmark that ends it.
	assert.Equal(t, api.Bookmark, w1.next().Type)
	w2 := c.watch("/api/v1/namespaces?watch=1")
	assert.Equal(t, "default", w2.next().Object.Metadata.Name)
	resp, err := c.do(http.MethodPost, "/api/v1/namespaces/default/configmaps", configMapJSON("x", nil, nil))
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	_ = resp.Body.Close()
	ev := w1.next()
	assert.Equal(t, api.Added, ev.Type)
	assert.Equal(t, "x", ev.Object.Metadata.Name)

	// The debug view (read over HTTP/1.1, a second connection) shows both
	// watches as streams of one HTTP/2 connection.
	v := ts.debug(t)
	require.Len(t, v.Watches, 2)
	assert.Equal(t, watchserver.TransportH2Stream, v.Watches[0].Transport)
	assert.Equal(t, watchserver.TransportH2Stream, v.Watches[1].Transport)
	assert.Equal(t, v.Watches[0].Connection, v.Watches[1].Connection, "one connection carries both")
	assert.NotZero(t, v.Watches[0].Connection)
	assert.Equal(t, 1, v.Connections.HTTP2)
	assert.GreaterOrEqual(t, v.Connections.Open, 2)
}

// The server's SETTINGS are kube-apiserver's, as recorded.
func TestHTTP2SettingsMatchTheRecording(t *testing.T) {
	rec := string(fixtures.Read(t, "http2-version-frames.txt"))
	line := regexp.MustCompile(`(?m)read SETTINGS len=\d+, settings: (.*)$`).FindStringSubmatch(rec)
	require.NotNil(t, line, "the recording has the server's SETTINGS")
	want := map[string]uint32{}
	for kv := range strings.SplitSeq(line[1], ", ") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		require.NoError(t, err)
		want[k] = uint32(n)
	}
	incr := regexp.MustCompile(`read WINDOW_UPDATE len=4 \(conn\) incr=(\d+)`).FindStringSubmatch(rec)
	require.NotNil(t, incr)

	ts := startTLS(t, Config{})
	conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.URL(), "https://"), clientTLS(t, ts, http2.NextProtoTLS))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, http2.ClientPreface)
	require.NoError(t, err)
	fr := http2.NewFramer(conn, conn)
	require.NoError(t, fr.WriteSettings())
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(safetyTimeout)))
	got := map[string]uint32{}
	var windowIncr uint32
	for windowIncr == 0 {
		f, err := fr.ReadFrame()
		require.NoError(t, err)
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				require.NoError(t, f.ForeachSetting(func(s http2.Setting) error {
					got[s.ID.String()] = s.Val
					return nil
				}))
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				windowIncr = f.Increment
			}
		}
	}
	// kube-apiserver 1.37 (golang.org/x/net v0.57) also announces RFC
	// 9218's NO_RFC7540_PRIORITIES, as ours does.
	assert.Equal(t, want, got)
	assert.Equal(t, incr[1], strconv.FormatUint(uint64(windowIncr), 10))
	assert.Equal(t, uint32(serving.MaxConcurrentStreams), got["MAX_CONCURRENT_STREAMS"])
}

// Every semantic of a watch holds over HTTP/2: a timeout ends the stream
// cleanly, bookmarks arrive, a stopped server ends it cleanly too.
func TestHTTP2WatchTimeoutAndBookmarks(t *testing.T) {
	ts := startTLS(t, Config{})
	c := dialH2(t, ts)
	start := time.Now()
	short := c.watch("/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
	require.NoError(t, short.ended(), "the timeout ends the stream cleanly")
	assert.GreaterOrEqual(t, time.Since(start), time.Second)

	ts.Faults().SetBookmarkInterval(100 * time.Millisecond)
	w := c.watch("/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true&timeoutSeconds=60")
	end := w.next() // a watch-list's end of the (empty) current state
	assert.Equal(t, "true", end.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
	ts.createConfigMap("default", "x", nil, nil)
	assert.Equal(t, api.Added, w.next().Type)
	assert.Equal(t, api.Bookmark, w.next().Type)

	code, _ := c.get("/api/v1/namespaces/default/configmaps/x")
	assert.Equal(t, http.StatusOK, code, "the connection carries requests beside the watch")
}

// The kill fault is a tcpkill: it resets the whole HTTP/2 connection, so
// every watch on it breaks at once and the connection is gone.
func TestHTTP2KillWatchesResetsTheConnection(t *testing.T) {
	ts := startTLS(t, Config{})
	c := dialH2(t, ts)
	w1 := c.watch("/api/v1/namespaces/default/configmaps?watch=1")
	w2 := c.watch("/api/v1/namespaces?watch=1")
	w2.next()
	assert.Equal(t, 2, ts.Faults().KillWatchConnections())
	assert.Error(t, w1.ended(), "a killed watch breaks, it does not end cleanly")
	assert.Error(t, w2.ended())
	_, err := c.do(http.MethodGet, "/version", "")
	assert.Error(t, err, "the connection itself is gone")
	require.Eventually(t, func() bool { return ts.debug(t).Connections.HTTP2 == 0 }, safetyTimeout, 10*time.Millisecond)
}

// The stream kill resets one stream per watch; the connection goes on.
func TestHTTP2KillWatchStreamsKeepsTheConnection(t *testing.T) {
	ts := startTLS(t, Config{})
	c := dialH2(t, ts)
	w := c.watch("/api/v1/namespaces?watch=1")
	w.next()
	assert.Equal(t, 1, ts.Faults().KillWatchStreams())
	assert.Error(t, w.ended(), "the stream breaks")
	code, _ := c.get("/version")
	assert.Equal(t, http.StatusOK, code, "on the same connection")
	again := c.watch("/api/v1/namespaces?watch=1")
	assert.Equal(t, "default", again.next().Object.Metadata.Name)
}

// The stall fault freezes the whole connection: no more events and no
// answer to a PING, which is how an HTTP/2 client finds a dead
// connection; the kill fault then drops it.
func TestHTTP2StallFreezesTheConnection(t *testing.T) {
	ts := startTLS(t, Config{})
	c := dialH2(t, ts)
	w := c.watch("/api/v1/namespaces/default/configmaps?watch=1")
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, c.cc.Ping(ctx), "a live connection answers PINGs")

	// Frozen, the connection holds the event's write and leaves a PING
	// unanswered until the kill ends it: the PING fails then, and no event
	// came before it. Nothing waits a short while to see that nothing
	// comes.
	ts.Faults().StallWatches()
	ts.createConfigMap("default", "unsent", nil, nil)
	pinged := make(chan error, 1)
	go func() { pinged <- c.cc.Ping(ctx) }()
	require.Eventually(t, func() bool { return ts.Faults().Held().Load() == 1 }, safetyTimeout, 10*time.Millisecond)
	assert.Equal(t, 1, ts.Faults().KillWatchConnections())
	assert.Error(t, <-pinged, "a frozen connection answers nothing")
	select {
	case ev := <-w.events:
		t.Fatalf("an event got through a stalled connection: %v", ev.Type)
	default:
	}
	assert.Error(t, w.ended())
}

// A frozen connection does not hold up Stop.
func TestStopResetsFrozenConnections(t *testing.T) {
	srv, err := Start(context.Background(), Config{SelfSignedTLS: true})
	require.NoError(t, err)
	ts := &testServer{Server: srv, t: t}
	c := dialH2(t, ts)
	c.watch("/api/v1/namespaces?watch=1").next()
	srv.Faults().StallWatches()
	// Stop resets the frozen connection: were it to wait for it instead,
	// the graceful shutdown would run out of ctx and Stop would fail. No
	// time is asserted; ctx only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, srv.Stop(ctx))
}

// HTTP/1.1 over TLS keeps its transports: chunked on a connection of its
// own, and websockets; the certificate can come from files.
func TestTLSFromFilesServesHTTP1(t *testing.T) {
	dir := t.TempDir()
	certPEM, keyPEM, err := serving.GenerateSelfSigned(serving.SelfSignedHosts, time.Now())
	require.NoError(t, err)
	certFile, keyFile := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	require.NoError(t, os.WriteFile(certFile, certPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, keyPEM, 0o600))

	ts := startServer(t, Config{TLSCertFile: certFile, TLSKeyFile: keyFile})
	require.Nil(t, ts.CACertificate(), "the files' CA is the operator's to hand out")
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(certPEM))
	ts.client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}

	// A long watch, ended by the server's stop once it has been looked at:
	// a short timeout could end it first on a busy machine.
	w := ts.watch(chunked, "/api/v1/namespaces?watch=1&timeoutSeconds=3600")
	requireEvent(t, w.next(), api.Added, "default")
	v := ts.debug(t)
	require.Len(t, v.Watches, 1)
	assert.Equal(t, watchserver.TransportH1Chunked, v.Watches[0].Transport)
	assert.Zero(t, v.Connections.HTTP2)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, ts.Stop(ctx))
	require.NoError(t, w.ended())

	_, err = Start(context.Background(), Config{TLSCertFile: certFile})
	assert.Error(t, err, "a certificate without its key")
	_, err = Start(context.Background(), Config{TLSCertFile: certFile, TLSKeyFile: filepath.Join(dir, "missing")})
	assert.Error(t, err)
}

func TestKubeconfig(t *testing.T) {
	ts := startTLS(t, Config{Token: "s3cret"})
	kc := string(ts.Kubeconfig())
	assert.Contains(t, kc, "server: "+ts.URL()+"\n")
	assert.Contains(t, kc, "token: s3cret\n")
	assert.Contains(t, kc, "certificate-authority-data: ")
	assert.Contains(t, kc, "current-context: listwatch\n")
	plain := startServer(t, Config{})
	assert.NotContains(t, string(plain.Kubeconfig()), "certificate-authority-data")
	assert.Contains(t, string(plain.Kubeconfig()), "token: ", "a placeholder, so kubectl does not prompt")
}

// kubectl with nothing but the kubeconfig the server wrote: https, HTTP/2.
func TestKubectlOverTLS(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startTLS(t, Config{})
	k := newKubectl(t, ts)
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, ts.Kubeconfig(), 0o600))
	k.env = append(k.env, "KUBECONFIG="+kubeconfig)
	assert.Contains(t, k.run("create", "configmap", "x", "--from-literal=k=v"), "configmap/x created")
	assert.Contains(t, k.run("get", "configmaps"), "x")
	assert.Contains(t, k.run("get", "namespaces"), "kube-system")
}

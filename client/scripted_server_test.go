package client

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// This file is the test harness: an httptest server whose watch responses
// are scripted byte by byte, over chunked HTTP or over a websocket, so every
// test of the watch path can run over both transports.

// transports are the two ways a watch travels; watch tests run over both.
var transports = []TransportKind{TransportHTTP, TransportWebSocket}

// stream is the server's end of one scripted watch response.
type stream interface {
	// Send writes b as one HTTP chunk (flushed at once) or as one
	// websocket text message. b need not be a whole event.
	Send(b []byte)
	// Reset aborts the connection with a TCP RST, wherever the stream is.
	Reset()
	// Drop closes the connection without ending the response properly
	// (no terminal chunk, no close frame): the client sees EOF mid-body.
	Drop()
	// Stall stops writing but keeps the connection open until the client
	// goes away, as a half-open connection looks to the client.
	Stall()
}

// script writes one watch response. Returning ends the response cleanly
// (terminal chunk, or a close frame) unless it called Reset or Drop.
type script func(s stream, r *http.Request)

// newScriptedServer serves every request with the script; a websocket
// upgrade request gets the same script as websocket messages.
func newScriptedServer(t *testing.T, sc script) *httptest.Server {
	t.Helper()
	return httptest.NewServer(scriptHandler(t, sc))
}

func scriptHandler(t *testing.T, sc script) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			serveWebSocketScript(t, w, r, sc)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s := &httpStream{w: w, r: r}
		sc(s, r)
	}
}

// httpStream scripts a chunked HTTP response.
type httpStream struct {
	w    http.ResponseWriter
	r    *http.Request
	gone bool
}

func (s *httpStream) Send(b []byte) {
	if s.gone {
		return
	}
	if _, err := s.w.Write(b); err != nil {
		s.gone = true
		return
	}
	s.w.(http.Flusher).Flush()
}

func (s *httpStream) hijack() net.Conn {
	conn, _, err := http.NewResponseController(s.w).Hijack()
	if err != nil {
		panic(err)
	}
	s.gone = true
	return conn
}

func (s *httpStream) Reset() {
	if s.gone {
		return
	}
	resetConn(s.hijack())
}

func (s *httpStream) Drop() {
	if s.gone {
		return
	}
	_ = s.hijack().Close()
}

func (s *httpStream) Stall() {
	if s.gone {
		return
	}
	<-s.r.Context().Done()
}

// resetConn closes c with SO_LINGER 0, so the kernel sends RST, not FIN.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// serveWebSocketScript performs the websocket handshake by hand and writes
// raw frames, so that a test controls every byte (x/net's server cannot
// drop a connection without a close frame).
func serveWebSocketScript(t *testing.T, w http.ResponseWriter, r *http.Request, sc script) {
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || r.Header.Get("Origin") == "" {
		// kube-apiserver (x/net/websocket) refuses a handshake without
		// an Origin: 403, empty body.
		w.WriteHeader(http.StatusForbidden)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Accept: "+base64.StdEncoding.EncodeToString(h[:])+"\r\n\r\n")
	s := &wsStream{conn: conn, br: brw.Reader}
	sc(s, r)
	if !s.gone {
		// A clean end: close frame with status 1000, as kube-apiserver
		// sends at timeoutSeconds (ws-watch-server-timeout.jsonl).
		_, _ = conn.Write([]byte{0x88, 0x02, 0x03, 0xe8})
		_ = conn.Close()
	}
}

// wsStream scripts a websocket response with raw frames.
type wsStream struct {
	conn net.Conn
	br   *bufio.Reader
	gone bool
}

func (s *wsStream) Send(b []byte) {
	if s.gone {
		return
	}
	if _, err := s.conn.Write(wsTextFrame(b)); err != nil {
		s.gone = true
	}
}

// wsTextFrame is one unmasked, unfragmented text frame (FIN=1, opcode 1),
// what kube-apiserver sends per event.
func wsTextFrame(p []byte) []byte {
	f := []byte{0x81}
	switch n := len(p); {
	case n < 126:
		f = append(f, byte(n))
	case n <= 0xffff:
		f = append(f, 126, 0, 0)
		binary.BigEndian.PutUint16(f[2:], uint16(n))
	default:
		f = append(f, 127, 0, 0, 0, 0, 0, 0, 0, 0)
		binary.BigEndian.PutUint64(f[2:], uint64(n))
	}
	return append(f, p...)
}

func (s *wsStream) Reset() {
	if !s.gone {
		s.gone = true
		resetConn(s.conn)
	}
}

func (s *wsStream) Drop() {
	if !s.gone {
		s.gone = true
		_ = s.conn.Close()
	}
}

func (s *wsStream) Stall() {
	if s.gone {
		return
	}
	// Read (and ignore) what the client sends until it goes away.
	_, _ = io.Copy(io.Discard, s.br)
	s.gone = true
	_ = s.conn.Close()
}

// configMaps is the resource most tests use.
var configMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// newTestClient is a client for srv using transport.
func newTestClient(t *testing.T, srv *httptest.Server, transport TransportKind, mutate ...func(*Config)) *Client {
	t.Helper()
	cfg := Config{Host: srv.URL, Transport: transport}
	for _, m := range mutate {
		m(&cfg)
	}
	c, err := New(cfg)
	require.NoError(t, err)
	return c
}

// eventLine is the compact JSON of an event plus the newline the server
// puts after it.
func eventLine(t testing.TB, ev api.Event) []byte {
	t.Helper()
	b, err := ev.MarshalJSON()
	require.NoError(t, err)
	return append(b, '\n')
}

// cm is a ConfigMap event at rv.
func cm(typ api.EventType, name, rv string) api.Event {
	return api.Event{Type: typ, Object: &api.Object{
		APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Name: name, Namespace: "ns", ResourceVersion: rv},
		Fields:   []api.Field{{Name: "data", Value: []byte(`{"k":"` + rv + `"}`)}},
	}}
}

// bookmark is a BOOKMARK event at rv, shaped like the real server's.
func bookmark(rv string) api.Event {
	return api.Event{Type: api.Bookmark, Object: &api.Object{
		APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{ResourceVersion: rv},
	}}
}

// collect reads w until its channel closes (bounded by a timeout).
func collect(t *testing.T, w Watcher) []api.Event {
	t.Helper()
	var got []api.Event
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-timeout(t):
			t.Fatalf("watch did not end; got %d event(s) so far", len(got))
		}
	}
}

// next receives one event, failing the test if none comes in time or the
// channel closes.
func next(t *testing.T, w Watcher) api.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(t, ok, "ResultChan closed early")
		return ev
	case <-timeout(t):
		t.Fatal("no event in time")
	}
	return api.Event{}
}

// requireClosed asserts that w's channel closes with no further event.
func requireClosed(t *testing.T, w Watcher) {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.False(t, ok, "expected ResultChan to close, got %s", describe(ev))
	case <-timeout(t):
		t.Fatal("ResultChan did not close")
	}
}

// safetyTimeout bounds every wait in these tests: far above what any step
// needs even on a busy machine under -race, so it only turns a hang into a
// failure. It is no bound on how fast anything must be.
const safetyTimeout = 2 * time.Minute

// timeout is a channel that fires after safetyTimeout.
func timeout(t *testing.T) <-chan time.Time {
	t.Helper()
	return time.After(safetyTimeout)
}

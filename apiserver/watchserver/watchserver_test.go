package watchserver

// Tests of the WatchServer alone, over real loopback HTTP, with raw clients that
// see the wire as it is: chunk boundaries and the terminating chunk for
// plain HTTP, frame opcodes and close codes for websocket. The server here
// is a minimal handler that calls Server.Serve directly, so
// these tests do not depend on the REST layer. Identifiers start with "sw"
// to keep clear of the package's other tests.

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

const swPrefix = "/registry/configmaps/"

// swEnv is a store, a cacher and an HTTP server whose only handler is a
// watch of configmaps.
type swEnv struct {
	t       *testing.T
	s       *store.Store
	c       *cacher.Cacher
	srv     *httptest.Server
	stall   chan struct{}
	active  atomic.Int64 // handlers running
	handled atomic.Int64 // handlers finished
}

// swStart serves GET /watch?rv=N&timeout=D&bookmarks=1&initial=true|false.
// The objects named in before exist when the cache starts.
func swStart(t *testing.T, before ...string) *swEnv {
	t.Helper()
	return swStartWith(t, cacher.Config{}, before...)
}

// swStartWith is swStart with the cacher's other settings in cfg.
func swStartWith(t *testing.T, cfg cacher.Config, before ...string) *swEnv {
	t.Helper()
	e := &swEnv{t: t, s: store.New(store.Options{}), stall: make(chan struct{})}
	for _, name := range before {
		e.create(name, "0")
	}
	cfg.Store, cfg.Prefix, cfg.Kind, cfg.APIVersion = e.s, swPrefix, "ConfigMap", "v1"
	cfg.Resource = api.GroupResource{Resource: "configmaps"}
	c, err := cacher.New(context.Background(), cfg)
	require.NoError(t, err)
	e.c = c
	e.srv = httptest.NewServer(http.HandlerFunc(e.handle))
	t.Cleanup(func() {
		e.c.Stop()
		e.srv.Close()
		e.s.Close()
	})
	return e
}

func (e *swEnv) handle(w http.ResponseWriter, r *http.Request) {
	e.active.Add(1)
	defer e.handled.Add(1)
	defer e.active.Add(-1)
	q := r.URL.Query()
	opts := cacher.WatchOptions{AllowBookmarks: q.Get("bookmarks") == "1", Description: r.UserAgent()}
	if s := q.Get("rv"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		opts.ResourceVersion, opts.RVSet = n, true
	}
	if s := q.Get("initial"); s != "" {
		b := s == "true"
		opts.SendInitialEvents = &b
	}
	var timeout time.Duration
	if s := q.Get("timeout"); s != "" {
		timeout, _ = time.ParseDuration(s)
	}
	// No Detach: the whole watch runs in the handler, which the tests count.
	New(Config{Faults: swFaults{stall: e.stall}}).Serve(w, r, Request{Source: FromCache(e.c), Options: opts, Timeout: timeout})
}

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// a watch must be served: on a busy machine under -race a correct server
// answers in far less, and a test that needs something waits for it.
const safetyTimeout = 2 * time.Minute

// swFaults has only the stall switch, which a test closes.
type swFaults struct{ stall chan struct{} }

func (f swFaults) StallChannel() <-chan struct{} { return f.stall }
func (f swFaults) KillChannel() <-chan struct{}  { return nil }
func (f swFaults) Held() *atomic.Int64           { return nil }
func (f swFaults) WatchTimeout() time.Duration   { return 0 }

func (e *swEnv) create(name string, data string) *api.Object {
	e.t.Helper()
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: name, Namespace: "ns"}}
	require.NoError(e.t, o.Set("data", []byte(`{"k":`+strconv.Quote(data)+`}`)))
	got, err := e.s.Create(context.Background(), swPrefix+"ns/"+name, o)
	require.NoError(e.t, err)
	if e.c != nil {
		// Wait until the cache has it, so a watch started next sees it in
		// the state and not as a live event.
		require.Eventually(e.t, func() bool { return e.c.Revision() >= e.s.Revision() }, safetyTimeout, time.Millisecond)
	}
	return got
}

// swFrame is the frame the cacher sends for an event about o.
func swFrame(typ api.EventType, o *api.Object) string {
	ev := api.Event{Type: typ, Object: o}
	return string(ev.AppendJSON(nil)) + "\n"
}

// swClient is one watch seen from the client side, whatever the transport.
type swClient interface {
	// next returns the frames of the next message (a chunk may hold
	// several; a websocket message holds exactly one). It returns io.EOF
	// when the server ended the stream cleanly, another error when the
	// stream broke, and a net.Error with Timeout() after d of silence.
	next(d time.Duration) ([]string, error)
	close()
}

type swTransport struct {
	name string
	dial func(t *testing.T, e *swEnv, query string) swClient
}

var swTransports = []swTransport{
	{"chunked", func(t *testing.T, e *swEnv, q string) swClient { return swDialChunked(t, e, q) }},
	{"websocket", func(t *testing.T, e *swEnv, q string) swClient { return swDialWebsocket(t, e, q) }},
}

// nextN collects exactly n frames.
func swNextN(t *testing.T, c swClient, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		fs, err := c.next(safetyTimeout)
		require.NoError(t, err, "after %d of %d frames", len(out), n)
		out = append(out, fs...)
	}
	require.Len(t, out, n)
	return out
}

// swEnd waits for the end of the stream and returns how it ended.
func swEnd(t *testing.T, c swClient) error {
	t.Helper()
	deadline := time.Now().Add(safetyTimeout)
	for {
		fs, err := c.next(time.Until(deadline))
		require.Empty(t, fs, "frames before the end")
		if err != nil {
			var ne net.Error
			require.False(t, errors.As(err, &ne) && ne.Timeout(), "the stream did not end within %v", safetyTimeout)
			return err
		}
	}
}

func swQuiet(t *testing.T, c swClient, d time.Duration) {
	t.Helper()
	fs, err := c.next(d)
	require.Empty(t, fs)
	var ne net.Error
	require.True(t, errors.As(err, &ne) && ne.Timeout(), "expected silence, got %v", err)
}

// TestServeWatchTransports is the one behaviour suite both transports pass.
func TestServeWatchTransports(t *testing.T) {
	for _, tr := range swTransports {
		t.Run(tr.name, func(t *testing.T) {
			t.Run("events", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				b := e.create("b", "1")
				a := e.create("a", "1")
				c := tr.dial(t, e, "")
				defer c.close()
				got := swNextN(t, c, 2) // the state, sorted by key
				assert.Equal(t, []string{swFrame(api.Added, a), swFrame(api.Added, b)}, got)
				n := e.create("n", "x")
				assert.Equal(t, []string{swFrame(api.Added, n)}, swNextN(t, c, 1))
			})

			t.Run("timeout ends cleanly", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				start := time.Now()
				c := tr.dial(t, e, "?initial=false&timeout=300ms")
				defer c.close()
				require.ErrorIs(t, swEnd(t, c), io.EOF)
				assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
			})

			t.Run("timeout ends a busy watch too", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				c := tr.dial(t, e, "?initial=false&timeout=300ms")
				defer c.close()
				stop := make(chan struct{})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						default:
						}
						o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: fmt.Sprint("busy", i), Namespace: "ns"}}
						_, _ = e.s.Create(context.Background(), swPrefix+"ns/"+o.Metadata.Name, o)
						time.Sleep(time.Millisecond)
					}
				}()
				defer func() { close(stop); <-done }()
				for {
					fs, err := c.next(safetyTimeout)
					if err != nil {
						require.ErrorIs(t, err, io.EOF)
						break
					}
					require.NotEmpty(t, fs)
				}
			})

			t.Run("410 in-stream then a clean end", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t, "a", "b") // the cache starts at rev 3
				c := tr.dial(t, e, "?rv=1")
				defer c.close()
				got := swNextN(t, c, 1)
				assert.Equal(t, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 (3)","reason":"Expired","code":410}}`+"\n", got[0])
				require.ErrorIs(t, swEnd(t, c), io.EOF)
			})

			t.Run("a stopped cache ends watches cleanly", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				c := tr.dial(t, e, "?initial=false")
				defer c.close()
				swQuiet(t, c, 20*time.Millisecond)
				e.c.Stop()
				require.ErrorIs(t, swEnd(t, c), io.EOF)
			})

			t.Run("killed watches break abruptly", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				c := tr.dial(t, e, "?initial=false")
				defer c.close()
				e.create("a", "1")
				swNextN(t, c, 1)
				require.Equal(t, 1, e.c.KillWatchers())
				err := swEnd(t, c)
				require.Error(t, err)
				assert.NotErrorIs(t, err, io.EOF, "a killed watch must not end cleanly")
			})

			t.Run("stalled watches write nothing and stay open", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				c := tr.dial(t, e, "?initial=false&timeout=200ms")
				e.create("a", "1")
				swNextN(t, c, 1)
				close(e.stall)
				e.create("b", "1")
				// Past the timeout: still nothing, and no end either.
				swQuiet(t, c, 400*time.Millisecond)
				require.Equal(t, int64(1), e.active.Load(), "the handler holds the connection")
				c.close()
				require.Eventually(t, func() bool { return e.active.Load() == 0 }, safetyTimeout, time.Millisecond)
			})

			t.Run("a client going away ends the handler", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				e := swStart(t)
				c := tr.dial(t, e, "?initial=false")
				swQuiet(t, c, 20*time.Millisecond)
				require.Len(t, e.c.Stats().Watchers, 1)
				c.close()
				require.Eventually(t, func() bool { return e.handled.Load() == 1 }, safetyTimeout, time.Millisecond)
				assert.Empty(t, e.c.Stats().Watchers)
			})

			t.Run("bookmarks", func(t *testing.T) {
				t.Cleanup(leakcheck.Check(t))
				// Periodic bookmarks, often: the transport's part is to carry
				// them, whenever they come (the cacher's tests check when
				// they are due). None comes before the cache moves past the
				// watch's start, so the first follows n's event.
				e := swStartWith(t, cacher.Config{BookmarkInterval: func() time.Duration { return 20 * time.Millisecond }})
				o := e.create("a", "1")
				c := tr.dial(t, e, "?bookmarks=1&rv="+strconv.FormatInt(e.c.Revision()-1, 10))
				defer c.close()
				assert.Equal(t, []string{swFrame(api.Added, o)}, swNextN(t, c, 1))
				n := e.create("n", "1")
				var got []string // a chunk may carry the event and a bookmark
				for len(got) < 2 {
					fs, err := c.next(safetyTimeout)
					require.NoError(t, err)
					got = append(got, fs...)
				}
				assert.Equal(t, swFrame(api.Added, n), got[0])
				assert.Equal(t, `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"`+
					n.Metadata.ResourceVersion+`"}}}`+"\n", got[1])
				e.c.Stop() // a clean end, after more bookmarks perhaps
				for {
					fs, err := c.next(safetyTimeout)
					for _, f := range fs {
						assert.Contains(t, f, `{"type":"BOOKMARK"`)
					}
					if err != nil {
						require.ErrorIs(t, err, io.EOF)
						break
					}
				}
			})
		})
	}
}

func TestServeWatchChunkedWire(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := swStart(t)
	a := e.create("a", "1")
	b := e.create("b", "1")
	c := swDialChunked(t, e, "")
	defer c.close()
	assert.Equal(t, 200, c.status)
	assert.Equal(t, "application/json", c.header.Get("Content-Type"))
	assert.Equal(t, "chunked", c.header.Get("Transfer-Encoding"))
	// Like the recording (watch-no-rv-synthetic-added): the initial
	// events come in ONE chunk, written with one write.
	fs, err := c.next(safetyTimeout)
	require.NoError(t, err)
	assert.Equal(t, []string{swFrame(api.Added, a), swFrame(api.Added, b)}, fs)

	// Headers are flushed before any event: a quiet watch has its 200.
	q := swDialChunked(t, e, "?initial=false")
	defer q.close()
	assert.Equal(t, 200, q.status)
}

// The HTTP/1.1 watch is framed by us on the hijacked connection
// (watch_chunked.go): a burst is cut into chunks of at most maxBatchBytes,
// a frame bigger than that travels alone in its chunk, every chunk ends in
// CRLF, and after the terminating chunk the server closes the connection
// in order (FIN, not a reset).
func TestServeWatchChunkedFraming(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := swStart(t)
	var want []string
	for i := range 80 {
		o := e.create(fmt.Sprintf("cm-%03d", i), strings.Repeat("x", 1000))
		want = append(want, swFrame(api.Added, o))
	}
	big := e.create("cm-big", strings.Repeat("y", maxBatchBytes+100))
	want = append(want, swFrame(api.Added, big))
	c := swDialChunked(t, e, "?timeout=1s")
	defer c.close()
	assert.Equal(t, "chunked", c.header.Get("Transfer-Encoding"))
	assert.Equal(t, "close", c.header.Get("Connection"), "the connection ends with the watch")
	assert.NotEmpty(t, c.header.Get("Date"))

	require.NoError(t, c.conn.SetReadDeadline(time.Now().Add(safetyTimeout)))
	var got []string
	chunks := 0
	for {
		line, err := c.br.ReadString('\n')
		require.NoError(t, err)
		require.True(t, strings.HasSuffix(line, "\r\n"), "size line %q", line)
		size, err := strconv.ParseInt(strings.TrimSuffix(line, "\r\n"), 16, 64)
		require.NoError(t, err)
		body := make([]byte, size+2)
		_, err = io.ReadFull(c.br, body)
		require.NoError(t, err)
		require.Equal(t, "\r\n", string(body[size:]), "chunk %d ends in CRLF", chunks)
		if size == 0 {
			break
		}
		chunks++
		frames := strings.SplitAfter(string(body[:size]), "\n")
		frames = frames[:len(frames)-1] // after the last newline
		if size > maxBatchBytes {
			assert.Len(t, frames, 1, "only a lone frame exceeds maxBatchBytes")
		}
		got = append(got, frames...)
	}
	assert.Equal(t, want, got)
	assert.GreaterOrEqual(t, chunks, 3, "81 KiB of small frames and a 64 KiB one take several chunks")
	// Then an orderly close, not a reset.
	_, err := c.br.ReadByte()
	require.ErrorIs(t, err, io.EOF)
}

func TestServeWatchWebsocketWire(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	e := swStart(t)
	a := e.create("a", "1")
	c := swDialWebsocket(t, e, "?timeout=300ms")
	defer c.close()
	assert.Equal(t, 101, c.status)
	assert.Empty(t, c.header.Get("Sec-WebSocket-Protocol"))
	assert.Empty(t, c.header.Get("Content-Type"))
	// One unfragmented text frame per event, payload ending in '\n'.
	op, fin, payload, err := c.frame(safetyTimeout)
	require.NoError(t, err)
	assert.Equal(t, byte(1), op)
	assert.True(t, fin)
	assert.Equal(t, swFrame(api.Added, a), string(payload))
	// At the timeout the server sends close 1000 with no reason.
	op, _, payload, err = c.frame(safetyTimeout)
	require.NoError(t, err)
	assert.Equal(t, byte(8), op)
	assert.Equal(t, []byte{0x03, 0xe8}, payload)

	// A client's close gets the server's close 1000 back.
	d := swDialWebsocket(t, e, "?initial=false")
	defer d.close()
	d.send(8, []byte{0x03, 0xe8})
	op, _, payload, err = d.frame(safetyTimeout)
	require.NoError(t, err)
	assert.Equal(t, byte(8), op)
	assert.Equal(t, []byte{0x03, 0xe8}, payload)
}

// swChunked is a raw HTTP/1.1 client that keeps chunk boundaries.
type swChunked struct {
	conn   net.Conn
	br     *bufio.Reader
	status int
	header http.Header
}

func swDialChunked(t *testing.T, e *swEnv, query string) *swChunked {
	t.Helper()
	u, err := url.Parse(e.srv.URL + "/watch" + query)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: sw-test\r\nAccept: application/json\r\n\r\n", u.RequestURI(), u.Host)
	require.NoError(t, err)
	c := &swChunked{conn: conn, br: bufio.NewReader(conn)}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(safetyTimeout)))
	tp := textproto.NewReader(c.br)
	line, err := tp.ReadLine()
	require.NoError(t, err)
	_, code, _ := strings.Cut(line, " ")
	c.status, err = strconv.Atoi(code[:3])
	require.NoError(t, err)
	h, err := tp.ReadMIMEHeader()
	require.NoError(t, err)
	c.header = http.Header(h)
	return c
}

func (c *swChunked) next(d time.Duration) ([]string, error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	line, err := c.br.ReadString('\n')
	if err != nil {
		return nil, swAbrupt(err)
	}
	size, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
	if err != nil {
		return nil, fmt.Errorf("bad chunk size line %q: %w", line, err)
	}
	buf := make([]byte, size+2)
	if _, err := io.ReadFull(c.br, buf); err != nil {
		return nil, swAbrupt(err)
	}
	if size == 0 {
		return nil, io.EOF // the terminating chunk: a clean end
	}
	var out []string
	for _, f := range strings.SplitAfter(string(buf[:size]), "\n") {
		if f != "" {
			out = append(out, f)
		}
	}
	return out, nil
}

func (c *swChunked) close() { _ = c.conn.Close() }

// swAbrupt turns a bare EOF (the connection closed without the clean end
// of the protocol) into io.ErrUnexpectedEOF; timeouts and resets pass.
func swAbrupt(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// swWebsocket is a raw RFC 6455 client.
type swWebsocket struct {
	conn   net.Conn
	br     *bufio.Reader
	status int
	header http.Header
}

func swDialWebsocket(t *testing.T, e *swEnv, query string) *swWebsocket {
	t.Helper()
	u, err := url.Parse(e.srv.URL + "/watch" + query)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	key := base64.StdEncoding.EncodeToString(nonce)
	_, err = fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: http://localhost\r\n\r\n", u.RequestURI(), u.Host, key)
	require.NoError(t, err)
	c := &swWebsocket{conn: conn, br: bufio.NewReader(conn)}
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(safetyTimeout)))
	tp := textproto.NewReader(c.br)
	line, err := tp.ReadLine()
	require.NoError(t, err)
	c.status, err = strconv.Atoi(strings.Fields(line)[1])
	require.NoError(t, err)
	h, err := tp.ReadMIMEHeader()
	require.NoError(t, err)
	c.header = http.Header(h)
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	require.Equal(t, base64.StdEncoding.EncodeToString(sum[:]), c.header.Get("Sec-WebSocket-Accept"))
	return c
}

// frame reads one frame.
func (c *swWebsocket) frame(d time.Duration) (op byte, fin bool, payload []byte, err error) {
	_ = c.conn.SetReadDeadline(time.Now().Add(d))
	var hdr [2]byte
	if _, err := io.ReadFull(c.br, hdr[:]); err != nil {
		return 0, false, nil, swAbrupt(err)
	}
	fin, op = hdr[0]&0x80 != 0, hdr[0]&0x0f
	n := uint64(hdr[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, false, nil, swAbrupt(err)
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(c.br, b[:]); err != nil {
			return 0, false, nil, swAbrupt(err)
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	if hdr[1]&0x80 != 0 {
		return 0, false, nil, errors.New("server frames must not be masked")
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(c.br, payload); err != nil {
		return 0, false, nil, swAbrupt(err)
	}
	return op, fin, payload, nil
}

// send writes one masked frame, as a client must.
func (c *swWebsocket) send(op byte, payload []byte) {
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b := []byte{0x80 | op, 0x80 | byte(len(payload))}
	b = append(b, mask[:]...)
	for i, p := range payload {
		b = append(b, p^mask[i%4])
	}
	_, _ = c.conn.Write(b)
}

func (c *swWebsocket) next(d time.Duration) ([]string, error) {
	op, fin, payload, err := c.frame(d)
	switch {
	case err != nil:
		return nil, err
	case op == 8:
		if len(payload) >= 2 && binary.BigEndian.Uint16(payload) == 1000 {
			return nil, io.EOF // a close frame, status 1000: a clean end
		}
		return nil, fmt.Errorf("close frame % x", payload)
	case op != 1 || !fin:
		return nil, fmt.Errorf("unexpected frame: opcode %d fin %v", op, fin)
	case strings.Count(string(payload), "\n") != 1 || !strings.HasSuffix(string(payload), "\n"):
		return nil, fmt.Errorf("a message must be exactly one frame ending in a newline: %q", payload)
	}
	return []string{string(payload)}, nil
}

func (c *swWebsocket) close() { _ = c.conn.Close() }

func TestIsWebSocket(t *testing.T) {
	ws, _ := http.NewRequest("GET", "/", nil)
	ws.Header.Set("Upgrade", "WebSocket")
	ws.Header.Set("Connection", "keep-alive, Upgrade")
	assert.True(t, isWebSocket(ws))
	ws.Header.Set("Connection", "keep-alive")
	assert.False(t, isWebSocket(ws))
}

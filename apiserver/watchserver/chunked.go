package watchserver

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"listwatch/apiserver/filters"
	"listwatch/narrate"
)

// The HTTP/1.1 watch, written on the bare connection. Once net/http has
// parsed the request, the WatchServer takes the connection over (hijacks
// it) and this writer writes the response itself: the 200 headers, then
// `<hex length>\r\n<frames>\r\n` per batch and `0\r\n\r\n` at a clean end.
// Taking the connection over saves what net/http spends on a response for
// as long as its handler runs: the 2 KiB buffer that chunks the body and
// its background reader goroutine (which we replace by our own, the only
// way to notice an idle client going away). Each batch is one write()
// system call from a buffer shared by all watches, so an idle watch holds
// no write buffer.
//
// The price: the connection is closed after the watch instead of being
// kept alive for the client's next request, and the headers say so
// (`Connection: close`), so client-go and kubectl dial again for their next
// request instead of sending it on a connection we are closing. A client
// that pipelines a request behind its watch loses it (watch clients do not
// pipeline). HTTP/2 keeps net/http's path: its streams share one
// connection.
// Kubernetes writes through net/http (endpoints/handlers/watch.go); the
// framing is RFC 9112 section 7.1.

// chunkBufSize is the shared buffer one batch is framed in: up to
// maxBatchBytes of frames plus the chunk's size line and trailing CRLF.
const chunkBufSize = maxBatchBytes + 16

// chunkPool holds the buffers batches are framed in, shared by all watches.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkBufSize); return &b }}

var (
	crlf          = []byte("\r\n")
	lastChunk     = []byte("0\r\n\r\n")
	errClientGone = errors.New("client gone")
)

// watchHeaderSkip are the headers writeWatchHeaders writes itself, or
// that a chunked response must not carry.
var watchHeaderSkip = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Transfer-Encoding": true,
	"Connection": true, "Date": true,
}

// writeWatchHeaders writes the 200 response headers of a chunked watch, in
// net/http's order (Content-Type, the handler's other headers sorted, Date,
// Transfer-Encoding) plus Connection: close.
func writeWatchHeaders(conn net.Conn, h http.Header, timeout time.Duration) error {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	b := bytes.NewBuffer((*bp)[:0])
	b.WriteString("HTTP/1.1 200 OK\r\nContent-Type: ")
	b.WriteString(h.Get("Content-Type"))
	b.WriteString("\r\n")
	if err := h.WriteSubset(b, watchHeaderSkip); err != nil {
		return err
	}
	b.WriteString("Date: ")
	b.Write(time.Now().UTC().AppendFormat(nil, http.TimeFormat))
	b.WriteString("\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n")
	if err := conn.SetWriteDeadline(time.Now().Add(timeout)); err != nil {
		return err
	}
	_, err := conn.Write(b.Bytes())
	return err
}

// deadlineSlackDivisor says how stale a watch's write deadline may get before it
// is pushed back: re-arming it costs a timer update per write, and a busy
// watch writes thousands of times a minute. So a write may have a little
// less than its timeout, never less than the timeout minus the slack (a
// twelfth of the timeout: 5 s of the default minute).
const deadlineSlackDivisor = 12

// writeChunks writes frames as HTTP chunks: one chunk and one write per
// batch (nextBatch, frames.go), a frame too big to batch alone in its
// chunk (framed by one writev, without a copy).
func writeChunks(conn net.Conn, frames [][]byte) (n int, err error) {
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	for i := 0; i < len(frames); {
		j, size, alone := nextBatch(frames, i)
		head := strconv.AppendInt((*bp)[:0], int64(size), 16)
		head = append(head, crlf...)
		var m int
		if alone {
			bufs := net.Buffers{head, frames[i], crlf}
			var m64 int64
			m64, err = bufs.WriteTo(conn)
			m = int(m64)
		} else {
			buf := head
			for _, f := range frames[i:j] {
				buf = append(buf, f...)
			}
			buf = append(buf, crlf...)
			m, err = conn.Write(buf)
		}
		n += m
		if err != nil {
			return n, err
		}
		i = j
	}
	return n, nil
}

// hijackChunked sets the watch's headers and, over HTTP/1.1, takes the
// connection over from net/http and writes them (the client must see 200
// before any event, or a quiet watch would look like a hung request). It
// returns the writer for the rest of the watch, which holds only the
// connection, nothing of net/http's; hijacked is false when the request
// keeps net/http's ResponseWriter (HTTP/2, HTTP/1.0, a writer that cannot
// be hijacked), and wr nil when the headers could not be written (the
// connection is closed).
func hijackChunked(w http.ResponseWriter, r *http.Request, wt *watch, contentType []string) (wr *chunkedWriter, hijacked bool) {
	setWatchHeaders(w, r, contentType)
	if !r.ProtoAtLeast(1, 1) || r.ProtoMajor != 1 {
		return nil, false
	}
	// The log says 200, not the 101 of a protocol switch.
	filters.LogStatus(w, http.StatusOK)
	// The bufio.ReadWriter is dropped: the watch needs none, and holding
	// it would keep net/http's 8 KiB of buffers alive.
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return nil, false
	}
	if err := writeWatchHeaders(conn, w.Header(), wt.writeTimeout); err != nil {
		if wt.tracer.Enabled() {
			wt.tracer.Printf(narrate.HTTP, "watch %d: writing the headers failed (%v): client gone", wt.id, err)
		}
		_ = conn.Close()
		return nil, true
	}
	return &chunkedWriter{conn: conn, parent: r.Context(), timeout: wt.writeTimeout}, true
}

// chunkedWriter writes a watch's chunks on a hijacked connection.
type chunkedWriter struct {
	conn net.Conn
	// parent is the watch's context (the server's), from which client()
	// is derived once the watch runs.
	parent     context.Context
	ctx        context.Context
	clientGone context.CancelCauseFunc
	readerDone chan struct{}
	// timeout bounds each write (the watch server's WriteTimeout: a client
	// that stops reading for this long loses its connection, so it cannot
	// pin the writer forever; the dispatcher closes such a watcher as too
	// slow long before, and this frees its goroutine). deadline is the
	// write deadline set last (see deadlineSlackDivisor).
	timeout  time.Duration
	deadline time.Time
}

func (cw *chunkedWriter) label() string    { return "" }
func (cw *chunkedWriter) endsWith() string { return "ending the response (terminating chunk)" }

// client starts, on first use, the reader that notices the client going
// away: net/http no longer tells us, and the client sends nothing during
// a watch, so a read returns only when the connection ends. (One goroutine
// cannot both wait for events and notice an idle client leaving, so a
// watch costs two.)
func (cw *chunkedWriter) client() context.Context {
	if cw.ctx != nil {
		return cw.ctx
	}
	cw.ctx, cw.clientGone = context.WithCancelCause(cw.parent)
	cw.readerDone = make(chan struct{})
	go func() {
		defer close(cw.readerDone)
		var b [1]byte
		for {
			if _, err := cw.conn.Read(b[:]); err != nil {
				cw.clientGone(errClientGone)
				return
			}
			// A byte from a watch client (it should send none) is
			// dropped; the connection ends after the watch anyway.
		}
	}()
	return cw.ctx
}

// write frames the batch as chunks; a failed write resets the connection.
func (cw *chunkedWriter) write(frames [][]byte, _ func() bool) (int, error) {
	if now := time.Now(); cw.deadline.Sub(now) < cw.timeout-cw.timeout/deadlineSlackDivisor {
		cw.deadline = now.Add(cw.timeout)
		if err := cw.conn.SetWriteDeadline(cw.deadline); err != nil {
			cw.close(true)
			return 0, err
		}
	}
	n, err := writeChunks(cw.conn, frames)
	if err != nil {
		cw.close(true)
	}
	return n, err
}

// end writes the terminating chunk, then closes the connection in order;
// a client that already went away just has its connection closed.
func (cw *chunkedWriter) end() {
	if context.Cause(cw.ctx) != errClientGone {
		if err := cw.conn.SetWriteDeadline(time.Now().Add(cw.timeout)); err == nil {
			_, _ = cw.conn.Write(lastChunk)
		}
	}
	cw.close(false)
}

func (cw *chunkedWriter) drop()    { cw.close(true) }
func (cw *chunkedWriter) release() { cw.close(false) }

// close closes the connection, with a TCP reset when abrupt, and waits for
// the reader, which the close ends.
func (cw *chunkedWriter) close(abrupt bool) {
	if abrupt {
		resetConn(cw.conn)
	} else {
		_ = cw.conn.Close()
	}
	cw.clientGone(nil)
	<-cw.readerDone
}

package apiserver

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/narrate"
)

// The HTTP/1.1 watch, written on the bare connection. Once net/http has
// parsed the request, serveWatchChunked hijacks the connection and this
// file writes the response itself: the 200 headers, then
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

// watchWriteTimeout bounds each write of a watch: a client that stops
// reading for this long loses its connection, so it cannot pin the writer
// forever. (The dispatcher closes such a watcher as too slow long before;
// this frees its goroutine.)
const watchWriteTimeout = responseWriteTimeout

// watchHeaderSkip are the headers writeWatchHeaders writes itself, or
// that a chunked response must not carry.
var watchHeaderSkip = map[string]bool{
	"Content-Type": true, "Content-Length": true, "Transfer-Encoding": true,
	"Connection": true, "Date": true,
}

// writeWatchHeaders writes the 200 response headers of a chunked watch, in
// net/http's order (Content-Type, the handler's other headers sorted, Date,
// Transfer-Encoding) plus Connection: close.
func writeWatchHeaders(conn net.Conn, h http.Header) error {
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
	if err := conn.SetWriteDeadline(time.Now().Add(watchWriteTimeout)); err != nil {
		return err
	}
	_, err := conn.Write(b.Bytes())
	return err
}

// logStatus tells the request log which status the response has when
// net/http no longer sees it (a hijacked connection).
func logStatus(w http.ResponseWriter, code int) {
	for {
		switch rw := w.(type) {
		case *responseRecorder:
			if rw.code == 0 {
				rw.code = code
			}
			return
		case interface{ Unwrap() http.ResponseWriter }:
			w = rw.Unwrap()
		default:
			return
		}
	}
}

// writeChunks writes frames as HTTP chunks: one chunk and one write per
// maxBatchBytes of frames, a frame bigger than that alone in its chunk
// (framed by one writev, without a copy).
func writeChunks(conn net.Conn, frames [][]byte) (n int, err error) {
	if err := conn.SetWriteDeadline(time.Now().Add(watchWriteTimeout)); err != nil {
		return 0, err
	}
	bp := chunkPool.Get().(*[]byte)
	defer chunkPool.Put(bp)
	for i := 0; i < len(frames); {
		if len(frames[i]) > maxBatchBytes {
			head := strconv.AppendInt((*bp)[:0], int64(len(frames[i])), 16)
			head = append(head, crlf...)
			bufs := net.Buffers{head, frames[i], crlf}
			m, err := bufs.WriteTo(conn)
			n += int(m)
			if err != nil {
				return n, err
			}
			i++
			continue
		}
		size, j := 0, i
		for j < len(frames) && len(frames[j]) <= maxBatchBytes && size+len(frames[j]) <= maxBatchBytes {
			size += len(frames[j])
			j++
		}
		buf := strconv.AppendInt((*bp)[:0], int64(size), 16)
		buf = append(buf, crlf...)
		for _, f := range frames[i:j] {
			buf = append(buf, f...)
		}
		buf = append(buf, crlf...)
		m, err := conn.Write(buf)
		n += m
		if err != nil {
			return n, err
		}
		i = j
	}
	return n, nil
}

// startWatchOnConn starts a watch on a hijacked HTTP/1.1 connection: it
// writes the headers at once (the client must see 200 before any event, or
// a quiet watch would look like a hung request) and returns the rest of the
// watch, or nil when the headers could not be written (the connection is
// closed, the watcher left to the caller). rest holds only the connection
// and the watch, nothing of net/http's, and returns when the watch ends,
// with the watcher stopped and the connection closed: after the
// terminating chunk for a clean end, with a TCP reset for a kill.
func startWatchOnConn(conn net.Conn, h http.Header, ws watchStream) (rest func(context.Context)) {
	if err := writeWatchHeaders(conn, h); err != nil {
		if ws.tracer.Enabled() {
			ws.tracer.Printf(narrate.HTTP, "watch %d: writing the headers failed (%v): client gone", ws.watcher.ID(), err)
		}
		_ = conn.Close()
		return nil
	}
	return func(ctx context.Context) {
		defer ws.watcher.Stop()
		serveWatchOnConn(ctx, conn, ws)
	}
}

// serveWatchOnConn writes the watch's chunks on conn until the watch ends,
// then closes conn.
func serveWatchOnConn(parent context.Context, conn net.Conn, ws watchStream) {
	// net/http no longer tells us that the client went away: our reader
	// does. The client sends nothing during a watch, so the read returns
	// only when the connection ends. (One goroutine cannot both wait for
	// events and notice an idle client leaving, so a watch costs two.)
	ctx, clientGone := context.WithCancelCause(parent)
	defer clientGone(nil)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		var b [1]byte
		for {
			if _, err := conn.Read(b[:]); err != nil {
				clientGone(errClientGone)
				return
			}
			// A byte from a watch client (it should send none) is
			// dropped; the connection ends after the watch anyway.
		}
	}()
	abrupt := runWatchOnConn(ctx, conn, ws)
	if abrupt {
		resetConn(conn)
	} else {
		_ = conn.Close()
	}
	<-readerDone // the close ended its Read
}

// runWatchOnConn is the watch loop of serveWatchOnConn; it reports whether
// the connection must be dropped abruptly instead of closed.
func runWatchOnConn(clientCtx context.Context, conn net.Conn, ws watchStream) (abrupt bool) {
	// As on the ResponseWriter path, the timeout ends Next, not the
	// watcher (see serveWatchChunked).
	ctx, cancel := watchContext(clientCtx, ws.timeout)
	defer cancel()
	id := ws.watcher.ID()
	var frames [][]byte
	for {
		var err error
		frames, err = ws.watcher.Next(ctx, frames[:0])
		if stalled(ws.stall) {
			return holdStalled(clientCtx.Done(), ws, id, len(frames))
		}
		if len(frames) > 0 {
			n, werr := writeChunks(conn, frames)
			if werr != nil {
				if ws.tracer.Enabled() {
					ws.tracer.Printf(narrate.HTTP, "watch %d: write failed (%v): client gone", id, werr)
				}
				return true
			}
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d: wrote %d bytes, %d frames", id, n, len(frames))
			}
			frames = idleFrames(frames)
		}
		if err == nil {
			continue
		}
		if errors.Is(err, cacher.ErrKilled) {
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d: killed: dropping the connection", id)
			}
			return true
		}
		traceWatchEnd(ctx, ws, id, err)
		if context.Cause(clientCtx) == errClientGone {
			return false
		}
		// A clean end: the terminating chunk, then an orderly close. The
		// watcher leaves the cache first: a client that sees the end may
		// watch again at once, and from then on only its new watch must
		// exist (a kill in between must not find the old one).
		ws.watcher.Stop()
		if err := conn.SetWriteDeadline(time.Now().Add(watchWriteTimeout)); err == nil {
			_, _ = conn.Write(lastChunk)
		}
		return false
	}
}

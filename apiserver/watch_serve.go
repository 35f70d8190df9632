package apiserver

// How a watch is written on the wire: the boundary between the REST layer
// (watch.go: parse the query, register the watcher) and the bytes. The
// chunked-HTTP writer is here; the websocket one is in watch_websocket.go.
// Kubernetes: endpoints/handlers/watch.go (WatchServer.HandleHTTP, HandleWS).

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/narrate"
)

// watchStream is everything serveWatch needs to write one watch response.
type watchStream struct {
	watcher *cacher.CacheWatcher
	// timeout ends the response cleanly (the client sees EOF) once it passes:
	// ?timeoutSeconds exactly, or the server's randomised default.
	timeout time.Duration
	// stall is closed by the half-open fault: from then on the writer stops
	// writing but keeps the connection open until the client goes away.
	stall <-chan struct{}
	// kill is closed by the kill fault. The watcher hears of a kill from the
	// watch cache; a stalled connection, which has left the cache, hears of
	// it here. held counts stalled connections while they are held.
	kill <-chan struct{}
	held *atomic.Int64
	// ws is true when the request asked for a websocket upgrade.
	ws     bool
	tracer *narrate.Tracer
}

// errWatchTimeout is the cause of a watch context ended by its timeout, to
// tell it from a client that went away.
var errWatchTimeout = errors.New("watch timeout")

// Header values shared by every watch response (net/http copies them).
var (
	headerJSON    = []string{"application/json"}
	headerChunked = []string{"chunked"}
)

// maxBatchBytes bounds one write: frames are copied together up to this
// size (a socket takes about this much at a time anyway).
const maxBatchBytes = 64 << 10

// batchPool holds the buffers frames are copied into for one write. They
// are shared by all watches instead of kept by each, so an idle watch holds
// no buffer at all.
var batchPool = sync.Pool{New: func() any { b := make([]byte, 0, maxBatchBytes); return &b }}

// writeFrames writes frames with as few Writes as possible: one for a lone
// frame (no copy), otherwise one per maxBatchBytes of frames.
func writeFrames(w io.Writer, frames [][]byte) (n int, err error) {
	if len(frames) == 1 {
		return w.Write(frames[0])
	}
	bp := batchPool.Get().(*[]byte)
	defer batchPool.Put(bp)
	for i := 0; i < len(frames); {
		if len(frames[i]) >= maxBatchBytes {
			m, err := w.Write(frames[i])
			n += m
			if err != nil {
				return n, err
			}
			i++
			continue
		}
		batch := (*bp)[:0]
		for i < len(frames) && len(frames[i]) < maxBatchBytes && len(batch)+len(frames[i]) <= maxBatchBytes {
			batch = append(batch, frames[i]...)
			i++
		}
		m, err := w.Write(batch)
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// serveWatch writes a whole watch response before it returns: startWatch,
// then the rest of the watch (if any) in the handler, bounded by the
// request's context. The REST layer uses startWatch instead.
func serveWatch(w http.ResponseWriter, r *http.Request, ws watchStream) {
	if rest := startWatch(w, r, ws); rest != nil {
		rest(r.Context())
	}
}

// startWatch writes the watch response: 200, Content-Type application/json,
// chunked (headers flushed before the first event), one frame per event,
// flushed when nothing more is pending; or the same frames as websocket text
// messages. A watcher ended with cacher.ErrKilled makes it drop the
// connection abruptly (no clean end of stream).
//
// Over HTTP/1.1 it takes the connection over from net/http, writes the
// headers and returns the rest of the watch as a function, so the handler
// can return and net/http free what it holds for a connection (its buffers
// and its goroutine) while the watch goes on: the caller runs rest in a
// goroutine of its own, with a context that is not the request's (net/http
// ends that one when the handler returns). rest stops the watcher and closes
// the connection before it returns. Otherwise (HTTP/2, HTTP/1.0, websocket,
// a writer that cannot be hijacked) startWatch serves the whole watch and
// returns nil once it has ended (timeout, watcher ended, client gone, server
// stopping).
func startWatch(w http.ResponseWriter, r *http.Request, ws watchStream) (rest func(context.Context)) {
	detached := false
	defer func() {
		if !detached {
			ws.watcher.Stop()
		}
	}()
	if ws.ws {
		serveWatchWebsocket(w, r, ws)
		return nil
	}
	rest = serveWatchChunked(w, r, ws)
	detached = rest != nil
	return rest
}

// watchContext bounds a watch by its timeout, if it has one.
func watchContext(parent context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout <= 0 {
		return context.WithCancel(parent)
	}
	return context.WithTimeoutCause(parent, timeout, errWatchTimeout)
}

// stalled reports whether the half-open fault has been switched on.
func stalled(stall <-chan struct{}) bool {
	select {
	case <-stall:
		return true
	default:
		return false
	}
}

// serveWatchChunked is the plain-HTTP watch: one chunked response. Over
// HTTP/1.1 the connection is taken over from net/http once the headers are
// out and the rest of the watch, written on it directly (watch_chunked.go),
// is returned for the caller to run after the handler; HTTP/2, HTTP/1.0
// and a writer that cannot be hijacked keep the ResponseWriter path below,
// which serves the whole watch and returns nil.
//
// Its loop is the heart of the apiserver's fan-out cost: it takes every
// frame the watcher has ready (Next), writes them with ONE Write (one HTTP
// chunk; a burst bigger than 64 KiB takes one per 64 KiB), and flushes only
// when no more frames are pending, so a busy watch costs one write() system
// call per batch instead of one per event. The frames themselves were
// encoded once by the cacher and are shared by every watch that gets them.
func serveWatchChunked(w http.ResponseWriter, r *http.Request, ws watchStream) (rest func(context.Context)) {
	h := w.Header()
	h["Content-Type"] = headerJSON
	if r.ProtoMajor == 1 {
		// Kubernetes sets it explicitly; net/http then chunks the body
		// (HTTP/2 has its own framing and must not carry the header).
		h["Transfer-Encoding"] = headerChunked
	}
	if r.ProtoAtLeast(1, 1) && r.ProtoMajor == 1 {
		// The log says 200, not the 101 of a protocol switch.
		logStatus(w, http.StatusOK)
		// The bufio.ReadWriter is dropped: the watch needs none, and
		// holding it would keep net/http's 8 KiB of buffers alive.
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			return startWatchOnConn(conn, h, ws)
		}
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// Flush the headers now: the client must see 200 before any event, or a
	// quiet watch would look like a hung request.
	if err := rc.Flush(); err != nil {
		return nil
	}

	// The timeout ends Next, not the watcher: as in Kubernetes, a watch
	// whose handler is stuck writing to a client that stopped reading stays
	// registered past its deadline, so the dispatcher still closes it as too
	// slow instead of queueing for it forever.
	ctx, cancel := watchContext(r.Context(), ws.timeout)
	defer cancel()
	id := ws.watcher.ID()
	var frames [][]byte
	for {
		var err error
		frames, err = ws.watcher.Next(ctx, frames[:0])
		if stalled(ws.stall) {
			if holdStalled(r.Context().Done(), ws, id, len(frames)) {
				abortConnection(w)
			}
			return nil
		}
		if len(frames) > 0 {
			n, werr := writeFrames(w, frames)
			if werr != nil {
				if ws.tracer.Enabled() {
					ws.tracer.Printf(narrate.HTTP, "watch %d: write failed (%v): client gone", id, werr)
				}
				return nil
			}
			pending := ws.watcher.Pending()
			if !pending {
				if ferr := rc.Flush(); ferr != nil {
					return nil
				}
			}
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d: wrote %d bytes, %d frames (flushed: %v)", id, n, len(frames), !pending)
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
			abortConnection(w)
			return nil
		}
		traceWatchEnd(ctx, ws, id, err)
		return nil // net/http writes the terminating chunk
	}
}

// idleFrames readies the frames slice for the next Next: the references
// are dropped while the watch is idle, and a burst's big slice is not kept.
func idleFrames(frames [][]byte) [][]byte {
	clear(frames)
	if cap(frames) > 1024 {
		return nil
	}
	return frames
}

// traceWatchEnd narrates why a watch that ends cleanly (not killed) ended.
func traceWatchEnd(ctx context.Context, ws watchStream, id int64, err error) {
	if !ws.tracer.Enabled() {
		return
	}
	switch {
	case context.Cause(ctx) == errWatchTimeout:
		ws.tracer.Printf(narrate.HTTP, "watch %d: timeout after %v: ending the response (terminating chunk)", id, ws.timeout)
	case ctx.Err() != nil:
		ws.tracer.Printf(narrate.HTTP, "watch %d: client gone or server stopping", id)
	default:
		// ErrTooSlow, ErrStopped, ErrStatusSent: a clean end; the client
		// re-watches.
		ws.tracer.Printf(narrate.HTTP, "watch %d: ended (%v): ending the response", id, err)
	}
}

// holdStalled is the half-open fault: write nothing more, never end the
// response, and keep the connection until the client gives up, the server
// stops, or the kill fault drops it (then it returns true). The watcher is
// stopped so the cache does not spend its time budget on a queue nobody
// drains.
func holdStalled(clientGone <-chan struct{}, ws watchStream, id int64, dropped int) (killed bool) {
	ws.watcher.Stop()
	if ws.tracer.Enabled() {
		ws.tracer.Printf(narrate.HTTP, "watch %d: stalled (half-open fault): %d frames not written, holding the connection", id, dropped)
	}
	if ws.held != nil {
		ws.held.Add(1)
		defer ws.held.Add(-1)
	}
	select {
	case <-clientGone:
		return false
	case <-ws.kill:
		if ws.tracer.Enabled() {
			ws.tracer.Printf(narrate.HTTP, "watch %d: stalled connection killed: dropping it", id)
		}
		return true
	}
}

// abortConnection drops a watch's connection without ending the response:
// no terminating chunk, and a TCP reset instead of an orderly close, as a
// tcpkill does. The client sees its stream break, not end.
func abortConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): make net/http reset the stream.
		panic(http.ErrAbortHandler)
	}
	resetConn(conn)
}

// resetConn closes conn with a TCP RST when it is a TCP connection.
func resetConn(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

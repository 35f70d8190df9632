package watchserver

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/apiserver/serving"
	"listwatch/narrate"
)

// Steps 4 and 5 of a watch, the same for every transport: take the frames
// the watcher has ready, hand them to the transport's writer, and when the
// watcher ends, end the stream the way its end asks for.

// watch is one watch being served: its cache watcher and what ends it.
type watch struct {
	id      int64
	watcher Watcher
	// timeout ends the response cleanly (the client sees the end) once it
	// passes: ?timeoutSeconds exactly, or the server's randomised default.
	timeout time.Duration
	// writeTimeout bounds each write of an HTTP/1.1 watch (chunked.go).
	writeTimeout time.Duration
	// stall is closed by the half-open fault: from then on the watch
	// writes nothing but keeps the connection open until the client goes
	// away.
	stall <-chan struct{}
	// kill is closed by the kill fault. The watcher hears of a kill from
	// the watch cache; a stalled connection, which has left the cache,
	// hears of it here. held counts stalled connections while they are
	// held.
	kill <-chan struct{}
	held *atomic.Int64
	// expiry lets the expire fault (Server.Expire, expire.go) end the
	// watch as its timeout does.
	expiry expiry
	tracer *narrate.Tracer

	// What the debug view shows of the watch. transport may change once,
	// before the first frame, under the Server's lock.
	transport           string
	conn                *serving.Conn // nil outside an apiserver (tests)
	resource, namespace string
	userAgent           string
	remoteAddr          string
	started             time.Time
	// encode re-encodes each frame for this watch (Request.Encoding); nil
	// writes the cacher's shared frames as they are. contentType is the
	// response's Content-Type: JSON, or the Encoding's.
	encode      func(jsonFrame []byte) []byte
	contentType []string
}

// A writer puts one watch's frames on one transport. The pump decides when
// a watch ends; the writer knows how.
type writer interface {
	// label names the transport in narration: "" for chunked HTTP,
	// " (websocket)".
	label() string
	// client ends when the client goes away (or the request ends).
	client() context.Context
	// write sends frames; more reports whether the watcher already has
	// more, so a writer that buffers can flush only when it has not. A
	// writer whose write fails has let the connection go.
	write(frames [][]byte, more func() bool) (n int, err error)
	// endsWith says, for narration, how end ends the stream.
	endsWith() string
	// end ends the stream cleanly: the client sees its end and re-watches.
	end()
	// drop drops the connection abruptly, with no clean end of stream and
	// a TCP reset, as a tcpkill does: the kill fault.
	drop()
	// release lets go of a stalled connection whose client went away.
	release()
}

// errWatchTimeout is the cause of a watch context ended by its timeout, to
// tell it from a client that went away.
var errWatchTimeout = errors.New("watch timeout")

// pump writes the watch's frames until the watch ends, then ends the
// stream: cleanly at the timeout or when the watcher ends (410 in-stream,
// too slow, cache stopped), abruptly when killed, not at all when stalled.
//
// Its loop is the heart of the apiserver's fan-out cost: it takes every
// frame the watcher has ready (Next) and hands them to the writer at once,
// which writes them with as few system calls as it can (one HTTP chunk per
// 64 KiB) and flushes only when no more frames are pending. The frames
// themselves were encoded once by the cacher and are shared by every watch
// that gets them.
func (wt *watch) pump(wr writer) {
	// The timeout ends Next, not the watcher: as in Kubernetes, a watch
	// whose writer is stuck on a client that stopped reading stays
	// registered past its deadline, so the dispatcher still closes it as
	// too slow instead of queueing for it forever.
	ctx, cancel := watchContext(wr.client(), wt.timeout)
	defer cancel(context.Canceled)
	wt.expiry.arm(cancel)
	for {
		// The frames come in a pooled slice, given back once written: an
		// idle watch holds none.
		frames, err := wt.watcher.Next(ctx, nil)
		if closed(wt.stall) {
			cacher.ReleaseFrames(frames)
			if wt.holdStalled(wr, len(frames)) {
				wr.drop()
			} else {
				wr.release()
			}
			return
		}
		if len(frames) > 0 {
			if wt.encode != nil {
				// The shared frames stay untouched: only this watch's
				// slice points at its own re-encoded copies.
				for i, f := range frames {
					frames[i] = wt.encode(f)
				}
			}
			// Counted as handed to the writer, before the client can
			// have read them, as kube-apiserver counts an event when it
			// encodes it: apiserver_watch_events_total, one add per batch.
			wt.watcher.Sent(len(frames))
			n, werr := wr.write(frames, wt.watcher.Pending)
			if werr != nil {
				wt.trace(wr, "write failed (%v): client gone", werr)
				cacher.ReleaseFrames(frames)
				return
			}
			wt.trace(wr, "wrote %d bytes, %d frames", n, len(frames))
		}
		cacher.ReleaseFrames(frames)
		if err == nil {
			continue
		}
		if errors.Is(err, cacher.ErrKilled) {
			wt.trace(wr, "killed: dropping the connection")
			wr.drop()
			return
		}
		wt.traceEnd(ctx, wr, err)
		// A clean end. The watcher leaves the cache first: a client that
		// sees the end may watch again at once, and from then on only its
		// new watch must exist (a kill in between must not find the old
		// one).
		wt.watcher.Stop()
		wr.end()
		return
	}
}

// watchContext bounds a watch by its timeout, if it has one: the context
// ends with the cause errWatchTimeout when it passes. Its cancel takes a
// cause, so that the expire fault (expire.go) can end it the same way
// early, without a context of its own for every watch.
func watchContext(parent context.Context, timeout time.Duration) (context.Context, context.CancelCauseFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	if timeout <= 0 {
		return ctx, cancel
	}
	t := time.AfterFunc(timeout, func() { cancel(errWatchTimeout) })
	return ctx, func(cause error) {
		t.Stop()
		cancel(cause)
	}
}

// closed reports whether a fault's channel is closed, i.e. whether the
// fault has been switched on for this watch (a nil channel never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// holdStalled is the half-open fault: write nothing more, never end the
// response, and keep the connection until the client gives up, the server
// stops, or the kill fault drops it (then it returns true). The watcher is
// stopped so the cache does not spend its time budget on a queue nobody
// drains.
func (wt *watch) holdStalled(wr writer, dropped int) (killed bool) {
	wt.watcher.Stop()
	wt.trace(wr, "stalled (half-open fault): %d frames not written, holding the connection", dropped)
	if wt.held != nil {
		wt.held.Add(1)
		defer wt.held.Add(-1)
	}
	select {
	case <-wr.client().Done():
		return false
	case <-wt.kill:
		wt.trace(wr, "stalled connection killed: dropping it")
		return true
	}
}

// trace narrates one step of the watch.
func (wt *watch) trace(wr writer, format string, args ...any) {
	if !wt.tracer.Enabled() {
		return
	}
	wt.tracer.Printf(narrate.HTTP, "watch %d%s: "+format, append([]any{wt.id, wr.label()}, args...)...)
}

// traceEnd narrates why a watch that ends cleanly (not killed) ended.
func (wt *watch) traceEnd(ctx context.Context, wr writer, err error) {
	switch {
	case context.Cause(ctx) == errWatchTimeout:
		wt.trace(wr, "timeout after %v: %s", wt.timeout, wr.endsWith())
	case ctx.Err() != nil:
		wt.trace(wr, "client gone or server stopping")
	default:
		// ErrTooSlow, ErrStopped, ErrStatusSent: a clean end; the client
		// re-watches.
		wt.trace(wr, "ended (%v): %s", err, wr.endsWith())
	}
}

// resetConn closes conn with a TCP RST, as a tcpkill does.
func resetConn(conn net.Conn) { serving.Reset(conn) }

package watchserver

import (
	"context"
	"net/http"
)

// The watch written through net/http's ResponseWriter: the path of every
// request whose connection we do not take over: HTTP/2 (h2.go builds on
// it), HTTP/1.0 and a ResponseWriter that cannot be hijacked. net/http frames the body (chunks
// over HTTP/1.1, DATA frames over HTTP/2) and ends it when the handler
// returns, so this writer runs in the handler for the whole watch.
// Kubernetes serves every watch this way (endpoints/handlers/watch.go
// WatchServer.HandleHTTP).

// Header values shared by every watch response (net/http copies them).
var (
	headerJSON    = []string{"application/json"}
	headerChunked = []string{"chunked"}
)

// setWatchHeaders sets a chunked watch response's headers: 200,
// Content-Type (application/json, or the watch's Encoding's) and, over
// HTTP/1.x, Transfer-Encoding: chunked, which Kubernetes sets explicitly
// (HTTP/2 has its own framing and must not carry the header).
func setWatchHeaders(w http.ResponseWriter, r *http.Request, contentType []string) {
	h := w.Header()
	h["Content-Type"] = contentType
	if r.ProtoMajor == 1 {
		h["Transfer-Encoding"] = headerChunked
	}
}

// streamWriter writes a watch through the ResponseWriter.
type streamWriter struct {
	w  http.ResponseWriter
	r  *http.Request
	rc *http.ResponseController
}

// newStreamWriter writes the 200 headers and flushes them at once (the
// client must see 200 before any event, or a quiet watch would look like a
// hung request); nil if the client is already gone.
func newStreamWriter(w http.ResponseWriter, r *http.Request) *streamWriter {
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return nil
	}
	return &streamWriter{w: w, r: r, rc: rc}
}

func (sw *streamWriter) label() string           { return "" }
func (sw *streamWriter) client() context.Context { return sw.r.Context() }
func (sw *streamWriter) endsWith() string        { return "ending the response (terminating chunk)" }
func (sw *streamWriter) end()                    {} // net/http ends the body when the handler returns
func (sw *streamWriter) release()                {}
func (sw *streamWriter) drop()                   { abortResponse(sw.w) }

// write writes frames with one Write per batch and flushes when the
// watcher has nothing more ready.
func (sw *streamWriter) write(frames [][]byte, more func() bool) (int, error) {
	n, err := writeFrames(sw.w, frames)
	if err != nil {
		return n, err
	}
	if !more() {
		err = sw.rc.Flush()
	}
	return n, err
}

// abortResponse drops a watch's connection without ending the response:
// no terminating chunk, and a TCP reset instead of an orderly close, as a
// tcpkill does. The client sees its stream break, not end.
func abortResponse(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Not hijackable (HTTP/2): make net/http reset the stream.
		panic(http.ErrAbortHandler)
	}
	resetConn(conn)
}

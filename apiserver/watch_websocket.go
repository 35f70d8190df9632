package apiserver

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"

	"golang.org/x/net/websocket"

	"listwatch/apiserver/cacher"
	"listwatch/narrate"
)

// The same watch over a websocket, as kube-apiserver serves it to browsers
// and to clients that ask to upgrade (fixture ws-watch.jsonl): one text
// message per event, the payload being the very frame the chunked writer
// sends, trailing newline included. The server ends the watch at its timeout
// with a close frame, status 1000 and no reason (ws-watch-server-timeout);
// when the client sends a close frame, the server answers with its own.
// Kubernetes: endpoints/handlers/watch.go WatchServer.HandleWS.

// errClientClosed is the cause of a websocket watch ended by the client.
var errClientClosed = errors.New("client closed the websocket")

// serveWatchWebsocket upgrades the connection and runs the watch over it.
func serveWatchWebsocket(w http.ResponseWriter, r *http.Request, ws watchStream) {
	hj := &hijackRecorder{ResponseWriter: w}
	srv := websocket.Server{
		// kube-apiserver accepts any Origin (and none): the watch is
		// authorised like any request, not by where a page came from.
		Handshake: func(*websocket.Config, *http.Request) error { return nil },
		Handler:   func(conn *websocket.Conn) { writeWebsocketWatch(conn, hj.conn, r, ws) },
	}
	srv.ServeHTTP(hj, r)
}

// hijackRecorder lets the websocket server take the connection over even
// through wrapping ResponseWriters, and keeps the raw connection so a killed
// watch can reset it.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

// Hijack takes the connection over from net/http.
func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = conn
	return conn, rw, err
}

// Unwrap lets http.ResponseController find the original writer.
func (h *hijackRecorder) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func writeWebsocketWatch(conn *websocket.Conn, raw net.Conn, r *http.Request, ws watchStream) {
	conn.PayloadType = websocket.TextFrame
	id := ws.watcher.ID()
	ctx, cancel := watchContext(r.Context(), ws.timeout)
	defer cancel()
	clientCtx, clientGone := context.WithCancelCause(ctx)
	defer clientGone(nil)

	// The client sends nothing but control frames; reading is how we learn
	// that it closed the websocket or that the connection broke. (Plain
	// HTTP gets this from net/http's own background read.)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				clientGone(errClientClosed)
				return
			}
		}
	}()
	// Every path below closes the connection, which ends the reader.
	defer func() { <-readerDone }()

	var frames [][]byte
	for {
		var err error
		frames, err = ws.watcher.Next(clientCtx, frames[:0])
		if stalled(ws.stall) {
			ws.watcher.Stop()
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): stalled (half-open fault): holding the connection", id)
			}
			if ws.held != nil {
				ws.held.Add(1)
				defer ws.held.Add(-1)
			}
			select {
			case <-readerDone:
			case <-r.Context().Done():
			case <-ws.kill:
				resetConn(raw)
				return
			}
			_ = raw.Close()
			return
		}
		n := 0
		for _, f := range frames {
			// One message per frame: each Write is one unfragmented
			// text frame.
			if _, werr := conn.Write(f); werr != nil {
				_ = raw.Close()
				return
			}
			n += len(f)
		}
		if len(frames) > 0 && ws.tracer.Enabled() {
			ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): wrote %d bytes, %d messages", id, n, len(frames))
		}
		clear(frames)
		if err == nil {
			continue
		}
		switch {
		case errors.Is(err, cacher.ErrKilled):
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): killed: dropping the connection", id)
			}
			resetConn(raw)
			return
		case context.Cause(clientCtx) == errClientClosed:
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): client closed: closing (1000)", id)
			}
		case context.Cause(clientCtx) == errWatchTimeout:
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): timeout after %v: closing (1000)", id, ws.timeout)
			}
		default:
			if ws.tracer.Enabled() {
				ws.tracer.Printf(narrate.HTTP, "watch %d (websocket): ended (%v): closing (1000)", id, err)
			}
		}
		_ = conn.Close() // a close frame, status 1000, no reason
		return
	}
}

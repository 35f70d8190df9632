package watchserver

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"

	"golang.org/x/net/websocket"
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

// serveWebsocket upgrades the connection and pumps the watch over it.
// A failed handshake leaves the watcher to the caller's clean-up.
func serveWebsocket(w http.ResponseWriter, r *http.Request, wt *watch) {
	hj := &hijackRecorder{ResponseWriter: w}
	srv := websocket.Server{
		// kube-apiserver accepts any Origin (and none): the watch is
		// authorised like any request, not by where a page came from.
		Handshake: func(*websocket.Config, *http.Request) error { return nil },
		Handler: func(conn *websocket.Conn) {
			ww := newWebsocketWriter(conn, hj.conn, r)
			defer ww.wait()
			wt.pump(ww)
		},
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

// websocketWriter writes a watch as websocket text messages.
type websocketWriter struct {
	conn *websocket.Conn
	// raw is the connection under the websocket, for a reset.
	raw        net.Conn
	ctx        context.Context
	readerDone chan struct{}
}

// newWebsocketWriter starts the reader: the client sends nothing but
// control frames, so reading is how we learn that it closed the websocket
// or that the connection broke. (Plain HTTP gets this from net/http's own
// background read, or from the chunked writer's reader.)
func newWebsocketWriter(conn *websocket.Conn, raw net.Conn, r *http.Request) *websocketWriter {
	conn.PayloadType = websocket.TextFrame
	ctx, clientGone := context.WithCancelCause(r.Context())
	ww := &websocketWriter{conn: conn, raw: raw, ctx: ctx, readerDone: make(chan struct{})}
	go func() {
		defer close(ww.readerDone)
		defer clientGone(errClientClosed)
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				return
			}
		}
	}()
	return ww
}

func (ww *websocketWriter) label() string           { return " (websocket)" }
func (ww *websocketWriter) client() context.Context { return ww.ctx }
func (ww *websocketWriter) endsWith() string        { return "closing (1000)" }

// write sends one message per frame: each Write is one unfragmented text
// frame. A failed write closes the connection.
func (ww *websocketWriter) write(frames [][]byte, _ func() bool) (int, error) {
	n := 0
	for _, f := range frames {
		if _, err := ww.conn.Write(f); err != nil {
			_ = ww.raw.Close()
			return n, err
		}
		n += len(f)
	}
	return n, nil
}

func (ww *websocketWriter) end()     { _ = ww.conn.Close() } // a close frame, status 1000, no reason
func (ww *websocketWriter) drop()    { resetConn(ww.raw) }
func (ww *websocketWriter) release() { _ = ww.raw.Close() }

// wait waits for the reader, which every way the watch ends (each closes
// the connection) ends.
func (ww *websocketWriter) wait() { <-ww.readerDone }

package watchserver

import (
	"net/http"

	"listwatch/apiserver/serving"
)

// The watch as one stream of an HTTP/2 connection. Over TLS, clients that
// speak HTTP/2 (client-go, kubectl, curl --http2) negotiate it by ALPN, and
// then every watch of a process is one stream of the same TCP connection
// (up to 100 per connection, the server's SETTINGS say). net/http's HTTP/2
// server frames the events as DATA frames of the stream and ends it with
// END_STREAM when the handler returns; so this writer is the ResponseWriter
// one (stream.go) with one difference, how a watch is killed:
//
//   - the kill-watches fault is a tcpkill: the whole connection is reset,
//     so every stream on it dies at once, watches and requests alike;
//   - the kill-watch-streams fault resets only this stream (RST_STREAM),
//     and the connection's other streams go on.
//
// The stall fault freezes the whole connection too (serving.Conn.Freeze,
// from Server.FreezeHTTP2Connections): a stream that stopped writing
// would not be a half-open connection, since the connection would still
// answer HTTP/2 PINGs.
// Kubernetes serves HTTP/2 watches through the same WatchServer.HandleHTTP.

// h2Writer writes a watch as one HTTP/2 stream.
type h2Writer struct {
	*streamWriter
	conn *serving.Conn
	// kill is the watch's kill channel: closed when the kill was a
	// connection kill rather than a stream kill.
	kill <-chan struct{}
}

func (hw *h2Writer) label() string    { return " (h2 stream)" }
func (hw *h2Writer) endsWith() string { return "ending the stream (END_STREAM)" }

// drop resets the connection for a connection kill, then (in any case)
// makes net/http reset the stream.
func (hw *h2Writer) drop() {
	if hw.conn != nil && closed(hw.kill) {
		hw.conn.Reset()
	}
	panic(http.ErrAbortHandler)
}

package client

//lint:file-ignore SA1019 golang.org/x/net/http2's Transport is deprecated in favour of net/http's, but it is the one client-go configures (util/net SetTransportDefaults), and its ReadIdleTimeout/PingTimeout health check is what this file teaches.

import (
	"fmt"
	"net/http"
	"time"

	"golang.org/x/net/http2"
)

// HTTP/2, as client-go speaks it. Against an https server, Go's transport
// offers h2 by ALPN; a Kubernetes apiserver accepts, and from then on one
// TCP connection carries every request and every watch of the client,
// each watch a stream (up to the server's 100 per connection; past that a
// second connection opens).
//
// That changes the first article's story. Over HTTP/1.1 a watch whose
// connection died silently (a half-open connection: the peer vanished, a
// NAT forgot it, no RST ever comes) looks exactly like a quiet watch and
// hangs forever unless something times it out (Config.IdleWatchTimeout).
// Over HTTP/2 the connection itself is checked: when no frame has arrived
// for ReadIdleTimeout the transport sends a PING, and a server that is
// alive answers at once whatever its watches are doing. No answer within
// PingTimeout and the transport closes the connection: every watch on it
// ends with "http2: client connection lost", which IsProbableEOF counts as
// a dropped connection, so each re-watches from its last resourceVersion,
// without a re-list. client-go turned this on in Kubernetes 1.20 (PR
// 95981) after watches hung for 15 minutes behind dead connections.

// configureHTTP2 makes t speak HTTP/2 to https servers through
// golang.org/x/net/http2, with the PING health check.
func configureHTTP2(t *http.Transport, readIdle, pingTimeout time.Duration) error {
	t2, err := http2.ConfigureTransports(t)
	if err != nil {
		return fmt.Errorf("client: configuring HTTP/2: %w", err)
	}
	switch {
	case readIdle < 0:
		readIdle = 0 // no health check
	case readIdle == 0:
		readIdle = DefaultHTTP2ReadIdleTimeout
	}
	if pingTimeout <= 0 {
		pingTimeout = DefaultHTTP2PingTimeout
	}
	t2.ReadIdleTimeout = readIdle
	t2.PingTimeout = pingTimeout
	return nil
}

// CloseIdleConnections closes the connections of the client's own
// transport that carry nothing at the moment (no request, no watch), as
// http.Client.CloseIdleConnections does; a program that is done with a
// client calls it so no connection outlives it.
func (c *Client) CloseIdleConnections() { c.httpClient.CloseIdleConnections() }

package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"golang.org/x/net/websocket"

	"listwatch/narrate"
)

// closeWriteTimeout bounds the close frame Stop writes on a websocket: a
// peer that stopped reading must not make Stop hang.
const closeWriteTimeout = time.Second

// watchWebSocket opens the watch as a websocket. The server sends each
// event as one text message whose payload is exactly the line the HTTP
// stream would carry, newline included (see ws-watch.jsonl in the
// fixtures), so the payloads, read back to back, are the same byte stream
// and the same EventDecoder cuts it: the semantics are identical. No
// subprotocol is needed; x/net/websocket sends an Origin header, which the
// server insists on.
func (c *Client) watchWebSocket(ctx context.Context, r *request) (Watcher, error) {
	u := c.url(r)
	origin := url.URL{Scheme: u.Scheme, Host: u.Host}
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	wsCfg, err := websocket.NewConfig(u.String(), origin.String())
	if err != nil {
		return nil, fmt.Errorf("client: websocket watch %s: %w", u, err)
	}
	c.setHeaders(wsCfg.Header)

	conn, err := c.dialWebSocket(ctx, u)
	if err != nil {
		c.tr.Printf(narrate.HTTP, "GET %s (websocket): %v", u.RequestURI(), err)
		return nil, fmt.Errorf("client: websocket watch %s: %w", u, err)
	}
	// The handshake has no context of its own: a cancelled ctx expires
	// the connection's deadline, which fails whatever is blocked on it.
	stopDeadline := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	rec := &handshakeConn{Conn: conn, recording: true}
	ws, err := websocket.NewClient(wsCfg, rec)
	if err != nil {
		defer conn.Close()
		defer stopDeadline()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("client: websocket watch %s: %w", u, context.Cause(ctx))
		}
		if errors.Is(err, websocket.ErrBadStatus) {
			// The server refused the upgrade with an ordinary answer
			// (a Status, usually). x/net/websocket drops it, so read it
			// again from the bytes we kept.
			return nil, c.refusedUpgrade(rec, u, r)
		}
		return nil, fmt.Errorf("client: websocket watch %s: %w", u, err)
	}
	if !stopDeadline() {
		_ = ws.Close()
		return nil, fmt.Errorf("client: websocket watch %s: %w", u, context.Cause(ctx))
	}
	rec.recording = false
	rec.buf = bytes.Buffer{}
	_ = conn.SetDeadline(time.Time{})
	if c.tr.Enabled() {
		c.tr.Printf(narrate.HTTP, "GET %s (websocket) → 101", u.RequestURI())
		c.tr.Printf(narrate.StreamWatcher, "watch open (websocket) %s", u.RequestURI())
	}

	// Cancelling ctx must end the watch as it does over HTTP. The watch
	// gets a context of its own, cancelled when the body closes, so the
	// AfterFunc below never outlives the watch.
	wctx, wcancel := context.WithCancel(ctx)
	body := newWatchBody(ws, func() error {
		wcancel()
		_ = conn.SetWriteDeadline(time.Now().Add(closeWriteTimeout))
		return ws.Close() // sends close(1000), then closes the socket
	}, c.idle, c.clock, c.tr)
	context.AfterFunc(wctx, func() { _ = body.Close() })
	return NewStreamWatcher(body, c.tr), nil
}

// dialWebSocket opens the TCP (or TLS) connection for a websocket.
func (c *Client) dialWebSocket(ctx context.Context, u *url.URL) (net.Conn, error) {
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "wss" {
			host = net.JoinHostPort(u.Hostname(), "443")
		} else {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if u.Scheme == "wss" {
		td := &tls.Dialer{NetDialer: d, Config: c.tlsConfig}
		return td.DialContext(ctx, "tcp", host)
	}
	return d.DialContext(ctx, "tcp", host)
}

// refusedUpgrade reads the non-101 answer to a websocket handshake and
// turns it into the same *StatusError the HTTP transport would return.
func (c *Client) refusedUpgrade(rec *handshakeConn, u *url.URL, r *request) error {
	rec.recording = false
	_ = rec.Conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(io.MultiReader(bytes.NewReader(rec.buf.Bytes()), rec.Conn))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet, URL: u})
	if err != nil {
		return fmt.Errorf("client: websocket watch %s: upgrade refused, and the answer is unreadable: %w", u, err)
	}
	defer resp.Body.Close()
	c.tr.Printf(narrate.HTTP, "GET %s (websocket) → %d", u.RequestURI(), resp.StatusCode)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// A server that answers a watch with a plain 200 did not
		// understand the upgrade at all.
		return fmt.Errorf("client: websocket watch %s: server answered %s instead of switching protocols", u, resp.Status)
	}
	return statusFromResponse(resp, body, r.method, r.gr, r.name)
}

// handshakeConn keeps a copy of what it reads while recording is on, so
// that the answer to a refused handshake can be parsed again.
type handshakeConn struct {
	net.Conn
	recording bool
	buf       bytes.Buffer
}

func (h *handshakeConn) Read(p []byte) (int, error) {
	n, err := h.Conn.Read(p)
	if h.recording && n > 0 {
		h.buf.Write(p[:n])
		if h.buf.Len() > maxErrorBodyBytes {
			h.recording = false // not a handshake answer any more
		}
	}
	return n, err
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"listwatch/narrate"
)

// wiretap shows what a watch looks like on the wire: it wraps the client's
// TCP connections and, for every read that carries a watch event, narrates
// the raw HTTP chunk as it came off the socket: the chunk-size line in hex,
// the JSON event, the CRLF that closes the chunk. net/http removes this
// framing before StreamWatcher sees the body, so this is the only place a
// Go client can show it. It only observes: the bytes are passed on as read.
type wiretap struct {
	tr   *narrate.Tracer
	seen func(ev wireEvent) // called for every event frame read
}

// wireEvent is what the tap understood of one chunk.
type wireEvent struct {
	sizeLine string // the chunk-size line, e.g. "e0"
	size     int    // its value
	typ      string // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	key      string // namespace/name of the object, if any
	rv       string
	code     int    // an ERROR's Status code
	reason   string // and reason
	end      bool   // the terminating chunk, "0\r\n\r\n": the response is over
}

// transport returns an HTTP transport whose connections are tapped.
func (t *wiretap) transport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &tappedConn{Conn: c, tap: t}, nil
		},
		// The tour makes few requests; keep it simple and HTTP/1.1, as
		// the wire chapter describes.
		ForceAttemptHTTP2: false,
		MaxIdleConns:      4,
		// No Accept-Encoding: gzip, so the events stay readable on the
		// wire. Asked with it, kube-apiserver 1.37 (and ours) compresses a
		// watch-list response (sendInitialEvents with bookmarks), and the
		// chunks would be gzip members (docs/01-wire-protocol.md).
		DisableCompression: true,
	}
}

type tappedConn struct {
	net.Conn
	tap *wiretap
}

func (c *tappedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && (c.tap.tr.Enabled() || c.tap.seen != nil) {
		c.tap.inspect(p[:n])
	}
	return n, err
}

// eventMarker starts every watch event's JSON; other responses (lists, a
// created object) do not contain it at their top.
var eventMarker = []byte(`{"type":"`)

// inspect narrates the watch event chunks in one read. A read may hold
// several chunks, or part of one; parts are skipped (the tour's events are
// small and loopback reads whole chunks).
func (t *wiretap) inspect(b []byte) {
	// The first read of a response usually carries its headers too.
	if bytes.HasPrefix(b, []byte("HTTP/1.")) {
		i := bytes.Index(b, []byte("\r\n\r\n"))
		if i < 0 {
			return
		}
		b = b[i+4:]
	}
	for len(b) > 0 {
		i := bytes.Index(b, []byte("\r\n"))
		if i <= 0 || i > 8 {
			return
		}
		size, err := strconv.ParseUint(string(b[:i]), 16, 32)
		if err != nil {
			return
		}
		if size == 0 {
			if t.seen != nil {
				t.seen(wireEvent{sizeLine: "0", end: true})
			}
			return
		}
		start, end := i+2, i+2+int(size)
		if end > len(b) {
			return // the rest of this chunk is in a later read
		}
		payload := b[start:end]
		if bytes.HasPrefix(payload, eventMarker) {
			ev := describeFrame(string(b[:i]), int(size), payload)
			t.tr.Printf(narrate.HTTP, "client read chunk %q + %d bytes %s + \"\\r\\n\"",
				ev.sizeLine+"\r\n", ev.size, ev.summary())
			if t.seen != nil {
				t.seen(ev)
			}
		}
		b = b[end:]
		b = bytes.TrimPrefix(b, []byte("\r\n"))
	}
}

// describeFrame decodes the parts of an event the narration shows.
func describeFrame(sizeLine string, size int, payload []byte) wireEvent {
	ev := wireEvent{sizeLine: sizeLine, size: size}
	var frame struct {
		Type   string `json:"type"`
		Object struct {
			Code     int    `json:"code"`
			Reason   string `json:"reason"`
			Metadata struct {
				Name            string `json:"name"`
				Namespace       string `json:"namespace"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if err := json.Unmarshal(payload, &frame); err != nil {
		ev.typ = "(undecodable)"
		return ev
	}
	m := frame.Object.Metadata
	ev.typ, ev.rv = frame.Type, m.ResourceVersion
	ev.code, ev.reason = frame.Object.Code, frame.Object.Reason
	if m.Name != "" {
		ev.key = m.Name
		if m.Namespace != "" {
			ev.key = m.Namespace + "/" + m.Name
		}
	}
	return ev
}

// summary abbreviates the JSON event to what matters on one line.
func (ev wireEvent) summary() string {
	if ev.code != 0 {
		return fmt.Sprintf(`{"type":%q,"object":{"kind":"Status",…"reason":%q,"code":%d}}`, ev.typ, ev.reason, ev.code)
	}
	if ev.key == "" {
		return fmt.Sprintf(`{"type":%q,…"resourceVersion":%q…}`, ev.typ, ev.rv)
	}
	return fmt.Sprintf(`{"type":%q,"object":{…%s…"resourceVersion":%q…}}`, ev.typ, ev.key, ev.rv)
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"time"
)

// target is the kube-apiserver the recorder talks to.
type target struct {
	addr  string // host:port
	tls   *tls.Config
	token string
}

// port is the target's port, for refcluster's -port.
func (t target) port() string {
	_, port, _ := net.SplitHostPort(t.addr)
	return port
}

// chunk is one HTTP chunk as it arrived, at its time since the request.
type chunk struct {
	at   time.Duration
	data []byte
}

// response is everything the recorder keeps of one exchange.
type response struct {
	sent       time.Time
	status     string // "200 OK"
	header     textproto.MIMEHeader
	headerKeys []string // in the order received
	chunked    bool
	chunks     []chunk // for a chunked body
	body       []byte  // the de-chunked body (for a WebSocket, the messages)
	frames     []wsFrame
	ended      string // how the body ended
	events     int    // when > 0, a chunked body is read until it holds this many lines
}

// requestBytes writes a request as the recorder sends it: HTTP/1.1, the
// recorder's User-Agent, JSON unless the step says otherwise.
func (t target) requestBytes(method, path string, headers map[string]string, body string) []byte {
	h := map[string]string{
		"Host":          t.addr,
		"User-Agent":    "fixture-recorder",
		"Accept":        "application/json",
		"Authorization": "Bearer " + t.token,
	}
	if body != "" {
		h["Content-Type"] = "application/json"
		h["Content-Length"] = strconv.Itoa(len(body))
	}
	for k, v := range headers {
		h[k] = v
		if v == "" {
			delete(h, k) // the script leaves a default header out this way
		}
	}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\n", method, path)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\r\n", k, h[k])
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	return b.Bytes()
}

// exchange sends one request on a new TLS connection and reads the whole
// response. A stream is read until the server ends it, until it holds
// events events (when events > 0: lines of the body, the initial events
// and the ones during's writes make, so the end of the recording waits
// for them, however slow the writes), or
// until maxWait passes (a hang guard); while it is open, during runs (the
// writes a watch should see).
func (t target) exchange(ctx context.Context, req []byte, maxWait time.Duration, events int, during func() error) (*response, error) {
	d := tls.Dialer{Config: t.tls}
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", t.addr, err)
	}
	defer conn.Close()
	r := &response{sent: time.Now(), events: events}
	if maxWait > 0 {
		_ = conn.SetReadDeadline(r.sent.Add(maxWait))
	}
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	br := bufio.NewReader(conn)
	if err := r.readHead(br); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- r.readBody(br) }()
	var duringErr error
	if during != nil {
		duringErr = during()
	}
	select {
	case err = <-done:
	case <-ctx.Done():
		conn.Close()
		<-done
		err = ctx.Err()
	}
	return r, errors.Join(err, duringErr)
}

func (r *response) readHead(br *bufio.Reader) error {
	tp := textproto.NewReader(br)
	line, err := tp.ReadLine()
	if err != nil {
		return fmt.Errorf("status line: %w", err)
	}
	_, status, ok := strings.Cut(line, " ")
	if !ok {
		return fmt.Errorf("status line %q", line)
	}
	r.status = status
	r.header = textproto.MIMEHeader{}
	for {
		kv, err := tp.ReadLine()
		if err != nil {
			return fmt.Errorf("headers: %w", err)
		}
		if kv == "" {
			return nil
		}
		k, v, _ := strings.Cut(kv, ":")
		k = textproto.CanonicalMIMEHeaderKey(k)
		if _, seen := r.header[k]; !seen {
			r.headerKeys = append(r.headerKeys, k)
		}
		r.header.Add(k, strings.TrimSpace(v))
	}
}

// readBody reads the body as framed: chunked (each chunk kept with its
// time), by Content-Length, or none at all for 204 and 304.
func (r *response) readBody(br *bufio.Reader) error {
	switch {
	case strings.HasPrefix(r.status, "204") || strings.HasPrefix(r.status, "304"):
		r.ended = "no body by definition"
		return nil
	case r.header.Get("Transfer-Encoding") == "chunked":
		r.chunked = true
		return r.readChunks(br)
	case r.header.Get("Content-Length") != "":
		n, err := strconv.Atoi(r.header.Get("Content-Length"))
		if err != nil {
			return fmt.Errorf("Content-Length: %w", err)
		}
		r.body = make([]byte, n)
		if _, err := io.ReadFull(br, r.body); err != nil {
			return fmt.Errorf("body: %w", err)
		}
		r.ended = "Content-Length bytes read"
		return nil
	}
	body, err := io.ReadAll(br)
	r.body, r.ended = body, "connection closed"
	return err
}

func (r *response) readChunks(br *bufio.Reader) error {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return r.streamEnd(err)
		}
		sizeHex, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		size, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil {
			return fmt.Errorf("chunk size %q: %w", line, err)
		}
		at := time.Since(r.sent)
		if size == 0 {
			r.chunks = append(r.chunks, chunk{at: at})
			r.ended = fmt.Sprintf("terminal 0-size chunk received after %.3fs", at.Seconds())
			return nil
		}
		data := make([]byte, size+2) // the chunk and its CRLF
		if _, err := io.ReadFull(br, data); err != nil {
			return r.streamEnd(err)
		}
		r.chunks = append(r.chunks, chunk{at: at, data: data[:size]})
		r.body = append(r.body, data[:size]...)
		if r.events > 0 && bytes.Count(r.body, []byte("\n")) >= r.events {
			r.ended = fmt.Sprintf("recorder stopped reading after the %d events expected, at %.3fs (stream still open)",
				r.events, at.Seconds())
			return nil
		}
	}
}

// streamEnd turns the read deadline into the recorder's own end of a
// stream that was still open; any other error is one.
func (r *response) streamEnd(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.ended = fmt.Sprintf("recorder stopped reading after %.3fs (stream still open)", time.Since(r.sent).Seconds())
		return nil
	}
	return fmt.Errorf("chunked body: %w", err)
}

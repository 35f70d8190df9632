package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// runHTTP2 records GET s.Path over HTTP/2 twice, first without
// credentials and then with the token, as a text transcript of every
// frame: the server's SETTINGS and window, the headers (lower-case, as
// HTTP/2 has them), and whether it sends GOAWAY.
func (r *recorder) runHTTP2(ctx context.Context, s step) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# HTTP/2 against %s\n", strings.Replace(r.server, "HTTP/1.1 over TLS", "HTTP/2 over TLS (ALPN h2)", 1))
	fmt.Fprintf(&b, "# Recorded %s by the recorder's own HTTP/2 client (golang.org/x/net/http2's Framer), frame by frame.\n",
		time.Now().UTC().Format(time.RFC3339))
	b.WriteString("# Audit-Id, the flow-control uids and Date are masked; the bearer token is never written.\n")
	for i, auth := range []bool{false, true} {
		what := "without credentials"
		if auth {
			what = "with the bearer token"
		}
		fmt.Fprintf(&b, "\n## %d. GET %s %s\n", i+1, s.Path, what)
		if err := r.target.h2Transcript(ctx, &b, s.Path, auth); err != nil {
			return fmt.Errorf("HTTP/2 %s: %w", what, err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.outDir, s.File), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", s.File, err)
	}
	entry := fmt.Sprintf("### `%s`\n\n* Server: %s\n* Request: `GET %s` over HTTP/2, without and with `Authorization: Bearer <token>` - "+
		"headers `user-agent: fixture-recorder`, `accept: application/json`\n* Response: the frames, as text, in the file\n"+
		"* Recorded at %s\n* Demonstrates: %s\n\n",
		s.File, strings.Replace(r.server, "HTTP/1.1", "HTTP/2", 1), s.Path, time.Now().UTC().Format(time.RFC3339), s.Demonstrates)
	r.addEntry(s.Section, entry)
	fmt.Fprintf(r.log, "HTTP/2 GET %s recorded\n", s.Path)
	return nil
}

// h2Transcript makes one HTTP/2 connection, sends one GET and writes
// every frame read until the stream ends or the server goes away.
func (t target) h2Transcript(ctx context.Context, w io.Writer, path string, auth bool) error {
	cfg := t.tls.Clone()
	cfg.NextProtos = []string{http2.NextProtoTLS}
	d := tls.Dialer{Config: cfg}
	c, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return fmt.Errorf("dial: %w", err)
	}
	defer c.Close()
	conn := c.(*tls.Conn)
	st := conn.ConnectionState()
	fmt.Fprintf(w, "ALPN: the recorder offers h2, the server selects %q (%s)\n", st.NegotiatedProtocol, tls.VersionName(st.Version))
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // a safety net: /version answers at once
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		return fmt.Errorf("preface: %w", err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	fmt.Fprintln(w, "write SETTINGS len=0 (the client's: all defaults)")
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	fields := []hpack.HeaderField{{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: t.addr}, {Name: ":path", Value: path},
		{Name: "user-agent", Value: "fixture-recorder"}, {Name: "accept", Value: "application/json"}}
	if auth {
		fields = append(fields, hpack.HeaderField{Name: "authorization", Value: "Bearer " + t.token})
	}
	for _, f := range fields {
		_ = enc.WriteField(f)
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		return fmt.Errorf("headers: %w", err)
	}
	fmt.Fprintf(w, "write HEADERS stream=1 END_STREAM: GET %s\n", path)
	return readH2Frames(w, fr)
}

// readH2Frames writes each frame the server sends until stream 1 ends
// or the connection does.
func readH2Frames(w io.Writer, fr *http2.Framer) error {
	dec := hpack.NewDecoder(4096, nil)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(w, "connection closed by the server")
				return nil
			}
			return fmt.Errorf("read frame: %w", err)
		}
		h := f.Header()
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				fmt.Fprintln(w, "read SETTINGS flags=ACK")
				continue
			}
			var kv []string
			_ = f.ForeachSetting(func(s http2.Setting) error {
				kv = append(kv, fmt.Sprintf("%s=%d", s.ID, s.Val))
				return nil
			})
			fmt.Fprintf(w, "read SETTINGS len=%d, settings: %s\n", h.Length, strings.Join(kv, ", "))
			if err := fr.WriteSettingsAck(); err != nil {
				return fmt.Errorf("settings ack: %w", err)
			}
		case *http2.WindowUpdateFrame:
			scope := fmt.Sprintf("stream=%d", f.StreamID)
			if f.StreamID == 0 {
				scope = "(conn)"
			}
			fmt.Fprintf(w, "read WINDOW_UPDATE len=%d %s incr=%d\n", h.Length, scope, f.Increment)
		case *http2.HeadersFrame:
			fields, err := dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				return fmt.Errorf("decode headers: %w", err)
			}
			fmt.Fprintf(w, "read HEADERS stream=%d end_stream=%v\n", f.StreamID, f.StreamEnded())
			for _, hf := range fields {
				fmt.Fprintf(w, "    %s: %s\n", hf.Name, maskH2(hf.Name, hf.Value))
			}
			if f.StreamEnded() {
				return nil
			}
		case *http2.DataFrame:
			fmt.Fprintf(w, "read DATA stream=%d len=%d end_stream=%v\n", f.StreamID, h.Length, f.StreamEnded())
			if len(f.Data()) > 0 {
				fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(strings.TrimRight(string(f.Data()), "\n"), "\n", "\n    "))
			}
			if f.StreamEnded() {
				return nil
			}
		case *http2.GoAwayFrame:
			fmt.Fprintf(w, "read GOAWAY len=%d last_stream=%d error=%s\n", h.Length, f.LastStreamID, f.ErrCode)
		case *http2.PingFrame:
			fmt.Fprintf(w, "read PING ack=%v\n", f.IsAck())
		default:
			fmt.Fprintf(w, "read %s len=%d stream=%d\n", h.Type, h.Length, h.StreamID)
		}
	}
}

// maskH2 hides the values that differ on every request.
func maskH2(name, value string) string {
	switch name {
	case "audit-id", "date", "x-kubernetes-pf-flowschema-uid", "x-kubernetes-pf-prioritylevel-uid":
		return "<masked>"
	}
	return value
}

// Command 01-curl-watch does a Kubernetes watch by hand, with nothing but
// net/http, and prints every byte the server sends: first the chunked HTTP
// response that client-go reads, then the same watch over a websocket.
//
// It answers the third article's question, "what is a watch, really?": an
// ordinary GET with ?watch=true whose response never ends on its own. The
// server says 200 at once, then writes one JSON event per line, each in an
// HTTP chunk, until its timeout, when it sends the terminating chunk.
//
//	go run ./examples/01-curl-watch
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/narrate"
)

func main() {
	timeout := flag.Duration("timeout", 2*time.Second, "the watches' ?timeoutSeconds: when the server ends them (whole seconds)")
	width := flag.Int("width", 100, "shorten raw bytes to about this many characters (0: print everything)")
	trace := flag.Bool("trace", false, "also narrate every layer of our apiserver (store, watch cache, HTTP)")
	flag.Parse()
	if *timeout < time.Second {
		demo.Fail(fmt.Errorf("-timeout must be at least 1s: timeoutSeconds counts whole seconds"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *timeout, *width, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, timeout time.Duration, width int, tr *narrate.Tracer) error {
	ctx := context.Background()
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: tr}, client.Config{})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver is listening on %s", srv.URL())

	created, err := cms.Create(ctx, demo.ConfigMap("demo", map[string]string{"color": "blue"}, nil))
	if err != nil {
		return err
	}
	rv := created.Metadata.ResourceVersion
	p.Say("setup", "created ConfigMap default/demo at resourceVersion %s; the watches start from there", rv)

	query := url.Values{}
	query.Set("watch", "true")
	query.Set("resourceVersion", rv)
	query.Set("timeoutSeconds", strconv.Itoa(int(timeout/time.Second)))
	path := "/api/v1/namespaces/default/configmaps?" + query.Encode()

	if err := chunked(ctx, p, srv.URL()+path, cms, timeout, width); err != nil {
		return err
	}
	return overWebsocket(ctx, p, srv.URL(), path, cms, width)
}

// chunked watches over plain HTTP/1.1 and shows the wire: the request, the
// response headers, one chunk per event, the terminating chunk.
func chunked(ctx context.Context, p *demo.Printer, watchURL string, cms *client.ResourceClient, timeout time.Duration, width int) error {
	p.Section("1. a watch is a GET that does not end: chunked HTTP, byte by byte")
	p.Say("curl", "curl -sN '%s'", watchURL)
	p.Say("note", `"wire ->" is what we send, "wire <-" what arrives, as it arrives`)

	// A transport of our own: no gzip (curl sends none either, and the
	// bytes must be readable), and every connection tapped.
	var tapped *tap
	transport := &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tapped = &tap{Conn: conn, p: p, width: width}
			return tapped, nil
		},
	}
	defer transport.CloseIdleConnections()
	httpClient := &http.Client{Transport: transport}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, watchURL, nil)
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	p.Say("status", "%s, Transfer-Encoding: %s, Content-Type: %s: the headers came at once, the body is still open",
		resp.Status, strings.Join(resp.TransferEncoding, ","), resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("watch answered %s", resp.Status)
	}

	// Three changes, one at a time: each is made only after the previous
	// one has arrived, so each travels in a chunk of its own.
	seen := make(chan struct{}, 1)
	changesDone := make(chan error, 1)
	go func() { changesDone <- makeChanges(ctx, p, cms, seen) }()

	lines := bufio.NewScanner(resp.Body)
	lines.Buffer(make([]byte, 0, 64<<10), 16<<20)
	n := 0
	for lines.Scan() {
		n++
		var ev api.Event
		if err := ev.UnmarshalJSON(lines.Bytes()); err != nil {
			return fmt.Errorf("event %d: %w", n, err)
		}
		p.Say("event", "%-8s %s rv=%s  (one line of JSON = one event, %d bytes)",
			ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, len(lines.Bytes())+1)
		select {
		case seen <- struct{}{}:
		default:
		}
	}
	if err := lines.Err(); err != nil {
		return fmt.Errorf("reading the watch: %w", err)
	}
	if err := <-changesDone; err != nil {
		return err
	}
	demo.Check(tapped != nil && tapped.endedWith("0\r\n\r\n"), "the response did not end with the terminating chunk")
	p.Say("end", "after %v the server ended the response (timeoutSeconds=%d): the terminating chunk %q, then EOF",
		time.Since(start).Round(100*time.Millisecond), int(timeout/time.Second), "0\r\n\r\n")
	p.Say("end", "%d events, each a line of JSON inside an HTTP chunk; client-go's StreamWatcher decodes exactly this", n)
	demo.Check(n == 4, "expected 4 events (ADDED, MODIFIED, MODIFIED, DELETED), got %d", n)
	return nil
}

// makeChanges creates, updates and deletes a ConfigMap, waiting on seen
// before each change (the first waits for nothing but the open watch).
func makeChanges(ctx context.Context, p *demo.Printer, cms *client.ResourceClient, seen <-chan struct{}) error {
	step := func(what string, do func() error) error {
		p.Say("change", "%s", what)
		if err := do(); err != nil {
			return err
		}
		select {
		case <-seen:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("the watch did not report %q within 10s", what)
		}
	}
	if err := step("create ConfigMap demo-2", func() error {
		_, err := cms.Create(ctx, demo.ConfigMap("demo-2", map[string]string{"n": "1"}, nil))
		return err
	}); err != nil {
		return err
	}
	if err := step("update ConfigMap demo: color=green", func() error {
		_, err := cms.Update(ctx, demo.ConfigMap("demo", map[string]string{"color": "green"}, nil))
		return err
	}); err != nil {
		return err
	}
	if err := step("update ConfigMap demo-2: n=2", func() error {
		_, err := cms.Update(ctx, demo.ConfigMap("demo-2", map[string]string{"n": "2"}, nil))
		return err
	}); err != nil {
		return err
	}
	return step("delete ConfigMap demo-2", func() error {
		return cms.Delete(ctx, "demo-2", client.DeleteOptions{})
	})
}

// overWebsocket runs the same watch from the same resourceVersion over a
// websocket: the server replays the four changes, one text message each.
func overWebsocket(ctx context.Context, p *demo.Printer, base, path string, cms *client.ResourceClient, width int) error {
	p.Section("2. the same watch over a websocket: one message per event")
	wsURL := "ws" + strings.TrimPrefix(base, "http") + path
	p.Say("by hand", "go run ./cmd/wswatch '%s'   (like websocat, with nothing to install)", wsURL)
	p.Say("note", "same resourceVersion, so the server replays the same four changes from its watch cache")

	cfg, err := websocket.NewConfig(wsURL, base)
	if err != nil {
		return err
	}
	var d net.Dialer
	raw, err := d.DialContext(ctx, "tcp", cfg.Location.Host)
	if err != nil {
		return err
	}
	tapped := &tap{Conn: raw, p: p, width: width}
	conn, err := websocket.NewClient(cfg, tapped)
	if err != nil {
		_ = raw.Close()
		return fmt.Errorf("websocket handshake: %w", err)
	}
	// Closed once: at the end, to show the client's answer to the server's
	// close frame in its place, or on the way out after an error.
	closeWS := sync.OnceValue(conn.Close)
	defer closeWS()

	start := time.Now()
	n := 0
	for {
		var msg string
		err := websocket.Message.Receive(conn, &msg)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("websocket: %w", err)
		}
		n++
		var ev api.Event
		if err := ev.UnmarshalJSON([]byte(msg)); err != nil {
			return fmt.Errorf("message %d: %w", n, err)
		}
		p.Say("message", "#%d: %-8s %s rv=%s  (one text message = one event, %d bytes)",
			n, ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion, len(msg))
		if n == 4 {
			// One live change too, to see it is a watch and not a replay.
			p.Say("change", "update ConfigMap demo: color=red")
			if _, err := cms.Update(ctx, demo.ConfigMap("demo", map[string]string{"color": "red"}, nil)); err != nil {
				return err
			}
		}
	}
	// A close frame: 0x88 (FIN + opcode 8), length 2, status 1000 = 0x03e8.
	demo.Check(tapped.endedWith("\x88\x02\x03\xe8"), "the websocket did not end with a close frame, status 1000")
	p.Say("end", "after %v the server closed the websocket: a close frame (0x88) with status 1000 (0x03e8), then EOF",
		time.Since(start).Round(100*time.Millisecond))
	_ = closeWS()
	p.Say("end", "we answer with a close frame of our own (the line above): 0x88, 0x82 (2 bytes, masked as every client frame must be), the 4-byte mask, status 1000 masked")
	p.Say("end", "%d messages; no HTTP chunks here: the websocket frames each event instead", n)
	demo.Check(n == 5, "expected 5 websocket messages (4 replayed, 1 live), got %d", n)
	return nil
}

// tap is a connection that prints every byte read and written.
// It remembers the last bytes read, to tell how the stream ended.
type tap struct {
	net.Conn
	p     *demo.Printer
	width int

	mu   sync.Mutex
	last []byte
}

func (t *tap) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	if n > 0 {
		t.p.Say("wire <-", "%s", shorten(b[:n], t.width))
		t.mu.Lock()
		t.last = append(t.last[:0], b[:n]...)
		t.mu.Unlock()
	}
	return n, err
}

// endedWith reports whether the last bytes read ended with suffix.
func (t *tap) endedWith(suffix string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.HasSuffix(string(t.last), suffix)
}

func (t *tap) Write(b []byte) (int, error) {
	t.p.Say("wire ->", "%s", shorten(b, t.width))
	return t.Conn.Write(b)
}

// shorten quotes b (so \r\n and binary frame headers show) and, if longer
// than width, cuts out the middle: the framing is at the two ends.
func shorten(b []byte, width int) string {
	q := strconv.Quote(string(b))
	if width <= 0 || len(q) <= width {
		return q
	}
	head, tail := width*2/3, width/3
	return q[:head] + " … " + q[len(q)-tail:] + fmt.Sprintf("  (%d bytes)", len(b))
}

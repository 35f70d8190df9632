// Command wswatch is a tiny websocket client for watching by hand: what
// websocat does, with nothing to install. Give it a watch URL; it opens
// the watch as a websocket and prints each message as it arrives, one
// watch event per line, until the server closes the websocket (at the
// watch's timeout) or you press Ctrl-C.
//
//	go run ./cmd/apiserver        # in one terminal
//	go run ./cmd/wswatch 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps?watch=true'
//
// http:// and https:// URLs are turned into ws:// and wss://. With -frames
// it also prints each message's size, to compare with the chunk sizes
// curl shows for the same watch. See docs/01-wire-protocol.md.
//
// It mirrors nothing in Kubernetes: client-go watches over chunked HTTP;
// kubectl and the dashboard's websocket clients speak the same protocol.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/net/websocket"
)

func main() {
	frames := flag.Bool("frames", false, "print each message's size before it")
	insecure := flag.Bool("insecure", false, "do not verify the server's TLS certificate (wss:// only)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: wswatch [-frames] [-insecure] URL\n\n"+
			"Opens URL (a watch: ...?watch=true) as a websocket and prints every message.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, flag.Arg(0), options{frames: *frames, insecure: *insecure}); err != nil {
		fmt.Fprintln(os.Stderr, "wswatch:", err)
		os.Exit(1)
	}
}

type options struct {
	frames   bool
	insecure bool
}

// run watches rawURL over a websocket and writes every message to out.
// It returns nil when the server closes the websocket or ctx ends.
func run(ctx context.Context, out io.Writer, rawURL string, o options) error {
	u, origin, err := websocketURL(rawURL)
	if err != nil {
		return err
	}
	cfg, err := websocket.NewConfig(u.String(), origin)
	if err != nil {
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", hostPort(u))
	if err != nil {
		return err
	}
	if u.Scheme == "wss" {
		tc := tls.Client(conn, &tls.Config{ServerName: u.Hostname(), InsecureSkipVerify: o.insecure})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return err
		}
		conn = tc
	}
	// Ctrl-C (or a cancelled ctx) ends a blocked read.
	defer context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })()
	ws, err := websocket.NewClient(cfg, conn)
	if err != nil {
		_ = conn.Close()
		if errors.Is(err, websocket.ErrBadStatus) {
			return fmt.Errorf("the server refused the websocket upgrade (try the URL with curl to see its answer): %w", err)
		}
		return err
	}
	defer ws.Close()
	fmt.Fprintf(out, "# connected: GET %s (websocket), 101 Switching Protocols\n", u.RequestURI())
	for n := 1; ; n++ {
		var msg string
		err := websocket.Message.Receive(ws, &msg)
		switch {
		case errors.Is(err, io.EOF):
			fmt.Fprintf(out, "# the server closed the websocket after %d messages: the watch is over\n", n-1)
			return nil
		case ctx.Err() != nil:
			fmt.Fprintf(out, "# interrupted after %d messages\n", n-1)
			return nil
		case err != nil:
			return err
		}
		if o.frames {
			fmt.Fprintf(out, "# message %d: one text frame, %d bytes\n", n, len(msg))
		}
		fmt.Fprintln(out, strings.TrimSuffix(msg, "\n"))
	}
}

// websocketURL turns an http(s) or ws(s) URL into a ws(s) URL and the
// Origin header to send (the server insists on one).
func websocketURL(raw string) (*url.URL, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("not a URL: %w", err)
	}
	origin := url.URL{Host: u.Host}
	switch u.Scheme {
	case "http", "ws":
		u.Scheme, origin.Scheme = "ws", "http"
	case "https", "wss":
		u.Scheme, origin.Scheme = "wss", "https"
	default:
		return nil, "", fmt.Errorf("%q: the URL must start with http://, https://, ws:// or wss://", raw)
	}
	if u.Host == "" {
		return nil, "", fmt.Errorf("%q: the URL has no host", raw)
	}
	return u, origin.String(), nil
}

// hostPort is the address to dial, with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "wss" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

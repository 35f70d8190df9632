// Command 15-http2 shows what a real cluster's transport changes about
// watches: over TLS, HTTP/2 carries every watch of a client as one stream
// of one TCP connection. So one tcpkill ends them all at once, and a
// connection that went silent (half-open) is found by an HTTP/2 PING,
// which HTTP/1.1 has no equivalent of: there a silent watch hangs until
// the client's own idle timeout, if it set one.
//
//	go run ./examples/15-http2
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
)

func main() {
	watches := flag.Int("watches", 50, "how many watches the client opens")
	readIdle := flag.Duration("read-idle", time.Second, "the client's HTTP2ReadIdleTimeout (client-go: 30s)")
	pingTimeout := flag.Duration("ping-timeout", time.Second, "the client's HTTP2PingTimeout (client-go: 15s)")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *watches < 1 || *readIdle <= 0 || *pingTimeout <= 0 {
		demo.Fail(fmt.Errorf("-watches, -read-idle and -ping-timeout must be positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *watches, *readIdle, *pingTimeout, *trace); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, n int, readIdle, pingTimeout time.Duration, trace bool) error {
	ctx := context.Background()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0", SelfSignedTLS: true, Tracer: demo.Tracer(trace)})
	if err != nil {
		return err
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(stopCtx)
	}()
	p.Say("server", "%s, TLS with a generated certificate; HTTP/2 by ALPN, at most 100 streams per connection", srv.URL())

	newClient := func(cfg client.Config) (*client.ResourceClient, func(), error) {
		cfg.Host, cfg.CAData = srv.URL(), srv.CACertificate()
		c, err := client.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		return c.Resource(demo.ConfigMaps).Namespace(demo.Namespace), c.CloseIdleConnections, nil
	}
	cms, closeIdle, err := newClient(client.Config{HTTP2ReadIdleTimeout: readIdle, HTTP2PingTimeout: pingTimeout})
	if err != nil {
		return err
	}
	defer closeIdle()

	// 1. Many watches, one connection.
	p.Section("%d watches from one client", n)
	ws, err := openWatches(ctx, cms, n)
	if err != nil {
		return err
	}
	view, err := debugView(srv)
	if err != nil {
		return err
	}
	conns := view.connections()
	p.Say("debug", "%d watches open on %d TCP connection(s) %v, transport %q; %d connection(s) speak HTTP/2",
		len(view.Watches), len(conns), keys(conns), view.Watches[0].Transport, view.Connections.HTTP2)
	demo.Check(len(conns) == 1, "expected one connection, got %v", conns)

	// 2. tcpkill: one connection reset ends every watch on it.
	p.Section("the kill fault resets that one connection (tcpkill)")
	start := time.Now()
	killed := srv.Faults().KillWatchConnections()
	ended := waitEnded(ws, 10*time.Second)
	p.Say("kill", "the server reset 1 connection carrying %d watches; %d of %d watches ended within %v",
		killed, ended, n, time.Since(start).Round(10*time.Millisecond))
	demo.Check(ended == n, "only %d of %d watches ended", ended, n)

	// 3. A half-open connection: the PING finds it.
	p.Section("a half-open connection: no data, no answer to anything")
	ws, err = openWatches(ctx, cms, n)
	if err != nil {
		return err
	}
	start = time.Now()
	srv.Faults().StallWatches()
	ended = waitEnded(ws, 10*(readIdle+pingTimeout))
	took := time.Since(start)
	p.Say("h2", "ReadIdleTimeout %v passed without a frame: the client sent a PING; PingTimeout %v passed without an answer: it closed the connection",
		readIdle, pingTimeout)
	p.Say("h2", "%d of %d watches ended after %v (\"http2: client connection lost\", a dropped watch: re-watch from the last resourceVersion)",
		ended, n, took.Round(10*time.Millisecond))
	demo.Check(ended == n, "only %d of %d watches ended", ended, n)
	srv.Faults().KillWatchConnections() // let go of what the server still holds

	// 4. The same over HTTP/1.1: nothing notices, unless IdleWatchTimeout.
	p.Section("the same over HTTP/1.1: no PING, so nothing notices")
	h1, closeH1, err := newClient(client.Config{DisableHTTP2: true})
	if err != nil {
		return err
	}
	defer closeH1()
	w, err := h1.Watch(ctx, api.ListOptions{})
	if err != nil {
		return err
	}
	defer w.Stop()
	srv.Faults().StallWatches()
	wait := 2 * (readIdle + pingTimeout)
	open := waitEnded([]client.Watcher{w}, wait) == 0
	p.Say("h1", "stalled HTTP/1.1 watch still open after %v: %v (it would wait out its 30 to 60 minute timeout)", wait, open)
	demo.Check(open, "the HTTP/1.1 watch ended by itself")
	w.Stop()

	idle, closeIdleH1, err := newClient(client.Config{DisableHTTP2: true, IdleWatchTimeout: readIdle + pingTimeout})
	if err != nil {
		return err
	}
	defer closeIdleH1()
	w, err = idle.Watch(ctx, api.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return err
	}
	defer w.Stop()
	start = time.Now()
	srv.Faults().StallWatches()
	ended = waitEnded([]client.Watcher{w}, 10*(readIdle+pingTimeout))
	p.Say("h1", "with IdleWatchTimeout %v the client gives up on its own after %v: ended %v",
		readIdle+pingTimeout, time.Since(start).Round(10*time.Millisecond), ended == 1)
	demo.Check(ended == 1, "IdleWatchTimeout did not end the watch")
	srv.Faults().KillWatchConnections()
	return nil
}

// openWatches opens n watches of ConfigMaps from now.
func openWatches(ctx context.Context, cms *client.ResourceClient, n int) ([]client.Watcher, error) {
	l, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return nil, err
	}
	ws := make([]client.Watcher, 0, n)
	for range n {
		w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: l.Metadata.ResourceVersion})
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// waitEnded waits up to d for the watches' channels to close and returns
// how many did.
func waitEnded(ws []client.Watcher, d time.Duration) int {
	deadline := time.After(d)
	ended := 0
	for _, w := range ws {
	drain:
		for {
			select {
			case _, ok := <-w.ResultChan():
				if !ok {
					ended++
					break drain
				}
			case <-deadline:
				return ended
			}
		}
	}
	return ended
}

// view is the part of the debug view the example reads.
type view struct {
	Connections struct {
		Open  int `json:"open"`
		HTTP2 int `json:"http2"`
	} `json:"connections"`
	Watches []struct {
		Transport  string `json:"transport"`
		Connection int64  `json:"connection"`
	} `json:"watches"`
}

func (v view) connections() map[int64]int {
	m := map[int64]int{}
	for _, w := range v.Watches {
		m[w.Connection]++
	}
	return m
}

func keys(m map[int64]int) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// debugView reads GET /debug/listwatch over a connection of its own.
func debugView(srv *apiserver.Server) (view, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CACertificate())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	defer tr.CloseIdleConnections()
	var v view
	resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(srv.URL() + "/debug/listwatch")
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(b, &v)
}

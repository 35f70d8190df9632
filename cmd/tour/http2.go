package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
)

// http2Watches is how many watches the HTTP/2 chapter opens.
const http2Watches = 3

// overHTTP2 is the chapter on a real cluster's transport: a second
// apiserver, on TLS with a generated certificate, and a client whose
// watches all become streams of one HTTP/2 connection, which one kill
// then ends together.
func (t *tour) overHTTP2(ctx context.Context) error {
	t.chapter(chapterHTTP2(http2Watches))
	restore := t.spot.focus(layers(consumerLayer))
	defer restore()

	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0", SelfSignedTLS: true})
	if err != nil {
		return fmt.Errorf("%s: starting the TLS apiserver: %w", t.here(), err)
	}
	defer func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Stop(stopCtx)
	}()
	c, err := client.New(client.Config{Host: srv.URL(), CAData: srv.CACertificate()})
	if err != nil {
		return fmt.Errorf("%s: %w", t.here(), err)
	}
	defer c.CloseIdleConnections()
	cms := c.Resource(configMaps).Namespace(namespace)
	var ws []client.Watcher
	for range http2Watches {
		w, err := cms.Watch(ctx, api.ListOptions{})
		if err != nil {
			return fmt.Errorf("%s: watching over HTTP/2: %w", t.here(), err)
		}
		defer w.Stop()
		ws = append(ws, w)
	}
	conns, err := watchConnections(ctx, srv)
	if err != nil {
		return fmt.Errorf("%s: reading the debug view: %w", t.here(), err)
	}
	t.tr.Printf(consumerLayer, "%s: %d watches, carried by %d TCP connection(s)", srv.URL(), http2Watches, len(conns))
	if len(conns) != 1 {
		return fmt.Errorf("%s: %d watches on %d connections, want one", t.here(), http2Watches, len(conns))
	}
	srv.Faults().KillWatchConnections()
	deadline := time.After(t.o.StageTimeout)
	for _, w := range ws {
		for open := true; open; {
			select {
			case _, open = <-w.ResultChan():
			case <-deadline:
				return t.late("every watch ends with its connection's reset")
			}
		}
	}
	t.tr.Printf(consumerLayer, "one reset of that connection: all %d ResultChans closed", http2Watches)
	t.check("over TLS, %d watches shared one HTTP/2 connection; one reset ended all of them", http2Watches)
	return nil
}

// watchConnections reads srv's debug view and returns the connection id
// of each watch being served.
func watchConnections(ctx context.Context, srv *apiserver.Server) (map[int64]int, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(srv.CACertificate())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL()+"/debug/listwatch", nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var v struct {
		Watches []struct {
			Connection int64 `json:"connection"`
		} `json:"watches"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return nil, err
	}
	conns := map[int64]int{}
	for _, w := range v.Watches {
		conns[w.Connection]++
	}
	return conns, nil
}

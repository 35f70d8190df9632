package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestExpandRefusesUnknownVariables(t *testing.T) {
	got, err := expand("/x?resourceVersion=${rv}", map[string]string{"rv": "42"})
	if err != nil || got != "/x?resourceVersion=42" {
		t.Errorf("expand = %q, %v", got, err)
	}
	if _, err := expand("${nope}", map[string]string{}); err == nil {
		t.Error("an undefined variable expanded to something")
	}
}

func TestLookupFollowsDottedPaths(t *testing.T) {
	v, err := lookup([]byte(`{"metadata":{"resourceVersion":"17","n":3}}`), "metadata.resourceVersion")
	if err != nil || v != "17" {
		t.Errorf("lookup = %q, %v", v, err)
	}
	if _, err := lookup([]byte(`{"metadata":{}}`), "metadata.continue"); err == nil {
		t.Error("a missing field was found")
	}
}

// Two recordings of the same request differ in uids, times and
// resourceVersions on every run; compare must set those aside and still
// show a field that appeared.
func TestNormaliseSetsAsideWhatEveryRunChanges(t *testing.T) {
	old := []byte(`{"kind":"ConfigMap","metadata":{"name":"a","uid":"1","resourceVersion":"5","creationTimestamp":"2026-01-01T00:00:00Z"}}` + "\n")
	same := []byte(`{"kind":"ConfigMap","metadata":{"name":"a","uid":"2","resourceVersion":"9","creationTimestamp":"2026-02-02T00:00:00Z"}}` + "\n")
	grown := []byte(`{"kind":"ConfigMap","metadata":{"name":"a","uid":"2","resourceVersion":"9","generation":1,"creationTimestamp":"2026-02-02T00:00:00Z"}}` + "\n")
	if d := lineDiff(normalise(old), normalise(same)); len(d) != 0 {
		t.Errorf("volatile values only, yet a diff: %v", d)
	}
	d := lineDiff(normalise(old), normalise(grown))
	if len(d) != 1 || d[0] != `+ "generation": 1,` {
		t.Errorf("diff = %q, want the added generation alone", d)
	}
}

// The recorder keeps a chunked watch's chunks as they arrived and runs
// the writes that should appear on it while it is open.
func TestExchangeRecordsChunksAndRunsDuring(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != "fixture-recorder" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "wrong headers", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"type":"ADDED","object":{"metadata":{"name":"w1","resourceVersion":"7"}}}`)
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprintln(w, `{"type":"DELETED","object":{"metadata":{"name":"w1","resourceVersion":"8"}}}`)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tg := target{addr: u.Host, tls: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}, token: "tok"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	defer cancel()
	resp, err := tg.exchange(ctx, tg.requestBytes("GET", "/watch", nil, ""), time.Minute, func() error {
		close(release)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.status != "200 OK" || !resp.chunked {
		t.Fatalf("status %q, chunked %v", resp.status, resp.chunked)
	}
	var described []string
	for _, c := range resp.chunks {
		described = append(described, describeChunk(c.data))
	}
	want := "ADDED w1 rv=7|DELETED w1 rv=8|terminal 0-size chunk"
	if got := strings.Join(described, "|"); !strings.Contains(got, "ADDED w1 rv=7") ||
		!strings.Contains(got, "DELETED w1 rv=8") || !strings.HasSuffix(got, "terminal 0-size chunk (server ended the response)") {
		t.Errorf("chunks = %s, want %s", got, want)
	}
	if strings.Count(string(resp.body), "\n") != 2 {
		t.Errorf("body = %q, want both events", resp.body)
	}
}

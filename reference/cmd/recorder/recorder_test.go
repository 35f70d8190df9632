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

	"golang.org/x/net/websocket"
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
	resp, err := tg.exchange(ctx, tg.requestBytes("GET", "/watch", nil, ""), time.Minute, 0, func() error {
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

// A watch whose step says how many events its writes make is read until
// they have all arrived, however late the writes are, and no longer: the
// server here never ends the stream, and its second event waits for the
// write that makes it.
func TestExchangeReadsUntilTheExpectedEvents(t *testing.T) {
	written := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"type":"ADDED","object":{"metadata":{"name":"w1","resourceVersion":"7"}}}`)
		w.(http.Flusher).Flush()
		<-written
		fmt.Fprintln(w, `{"type":"DELETED","object":{"metadata":{"name":"w1","resourceVersion":"8"}}}`)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // open until the recorder hangs up
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tg := target{addr: u.Host, tls: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}, token: "tok"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	defer cancel()
	resp, err := tg.exchange(ctx, tg.requestBytes("GET", "/watch", nil, ""), time.Minute, 2, func() error {
		close(written)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(resp.body), "\n") != 2 || !strings.HasPrefix(resp.ended, "recorder stopped reading after the 2 events expected") {
		t.Errorf("body = %q, ended %q; want both events, then the recorder's end", resp.body, resp.ended)
	}
}

// The checked-in script loads, and no two steps write the same file
// (except the headers-only steps, which append to one).
func TestScriptNamesEveryFileOnce(t *testing.T) {
	sc, err := loadScript("../../recordings/script.json")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, s := range sc.Sections {
		sections[s] = true
	}
	seen := map[string]bool{}
	var walk func([]step)
	walk = func(steps []step) {
		for _, s := range steps {
			if s.File != "" && !s.HeadersOnly {
				if seen[s.File] {
					t.Errorf("%s is written by two steps", s.File)
				}
				seen[s.File] = true
				if !sections[s.Section] {
					t.Errorf("%s: section %q is not among the script's sections", s.File, s.Section)
				}
			}
			walk(s.During)
		}
	}
	walk(sc.Steps)
	if len(seen) < 100 {
		t.Errorf("the script records %d files; testdata/fixtures has more than 100", len(seen))
	}
}

// The hex dumps beside .pb recordings are hexdump -C's layout.
func TestHexDumpIsHexdumpC(t *testing.T) {
	got := hexDump([]byte("k8s\x00\n\x0f\n\x02v1\x12\tConfigMap\x12"))
	want := "00000000  6b 38 73 00 0a 0f 0a 02  76 31 12 09 43 6f 6e 66  |k8s.....v1..Conf|\n" +
		"00000010  69 67 4d 61 70 12                                 |igMap.|\n" +
		"00000016\n"
	if got != want {
		t.Errorf("hexDump =\n%s\nwant\n%s", got, want)
	}
}

// A kept recording takes its README entry from the previous README, up
// to the next entry or section.
func TestReadmeEntryStopsAtTheNextHeading(t *testing.T) {
	readme := "# x\n\n## A\n\n### `a.json`\n\n* one\n\n### `b.pb` (+ `b.txt`)\n\n* two\n\n## B\n\n### `c.txt`\n\n* three\n"
	got, ok := readmeEntry(readme, "b.pb")
	if !ok || got != "### `b.pb` (+ `b.txt`)\n\n* two\n\n" {
		t.Errorf("entry = %q, %v", got, ok)
	}
	if got, _ := readmeEntry(readme, "c.txt"); got != "### `c.txt`\n\n* three\n\n" {
		t.Errorf("last entry = %q", got)
	}
}

// A WebSocket watch is recorded frame by frame: the text messages make
// the body, the server's close frame ends it.
func TestWebsocketRecordsFrames(t *testing.T) {
	srv := httptest.NewTLSServer(websocket.Handler(func(ws *websocket.Conn) {
		_ = websocket.Message.Send(ws, `{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}}`+"\n")
		_ = ws.WriteClose(1000)
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	tg := target{addr: u.Host, tls: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}, token: "tok"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a safety net only
	defer cancel()
	resp, err := tg.websocket(ctx, "/watch", nil, time.Minute, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.status, "101") || len(resp.frames) != 2 {
		t.Fatalf("status %q, %d frames", resp.status, len(resp.frames))
	}
	if got := describeFrame(resp.frames[0]); !strings.HasPrefix(got, "TEXT frame, FIN=1") || !strings.Contains(got, "ADDED a rv=1") {
		t.Errorf("first frame: %s", got)
	}
	if got := describeFrame(resp.frames[1]); got != "CLOSE frame from server, status code 1000, reason ''" {
		t.Errorf("second frame: %s", got)
	}
	if resp.ended != "server sent close frame" || !strings.HasSuffix(string(resp.body), "\n") {
		t.Errorf("ended %q, body %q", resp.ended, resp.body)
	}
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// flood: the watch flood of docs/limits.md. c.watchers watches, each on a
// connection of its own that the client never closes, opened c.batch at a
// time, well past the server's watch cap. Every watch must get 200 or 429
// (a refused watch's connection closed by the server), never the
// connection cap's 503, and ordinary requests must still be answered:
// throughout, and for c.hold after the last watch was answered, a probe
// GETs /healthz and a ?limit=1 LIST, each on a new connection, ten times a
// second. The report gives the watches' answers and each probe's codes and
// latency. The counts are the server's behaviour, checked; the latency is
// this machine's, reported only.
func flood(ctx context.Context, base string, c config) (report, error) {
	rep := report{scenario: fmt.Sprintf("flood: %d watches, %d at a time, held open; probes every 100 ms", c.watchers, c.batch)}
	u, err := url.Parse(base)
	if err != nil {
		return rep, err
	}
	f := &floodWatches{addr: u.Host, codes: map[int]int{}}
	defer f.closeAll()

	probeCtx, stopProbes := context.WithCancel(ctx)
	health, list := newProbe(base+"/healthz"), newProbe(base+"/api/v1/namespaces/default/configmaps?limit=1")
	var probes sync.WaitGroup
	probes.Add(1)
	go func() { defer probes.Done(); probeEvery(probeCtx, 100*time.Millisecond, health, list) }()

	start := time.Now()
	for i := 0; i < c.watchers && ctx.Err() == nil; i += c.batch {
		var wg sync.WaitGroup
		for range min(c.batch, c.watchers-i) {
			wg.Add(1)
			go func() { defer wg.Done(); f.open(ctx) }()
		}
		wg.Wait()
	}
	flooded := time.Since(start)
	select { // every watch slot taken: the probes go on a while
	case <-time.After(c.hold):
	case <-ctx.Done():
	}
	stopProbes()
	probes.Wait()

	rep.addf("watches: %s in %v (first failure: %v)", f.summary(), flooded.Round(time.Millisecond), f.firstErr)
	rep.addf("refused watches whose connection the server closed: %d of %d", f.hungUp, f.codes[http.StatusTooManyRequests])
	rep.addf("/healthz during the flood and %v after: %s", c.hold, health.summary())
	rep.addf("LIST ?limit=1 during the flood and %v after: %s", c.hold, list.summary())
	var problems []string
	if n := f.codes[http.StatusServiceUnavailable]; n > 0 {
		problems = append(problems, fmt.Sprintf("%d watches got 503 from the connection cap", n))
	}
	if f.failed > 0 {
		problems = append(problems, fmt.Sprintf("%d watches failed", f.failed))
	}
	for _, p := range []*probe{health, list} {
		if bad := p.notOK(); bad > 0 {
			problems = append(problems, fmt.Sprintf("%d probes of %s were not answered 200", bad, p.url))
		}
	}
	if len(problems) > 0 {
		return rep, errors.New(strings.Join(problems, "; "))
	}
	return rep, nil
}

// floodWatches are the flood's watches: the connections of the accepted
// ones, held until the end, and what every one was answered.
type floodWatches struct {
	addr string

	mu       sync.Mutex
	held     []net.Conn
	codes    map[int]int
	hungUp   int // refused watches whose connection the server closed
	failed   int // no answer at all (a dial or read error)
	firstErr error
}

// watchRequest is a watch as kubectl or client-go sends it, over
// HTTP/1.1: an answer of 200 keeps the connection for the watch.
const watchRequest = "GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: flood\r\nAccept: application/json\r\nUser-Agent: load-flood\r\n\r\n"

// floodAnswerWait bounds waiting for one watch's answer: only a server
// that never answers gets near it.
const floodAnswerWait = time.Minute

// open opens one watch on a connection of its own and records its answer.
// An accepted watch's connection is held; a refused one is read to its end
// to see whether the server closed it.
func (f *floodWatches) open(ctx context.Context) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", f.addr)
	if err != nil {
		f.fail(err)
		return
	}
	_ = conn.SetDeadline(time.Now().Add(floodAnswerWait))
	br := bufio.NewReader(conn)
	var resp *http.Response
	if _, err = io.WriteString(conn, watchRequest); err == nil {
		resp, err = http.ReadResponse(br, nil)
	}
	if err != nil {
		_ = conn.Close()
		f.fail(err)
		return
	}
	if resp.StatusCode == http.StatusOK {
		_ = conn.SetDeadline(time.Time{})
		f.mu.Lock()
		f.codes[resp.StatusCode]++
		f.held = append(f.held, conn)
		f.mu.Unlock()
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_, err = br.ReadByte() // io.EOF: the server hung up, the slot is free
	_ = conn.Close()
	f.mu.Lock()
	f.codes[resp.StatusCode]++
	if errors.Is(err, io.EOF) {
		f.hungUp++
	}
	f.mu.Unlock()
}

func (f *floodWatches) fail(err error) {
	f.mu.Lock()
	f.failed++
	if f.firstErr == nil {
		f.firstErr = err
	}
	f.mu.Unlock()
}

// summary is the answers as "200 × 10720, 429 × 4280, failed × 0".
func (f *floodWatches) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return countsString(f.codes) + fmt.Sprintf(", failed × %d", f.failed)
}

func (f *floodWatches) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.held {
		_ = c.Close()
	}
	f.held = nil
}

// probe is one ordinary request sent again and again during the flood,
// each time on a new connection (a health checker's or a new client's).
type probe struct {
	url    string
	client *http.Client
	lat    histogram
	mu     sync.Mutex
	codes  map[int]int
	failed int
}

func newProbe(u string) *probe {
	// The client's timeout only turns a server that never answers into a
	// failed probe.
	return &probe{url: u, codes: map[int]int{},
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}}
}

// once sends the probe and records its answer and how long it took.
func (p *probe) once(ctx context.Context) {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	resp, err := p.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			p.mu.Lock()
			p.failed++
			p.mu.Unlock()
		}
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	p.lat.add(time.Since(start))
	p.mu.Lock()
	p.codes[resp.StatusCode]++
	p.mu.Unlock()
}

// notOK counts the probes not answered 200.
func (p *probe) notOK() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.failed
	for code, k := range p.codes {
		if code != http.StatusOK {
			n += k
		}
	}
	return n
}

func (p *probe) summary() string {
	p.mu.Lock()
	codes := countsString(p.codes) + fmt.Sprintf(", failed × %d", p.failed)
	p.mu.Unlock()
	return codes + "; " + p.lat.summary()
}

// probeEvery sends each probe, one after the other, every interval until
// ctx ends.
func probeEvery(ctx context.Context, interval time.Duration, probes ...*probe) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		for _, p := range probes {
			p.once(ctx)
		}
		select {
		case <-ctx.Done():
			for _, p := range probes {
				p.client.CloseIdleConnections()
			}
			return
		case <-t.C:
		}
	}
}

// countsString is a map of status codes as "200 × 3, 429 × 7", by code.
func countsString(codes map[int]int) string {
	keys := make([]int, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d × %d", k, codes[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

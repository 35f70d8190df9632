package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// fanout: c.watchers watches of ConfigMaps in "default", then c.writes
// creates of c.size bytes from c.writers writers as fast as the server
// takes them. Every watcher must receive every create; the report gives
// deliveries per second, write-to-receive latency (from just before the
// POST to the moment a watcher read the event), /healthz latency
// throughout, and the server's CPU per delivery.
func fanout(ctx context.Context, t *target, c config) (report, error) {
	rep := report{scenario: fmt.Sprintf("fanout: %d watchers, %d creates of %d B from %d writers", c.watchers, c.writes, c.size, c.writers)}
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	prefix := []byte(`"name":"l` + run + `-`)
	coll := t.base + "/api/v1/namespaces/default/configmaps"

	rv, err := listRevision(ctx, t.client(nil), coll)
	if err != nil {
		return rep, err
	}
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	watchClient := t.client(func(tr *http.Transport) { tr.DisableCompression, tr.MaxIdleConnsPerHost = true, -1 })
	defer watchClient.CloseIdleConnections()

	start := time.Now()
	w := &fanoutWatchers{start: start, sentAt: make([]atomic.Int64, c.writes), got: newTally(c.writes), allIn: make(chan struct{})}
	w.want.Store(int64(c.watchers) * int64(c.writes))
	openErr := w.open(watchCtx, watchClient, coll+"?watch=1&resourceVersion="+rv, prefix, c)
	rep.addf("watches opened: %d of %d in %v (first failure: %v)", int64(c.watchers)-w.openFailed.Load(), c.watchers,
		time.Since(start).Round(time.Millisecond), openErr)

	var health histogram
	healthCtx, stopHealth := context.WithCancel(ctx)
	healthDone := make(chan struct{})
	go func() { defer close(healthDone); probeHealth(healthCtx, t, &health) }()

	writeStart := time.Now()
	var answered histogram // from just before the POST to its answer
	codes := writeAll(ctx, t, coll, c, func(i int) []byte {
		w.sentAt[i].Store(int64(time.Since(start)))
		return configMapJSON("l"+run+"-"+strconv.Itoa(i), c.size)
	}, func(i int) {
		answered.add(time.Since(start) - time.Duration(w.sentAt[i].Load()))
	})
	writesDone := time.Since(writeStart)
	w.gaveUp(w.openFailed.Load() * int64(c.writes))
	select {
	case <-w.allIn:
	case <-ctx.Done():
	}
	elapsed := time.Since(writeStart)
	stopHealth()
	<-healthDone
	stopWatches()
	w.wg.Wait()

	d, want := w.delivered.Load(), (int64(c.watchers)-w.openFailed.Load())*int64(c.writes)
	rep.deliveries = d
	rep.addf("writes: %v in %v (%.0f/s)", codes, writesDone.Round(time.Millisecond), float64(c.writes)/writesDone.Seconds())
	rep.addf("deliveries: %d of %d in %v: %.0f/s", d, want, elapsed.Round(time.Millisecond), float64(d)/elapsed.Seconds())
	rep.addf("write answered (waiting for the fan-out included): %s", answered.summary())
	rep.addf("write-to-receive: %s", w.got.lat.summary())
	rep.addf("one event's spread over the watchers (last receive - first): %s", w.got.spread())
	rep.addf("watchers closed before receiving everything: %d", w.closedEarly.Load())
	rep.addf("/healthz during the writes: %s", health.summary())
	if d < want {
		return rep, fmt.Errorf("only %d of %d deliveries arrived (%d watchers closed early)", d, want, w.closedEarly.Load())
	}
	return rep, nil
}

// fanoutWatchers are the fan-out's watchers and what they count: what
// each delivery took from write to receive (got; sentAt holds when each
// write was sent, since start), deliveries until want have arrived (then
// allIn is closed), watchers that failed to open or closed early.
type fanoutWatchers struct {
	start                              time.Time
	sentAt                             []atomic.Int64
	got                                *tally
	delivered, closedEarly, openFailed atomic.Int64
	want                               atomic.Int64
	allIn                              chan struct{}
	allOnce                            sync.Once
	wg                                 sync.WaitGroup
}

// open starts c.watchers watches of url, at most 64 connecting at once,
// and returns once each has opened or failed, with the first failure. Each
// reads its stream until watchCtx is done.
func (w *fanoutWatchers) open(watchCtx context.Context, watchClient *http.Client, url string, prefix []byte, c config) error {
	opened := make(chan error, c.watchers)
	sem := make(chan struct{}, 64) // connections being opened at once
	for range c.watchers {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			sem <- struct{}{}
			body, err := openWatch(watchCtx, watchClient, url)
			<-sem
			opened <- err
			if err != nil {
				w.openFailed.Add(1)
				return
			}
			defer body.Close()
			rs, n := make([]receipt, 0, receiptBatch), 0
			got := readWatch(body, prefix, func(i int) {
				if i < 0 || i >= len(w.sentAt) {
					return
				}
				rs = append(rs, receipt{i, time.Since(w.start)})
				// Everything this watcher waits for: the run may be over.
				if n++; len(rs) == cap(rs) || n == c.writes {
					rs = w.hand(rs)
				}
			})
			w.hand(rs)
			if got < c.writes && watchCtx.Err() == nil {
				w.closedEarly.Add(1)
				w.gaveUp(int64(c.writes - got))
			}
		}()
	}
	var openErr error
	for range c.watchers {
		if err := <-opened; err != nil && openErr == nil {
			openErr = err
		}
	}
	return openErr
}

// hand counts a reader's receipts and returns its emptied slice.
func (w *fanoutWatchers) hand(rs []receipt) []receipt {
	if len(rs) == 0 {
		return rs
	}
	w.got.add(rs, func(i int) time.Duration { return time.Duration(w.sentAt[i].Load()) })
	if w.delivered.Add(int64(len(rs))) >= w.want.Load() {
		w.allOnce.Do(func() { close(w.allIn) })
	}
	return rs[:0]
}

// gaveUp takes the deliveries a watcher the server closed will never get
// off what the run waits for, so that a server which closes slow watchers
// (kube-apiserver's watch cache does) ends the run when every other
// watcher has everything, not at -timeout; the report still counts them.
func (w *fanoutWatchers) gaveUp(missed int64) {
	if w.want.Add(-missed) <= w.delivered.Load() {
		w.allOnce.Do(func() { close(w.allIn) })
	}
}

// listRevision is the collection's current resourceVersion.
func listRevision(ctx context.Context, client *http.Client, coll string) (string, error) {
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, coll+"?limit=1", nil)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("listing %s: %d %v", coll, resp.StatusCode, err)
	}
	return l.Metadata.ResourceVersion, nil
}

// openWatch starts one watch and returns its body once the server said 200.
func openWatch(ctx context.Context, client *http.Client, u string) (io.ReadCloser, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("watch: %s", resp.Status)
	}
	return resp.Body, nil
}

// readWatch reads events until the body ends and calls seen with the
// number in each object name that starts with prefix; it returns how many
// it saw. It looks for the name in the raw line instead of decoding JSON,
// so that 10,000 readers cost the machine little next to the server.
func readWatch(body io.Reader, prefix []byte, seen func(int)) int {
	br := bufio.NewReaderSize(body, 8<<10)
	n := 0
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, line...)
			continue
		}
		if long != nil {
			line = append(long, line...)
			long = nil
		}
		if i := bytes.Index(line, prefix); i >= 0 {
			rest := line[i+len(prefix):]
			j := bytes.IndexByte(rest, '"')
			if k, perr := strconv.Atoi(string(rest[:max(j, 0)])); j > 0 && perr == nil {
				seen(k)
				n++
			}
		}
		if err != nil {
			return n
		}
	}
}

// writeAll POSTs c.writes objects from c.writers writers; body(i) builds
// the i-th (and records when it was sent), and answered(i), if not nil,
// is called once it is answered. A 429 is retried after its Retry-After.
// It returns the count of each final status code.
func writeAll(ctx context.Context, t *target, coll string, c config, body func(i int) []byte, answered func(i int)) map[int]int {
	client := t.client(func(tr *http.Transport) { tr.MaxIdleConnsPerHost = c.writers })
	defer client.CloseIdleConnections()
	var next atomic.Int64
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range c.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= c.writes || ctx.Err() != nil {
					return
				}
				code := post(ctx, client, coll, body(i))
				if answered != nil {
					answered(i)
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return codes
}

// post sends one create, retrying 429s; it returns the final status code
// (0 for a transport error).
func post(ctx context.Context, client *http.Client, u string, body []byte) int {
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			return resp.StatusCode
		}
		if !sleep(ctx, retryAfter(resp)) {
			return resp.StatusCode
		}
	}
}

func retryAfter(resp *http.Response) time.Duration {
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		return time.Duration(s) * time.Second
	}
	return time.Second
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// configMapJSON is a ConfigMap whose one data value is size bytes.
func configMapJSON(name string, size int) []byte {
	return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name +
		`"},"data":{"d":"` + strings.Repeat("x", size) + `"}}`)
}

// probeHealth GETs /healthz every 100 ms on a connection of its own until
// ctx ends, recording how long each answer took.
func probeHealth(ctx context.Context, t *target, h *histogram) {
	client := t.client(nil)
	client.Timeout = 30 * time.Second
	defer client.CloseIdleConnections()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		start := time.Now()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/healthz", nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			h.add(time.Since(start))
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

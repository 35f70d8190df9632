package interop_test

// Side-by-side benchmarks: client-go and listwatch doing the same work in
// one process. They are not part of the normal test run (go test runs no
// benchmark unless asked); run them with
//
//	cd interop && go test -run '^$' -bench . -benchmem ./...
//
// Results and how to read them: docs/performance.md.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"listwatch/apiserver"
	"listwatch/client"
)

// recordedStream is the recorded watch-from-list-rv.jsonl stream (four
// ConfigMap events as kube-apiserver v1.32 wrote them, managedFields and
// all) repeated to events events.
func recordedStream(b *testing.B, events int) []byte {
	b.Helper()
	one := readFixture(b, "watch-from-list-rv.jsonl")
	lines := bytes.Count(one, []byte("\n"))
	var buf bytes.Buffer
	for i := 0; i < events; i += lines {
		buf.Write(one)
	}
	return buf.Bytes()
}

// allocCounter measures heap allocations between start and stop without
// the testing package's per-op averaging, to report them per event.
type allocCounter struct{ mallocs, bytes uint64 }

func (a *allocCounter) start() {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	a.mallocs, a.bytes = m.Mallocs, m.TotalAlloc
}

func (a *allocCounter) stop() (mallocs, bytes uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs - a.mallocs, m.TotalAlloc - a.bytes
}

// reportPerEvent adds ns/event, events/s, allocs/event and B/event.
func reportPerEvent(b *testing.B, events int, elapsed time.Duration, mallocs, allocBytes uint64) {
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(events), "ns/event")
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(mallocs)/float64(events), "allocs/event")
	b.ReportMetric(float64(allocBytes)/float64(events), "B/event")
}

// BenchmarkWatchDecode decodes the same recorded watch stream with
// client-go's watch machinery (JSON framer, streaming decoder, typed
// ConfigMap decoding, watch.StreamWatcher: what a typed clientset's Watch
// does) and with listwatch's client.StreamWatcher.
func BenchmarkWatchDecode(b *testing.B) {
	const events = 1024
	stream := recordedStream(b, events)
	drainClientGo := func() int {
		w, err := newClientGoWatcher(io.NopCloser(bytes.NewReader(stream)))
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range w.ResultChan() {
			n++
		}
		return n
	}
	drainOurs := func() int {
		w := client.NewStreamWatcher(io.NopCloser(bytes.NewReader(stream)), nil)
		n := 0
		for range w.ResultChan() {
			n++
		}
		return n
	}
	for _, bc := range []struct {
		name  string
		drain func() int
	}{{"client-go", drainClientGo}, {"listwatch", drainOurs}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			var ac allocCounter
			total := 0
			ac.start()
			start := time.Now()
			for b.Loop() {
				if n := bc.drain(); n != events {
					b.Fatalf("decoded %d events, want %d", n, events)
				}
				total += events
			}
			elapsed := time.Since(start)
			mallocs, bytes := ac.stop()
			reportPerEvent(b, total, elapsed, mallocs, bytes)
		})
	}
}

// cpuTime is this process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanOut measures our apiserver delivering one stream of writes to
// 1, 10, 100 and 1000 concurrent watchers over loopback HTTP. The writes go
// straight into the server's store (one ConfigMap created per op), so the
// HTTP write path is not measured. Each watcher is a raw HTTP client that
// only counts newline-terminated frames, so the CPU measured is the
// server's (watch cache, encoding, HTTP) plus the kernel's loopback and
// those cheap readers: cpu-ns/delivery is process CPU time divided by
// events x watchers.
func BenchmarkFanOut(b *testing.B) {
	for _, watchers := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			benchFanOut(b, watchers, false)
		})
	}
}

// BenchmarkFanOutTLSHTTP2 is BenchmarkFanOut over TLS with HTTP/2, as a
// real cluster's clients watch: the readers' transport negotiates h2, so
// up to 100 watches share one TCP connection (the server's SETTINGS), and
// every byte is encrypted by the server and decrypted by a reader.
func BenchmarkFanOutTLSHTTP2(b *testing.B) {
	for _, watchers := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			benchFanOut(b, watchers, true)
		})
	}
}

// Benchmarks write straight into the server's store, far faster than any
// HTTP client could. Two bounded queues sit between that writer and a
// watcher: the store's queue to the watch cache (1024 events; overflowing
// it makes the watch cache re-list and end every watch) and the watch
// cache's queue to each watcher (raised to benchQueue frames here). The
// writer therefore runs at most benchWindow events ahead of the slowest
// reader, sleeping briefly when it gets there; benchWindow is well below
// both queues and large enough that the sleeps never starve the pipeline.
const (
	benchQueue  = 4096
	benchWindow = 500
)

func benchFanOut(b *testing.B, watchers int, overTLS bool) {
	opts := []serverOption{withWatcherBuffer(benchQueue)}
	if overTLS {
		opts = append(opts, func(c *apiserver.Config) { c.SelfSignedTLS = true })
	}
	srv := startServer(b, opts...)
	w := srv.writeClient(b)
	createNamespace(b, w, "fan")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	transport := &http.Transport{MaxIdleConnsPerHost: watchers, MaxConnsPerHost: 0}
	if ca := srv.CACertificate(); ca != nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		transport.TLSClientConfig = &tls.Config{RootCAs: pool}
		transport.ForceAttemptHTTP2 = true
	}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}
	resp, err := hc.Get(srv.url + "/api/v1/namespaces/fan/configmaps")
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("list: %d %v %s", resp.StatusCode, err, body)
	}
	rv := listRV(b, body)
	counts := make([]atomic.Int64, watchers) // events each watcher has read
	var wg sync.WaitGroup
	ready := make(chan error, watchers)
	for i := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet,
				srv.url+"/api/v1/namespaces/fan/configmaps?watch=true&resourceVersion="+rv, nil)
			resp, err := hc.Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer resp.Body.Close()
			ready <- nil
			br := bufio.NewReaderSize(resp.Body, 64<<10)
			for {
				if _, err := br.ReadSlice('\n'); err != nil {
					if err == bufio.ErrBufferFull {
						continue
					}
					return
				}
				counts[i].Add(1)
			}
		}()
	}
	for range watchers {
		if err := <-ready; err != nil {
			b.Fatal(err)
		}
	}
	slowest := func() int64 {
		m := counts[0].Load()
		for i := range counts {
			m = min(m, counts[i].Load())
		}
		return m
	}
	delivered := func() int64 {
		var n int64
		for i := range counts {
			n += counts[i].Load()
		}
		return n
	}

	runtime.GC()
	cpu0 := cpuTime()
	start := time.Now()
	i := 0
	for b.Loop() {
		for int64(i)-slowest() >= benchWindow {
			time.Sleep(100 * time.Microsecond)
		}
		name := fmt.Sprintf("cm-%d", i)
		if _, err := srv.Store().Create(ctx, storeKey("fan", name), benchConfigMap("fan", name, i)); err != nil {
			b.Fatal(err)
		}
		i++
	}
	want := int64(i * watchers)
	deadline := time.Now().Add(20 * time.Second)
	for delivered() < want {
		if time.Now().After(deadline) {
			_, _, debug := rawGet(b, srv.url, "/debug/listwatch", nil)
			b.Fatalf("delivered %d of %d events; server debug view:\n%s", delivered(), want, debug)
		}
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(want)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(want), "cpu-ns/delivery")
	cancel()
	wg.Wait()
}

// listRV pulls metadata.resourceVersion out of a list body.
func listRV(b *testing.B, body []byte) string {
	b.Helper()
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &l); err != nil || l.Metadata.ResourceVersion == "" {
		b.Fatalf("list without resourceVersion: %v %s", err, body)
	}
	return l.Metadata.ResourceVersion
}

//go:build unix

package watchserver

// Fan-out benchmarks of the watch path over loopback HTTP. The server runs
// in a child process (this test binary again, see TestMain)
// so that its CPU time can be measured apart from the clients':
//
//	go test ./apiserver/watchserver/ -run '^$' -bench 'WatchFanOut|IdleWatchMemory' -benchtime 1x
//
// LISTWATCH_SW_BENCH_WATCHER_BUFFER sets the cacher's WatcherBuffer (default
// here 1000; 0 means the package default). Each watcher has its own
// HTTP/1.1 connection. One round is 2,000 creates
// of 1 KiB ConfigMaps by 4 writers, each a POST to the server (the fan-out
// load); a round ends when every watcher has received every event. The
// server's CPU time includes serving the creates. Results: docs/performance-watchcache.md.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/store"
)

const swBenchEnv = "LISTWATCH_SW_BENCH_SERVER"

// swBenchStats is what the child server reports.
type swBenchStats struct {
	CPUNanos      int64 `json:"cpuNanos"`
	Frames        int64 `json:"framesEncoded"`
	Bytes         int64 `json:"bytesEncoded"`
	Dispatched    int64 `json:"eventsDispatched"`
	TooSlow       int64 `json:"closedTooSlow"`
	Watchers      int   `json:"watchers"`
	HeapAlloc     int64 `json:"heapAlloc"`
	StackInuse    int64 `json:"stackInuse"`
	Goroutines    int   `json:"goroutines"`
	TotalAlloc    int64 `json:"totalAlloc"`
	NumGC         int64 `json:"numGC"`
	PauseTotalNs  int64 `json:"pauseTotalNs"`
	HeapSys       int64 `json:"heapSys"`
	GCCPUFraction int64 `json:"gcCPUPermille"`
}

// TestMain makes this test binary the benchmark's server when the
// benchmark starts it as a child process (swBenchEnv set); otherwise it runs
// the tests. The server is no test of its own, so a normal run has nothing
// to skip.
func TestMain(m *testing.M) {
	if os.Getenv(swBenchEnv) != "" {
		if err := swBenchServe(); err != nil {
			fmt.Fprintln(os.Stderr, "watch benchmark server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// swBenchServe is the child process: a cacher on a store behind /watch,
// /create and /stats on loopback. It prints its URL and serves until the
// parent closes its stdin.
func swBenchServe() error {
	if os.Getenv("LISTWATCH_SW_BENCH_HEAPPROFILE") != "" {
		runtime.MemProfileRate = 1
	}
	s := store.New(store.Options{})
	defer s.Close()
	buffer, _ := strconv.Atoi(os.Getenv("LISTWATCH_SW_BENCH_WATCHER_BUFFER")) // 0: the default
	c, err := cacher.New(context.Background(), cacher.Config{Store: s, Prefix: swPrefix,
		Resource: api.GroupResource{Resource: "configmaps"}, Kind: "ConfigMap", APIVersion: "v1",
		WatcherBuffer: buffer})
	if err != nil {
		return fmt.Errorf("starting the cacher: %w", err)
	}
	defer c.Stop()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: swBenchHandler(s, c)}
	go func() { _ = srv.Serve(l) }()
	fmt.Printf("URL http://%s\n", l.Addr())
	// The parent closes our stdin when it is done.
	_, _ = io.Copy(io.Discard, os.Stdin)
	return srv.Close()
}

// swBenchHandler serves the benchmark's three paths.
func swBenchHandler(s *store.Store, c *cacher.Cacher) http.Handler {
	// As the apiserver does: the handler returns once the headers are out
	// and the watch goes on in a goroutine of its own.
	ws := New(Config{Detach: func(_ http.ResponseWriter, _ *http.Request, rest func()) { go rest() }})
	mux := http.NewServeMux()
	mux.HandleFunc("/watch", func(w http.ResponseWriter, r *http.Request) {
		opts := cacher.WatchOptions{SendInitialEvents: new(bool)}
		ws.Serve(w, r, Request{Source: FromCache(c), Options: opts, Timeout: time.Hour})
	})
	mux.HandleFunc("/create", func(w http.ResponseWriter, r *http.Request) {
		// A create as the REST layer does it: decode, store, answer 201
		// with the stored object.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var o api.Object
		if err := o.UnmarshalJSON(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		got, err := s.Create(r.Context(), swPrefix+o.Metadata.Namespace+"/"+o.Metadata.Name, &o)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(append(got.AppendJSON(nil), '\n'))
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("gc") == "1" {
			runtime.GC()
			runtime.GC()
		}
		if path := os.Getenv("LISTWATCH_SW_BENCH_HEAPPROFILE"); path != "" && r.URL.Query().Get("profile") == "1" {
			if f, err := os.Create(path); err == nil {
				_ = pprof.WriteHeapProfile(f)
				_ = f.Close()
			}
		}
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := c.Stats()
		_ = json.NewEncoder(w).Encode(swBenchStats{
			CPUNanos:      ru.Utime.Nano() + ru.Stime.Nano(),
			Frames:        st.FramesEncoded,
			Bytes:         st.BytesEncoded,
			Dispatched:    st.EventsDispatched,
			TooSlow:       st.ClosedTooSlow,
			Watchers:      len(st.Watchers),
			HeapAlloc:     int64(ms.HeapAlloc),
			StackInuse:    int64(ms.StackInuse),
			Goroutines:    runtime.NumGoroutine(),
			TotalAlloc:    int64(ms.TotalAlloc),
			NumGC:         int64(ms.NumGC),
			PauseTotalNs:  int64(ms.PauseTotalNs),
			HeapSys:       int64(ms.HeapSys),
			GCCPUFraction: int64(ms.GCCPUFraction * 1000),
		})
	})
	return mux
}

// swBenchWrite creates n ConfigMaps of about size bytes through the
// server's /create, from writers clients each on its own connection, one
// request after the other. Each object carries its creation time ("ts") for
// the write-to-receive latency.
func (s *swBenchServer) write(b *testing.B, n, writers, size int, prefix string) {
	var wg sync.WaitGroup
	pad := strings.Repeat("x", max(size-200, 0))
	for wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			for i := wr; i < n; i += writers {
				body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s-%05d","namespace":"bench"},"data":{"pad":"%s","ts":"%d"}}`,
					prefix, i, pad, time.Now().UnixNano())
				resp, err := client.Post(s.url+"/create", "application/json", strings.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					b.Errorf("create: %s", resp.Status)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// swSelfCPU is this process's CPU time so far.
func swSelfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// swBenchServer is the child process.
type swBenchServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	http  *http.Client
}

func swStartBenchServer(b *testing.B) *swBenchServer {
	b.Helper()
	cmd := exec.Command(os.Args[0]) // TestMain serves when swBenchEnv is set
	buffer := os.Getenv("LISTWATCH_SW_BENCH_WATCHER_BUFFER")
	if buffer == "" {
		// Kubernetes' largest per-watcher channel; with our default of 100
		// a loaded 2-core machine closes some of 1,000 watchers as too
		// slow during a round (set the variable to 0 to see it).
		buffer = "1000"
	}
	cmd.Env = append(os.Environ(), swBenchEnv+"=1", "GOMAXPROCS="+strconv.Itoa(runtime.GOMAXPROCS(0)),
		"LISTWATCH_SW_BENCH_WATCHER_BUFFER="+buffer)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	srv := &swBenchServer{cmd: cmd, stdin: stdin, http: &http.Client{}}
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "URL "); ok {
			srv.url = u
			break
		}
	}
	if srv.url == "" {
		b.Fatal("the benchmark server did not start")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	return srv
}

func (s *swBenchServer) get(b *testing.B, path string) []byte {
	b.Helper()
	resp, err := s.http.Get(s.url + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body
}

func (s *swBenchServer) stats(b *testing.B, gc bool) swBenchStats {
	b.Helper()
	u := s.url + "/stats"
	if gc {
		u += "?gc=1"
	}
	resp, err := s.http.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var st swBenchStats
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		b.Fatal(err)
	}
	return st
}

// swBenchWatch is one client connection reading a watch.
type swBenchWatch struct {
	conn      net.Conn
	latencies []time.Duration
}

// open dials its own connection and reads the response headers.
func (s *swBenchServer) open(b *testing.B) *swBenchWatch {
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := fmt.Fprintf(conn, "GET /watch HTTP/1.1\r\nHost: bench\r\n\r\n"); err != nil {
		b.Fatal(err)
	}
	return &swBenchWatch{conn: conn}
}

// read consumes the stream, counting events; every `want` events it sends
// on done. It stops when the connection closes.
func (w *swBenchWatch) read(want int, done chan<- struct{}) {
	resp, err := http.ReadResponse(bufio.NewReaderSize(w.conn, 64<<10), nil)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 256<<10)
	n := 0
	tsKey := []byte(`"ts":"`)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		if i := bytes.Index(line, tsKey); i >= 0 {
			rest := line[i+len(tsKey):]
			if j := bytes.IndexByte(rest, '"'); j > 0 {
				if ts, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
					w.latencies = append(w.latencies, time.Duration(time.Now().UnixNano()-ts))
				}
			}
		}
		if n++; n == want {
			n = 0
			done <- struct{}{}
		}
	}
}

func BenchmarkWatchFanOut(b *testing.B) {
	const events, writers, size = 2000, 4, 1024
	for _, watchers := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			srv := swStartBenchServer(b)
			done := make(chan struct{}, watchers)
			ws := make([]*swBenchWatch, watchers)
			var readers sync.WaitGroup
			for i := range ws {
				ws[i] = srv.open(b)
				readers.Add(1)
				go func() { defer readers.Done(); ws[i].read(events, done) }()
			}
			defer func() {
				for _, w := range ws {
					_ = w.conn.Close()
				}
				readers.Wait()
			}()
			deadline := time.Now().Add(30 * time.Second)
			for srv.stats(b, false).Watchers < watchers {
				if time.Now().After(deadline) {
					b.Fatal("watchers did not register")
				}
				time.Sleep(10 * time.Millisecond)
			}

			var cpu, clientCPU, elapsed time.Duration
			var frames, encoded, tooSlow, allocs int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				before := srv.stats(b, false)
				clientBefore := swSelfCPU()
				start := time.Now()
				srv.write(b, events, writers, size, fmt.Sprintf("r%d", i))
				for range watchers {
					select {
					case <-done:
					case <-time.After(60 * time.Second):
						b.Fatalf("not every watcher got every event within 60s: %+v", srv.stats(b, false))
					}
				}
				elapsed += time.Since(start)
				clientCPU += swSelfCPU() - clientBefore
				after := srv.stats(b, false)
				cpu += time.Duration(after.CPUNanos - before.CPUNanos)
				frames += after.Frames - before.Frames
				encoded += after.Bytes - before.Bytes
				tooSlow += after.TooSlow - before.TooSlow
				allocs += after.TotalAlloc - before.TotalAlloc
			}
			b.StopTimer()
			deliveries := float64(b.N * events * watchers)
			var lat []time.Duration
			for _, w := range ws {
				lat = append(lat, w.latencies...)
			}
			slices.Sort(lat)
			b.ReportMetric(deliveries/elapsed.Seconds(), "deliveries/s")
			b.ReportMetric(float64(cpu.Nanoseconds())/1000/deliveries, "server-cpu-µs/delivery")
			b.ReportMetric(float64(clientCPU.Nanoseconds())/1000/deliveries, "client-cpu-µs/delivery")
			b.ReportMetric(float64(frames)/float64(b.N*events), "frames-encoded/event")
			b.ReportMetric(float64(encoded)/float64(b.N*events), "bytes-encoded/event")
			b.ReportMetric(float64(allocs)/deliveries, "server-alloc-B/delivery")
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			}
			b.ReportMetric(float64(tooSlow), "closed-too-slow")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func BenchmarkIdleWatchMemory(b *testing.B) {
	const watchers = 1000
	srv := swStartBenchServer(b)
	for i := 0; i < b.N; i++ {
		before := srv.stats(b, true)
		ws := make([]*swBenchWatch, watchers)
		for j := range ws {
			ws[j] = srv.open(b)
		}
		deadline := time.Now().Add(30 * time.Second)
		for srv.stats(b, false).Watchers < watchers {
			if time.Now().After(deadline) {
				b.Fatal("watchers did not register")
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Read the headers so each connection is in its steady state.
		for _, w := range ws {
			if _, err := http.ReadResponse(bufio.NewReader(w.conn), nil); err != nil {
				b.Fatal(err)
			}
		}
		after := srv.stats(b, true)
		_ = srv.get(b, "/stats?profile=1")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/watchers, "heap-B/watch")
		b.ReportMetric(float64(after.StackInuse-before.StackInuse)/watchers, "stack-B/watch")
		b.ReportMetric(float64(after.Goroutines-before.Goroutines)/watchers, "goroutines/watch")
		b.ReportMetric(0, "ns/op")
		for _, w := range ws {
			_ = w.conn.Close()
		}
		deadline = time.Now().Add(30 * time.Second)
		for srv.stats(b, false).Watchers > 0 {
			if time.Now().After(deadline) {
				b.Fatal("watchers did not go away")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

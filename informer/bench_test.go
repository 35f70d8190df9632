package informer

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"listwatch/api"
	"listwatch/client"
)

// streamLW lists nothing and then streams events generated on the fly, as
// fast as the informer takes them: the fastest possible "server", so the
// benchmark measures the client-side pipeline alone.
type streamLW struct {
	events int
	keys   int
}

// IsWatchListSemanticsUnSupported makes the Reflector list instead of
// streaming the initial state, as client-go does for fake clients: this
// server has nothing to list, and the benchmark measures the watch.
func (s *streamLW) IsWatchListSemanticsUnSupported() bool { return true }

func (s *streamLW) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	return &api.List{Metadata: api.ListMeta{ResourceVersion: "1"}}, nil
}

func (s *streamLW) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	w := &benchWatch{out: make(chan api.Event, 1024), stop: make(chan struct{})}
	n, keys := s.events, s.keys
	s.events = 0 // a re-watch streams nothing more
	go func() {
		defer close(w.out)
		for i := range n {
			typ := api.Modified
			if i < keys {
				typ = api.Added
			}
			o := benchObject(i%keys, i+2)
			select {
			case w.out <- api.Event{Type: typ, Object: o}:
			case <-w.stop:
				return
			}
		}
		<-w.stop
	}()
	return w, nil
}

type benchWatch struct {
	out  chan api.Event
	stop chan struct{}
	once atomic.Bool
}

func (w *benchWatch) ResultChan() <-chan api.Event { return w.out }
func (w *benchWatch) Stop() {
	if w.once.CompareAndSwap(false, true) {
		close(w.stop)
	}
}

var benchData = json.RawMessage(`{"config.yaml":"replicas: 3\nimage: registry.example.com/app:v1.2.3\nlogLevel: info\n"}`)

// benchObject is a ConfigMap shaped like a small real one: labels, an
// annotation, a data field of about 100 bytes.
func benchObject(i, rv int) *api.Object {
	return &api.Object{
		APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{
			Namespace:         "ns-" + strconv.Itoa(i%10),
			Name:              "config-" + strconv.Itoa(i),
			UID:               fmt.Sprintf("4f2c1b7e-0000-4000-8000-%012d", i),
			ResourceVersion:   strconv.Itoa(rv),
			CreationTimestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			Labels:            map[string]string{"app": "web", "tier": "frontend"},
			Annotations:       map[string]string{"owner": "team-a"},
		},
		Fields: []api.Field{{Name: "data", Value: benchData}},
	}
}

// countingHandler counts notifications and signals when it reached want.
type countingHandler struct {
	n    atomic.Int64
	want int64
	done chan struct{}
}

func (h *countingHandler) tick() {
	if h.n.Add(1) == h.want {
		close(h.done)
	}
}
func (h *countingHandler) OnAdd(*api.Object, bool)   { h.tick() }
func (h *countingHandler) OnUpdate(_, _ *api.Object) { h.tick() }
func (h *countingHandler) OnDelete(any)              { h.tick() }

// BenchmarkPipeline measures watch events per second through Reflector →
// queue → handleDeltas (Indexer) → sharedProcessor → listener → handler,
// over 1,000 keys, with one and with four handlers.
func BenchmarkPipeline(b *testing.B) {
	for _, kind := range queueKinds {
		for _, handlers := range []int{1, 4} {
			b.Run(fmt.Sprintf("%s/handlers=%d", kind, handlers), func(b *testing.B) {
				benchmarkPipeline(b, kind, handlers)
			})
		}
	}
}

func benchmarkPipeline(b *testing.B, kind QueueKind, handlers int) {
	const keys = 1000
	events := max(b.N, keys)
	lw := &streamLW{events: events, keys: keys}
	inf, err := NewSharedIndexInformer(lw, Options{Queue: kind})
	if err != nil {
		b.Fatal(err)
	}
	var hs []*countingHandler
	for range handlers {
		h := &countingHandler{want: int64(events), done: make(chan struct{})}
		hs = append(hs, h)
		if _, err := inf.AddEventHandler(h); err != nil {
			b.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	go func() { inf.Run(ctx); close(stopped) }()
	for _, h := range hs {
		<-h.done
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(events)/elapsed.Seconds(), "events/s")
	cancel()
	<-stopped
}

// BenchmarkMemoryPerCachedObject measures the heap an informer holds per
// cached object, once synced: the object itself plus the Indexer's map and
// namespace index entries. One op is one cached object. "object-B" is the
// object alone, built the same way, for comparison.
func BenchmarkMemoryPerCachedObject(b *testing.B) {
	n := max(b.N, 1000)
	objectOnly := heapDelta(func() any {
		objs := make([]*api.Object, n)
		for i := range objs {
			objs[i] = benchObject(i, i+2)
		}
		return objs
	}) / float64(n)
	perObject := heapDelta(func() any {
		inf, err := NewSharedIndexInformer(&listLW{n: n}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { inf.Run(ctx); close(stopped) }()
		<-inf.Synced()
		cancel()
		<-stopped
		return inf.GetIndexer() // keep the cache alive for the measurement
	}) / float64(n)
	b.ReportMetric(perObject, "B/cached-object")
	b.ReportMetric(objectOnly, "object-B")
}

// listLW lists n freshly built objects, as a decoder would produce them.
type listLW struct{ n int }

// IsWatchListSemanticsUnSupported: this fake serves the initial state as
// a list only.
func (l *listLW) IsWatchListSemanticsUnSupported() bool { return true }

func (l *listLW) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	out := &api.List{Metadata: api.ListMeta{ResourceVersion: strconv.Itoa(l.n + 2)}, Items: make([]*api.Object, l.n)}
	for i := range out.Items {
		out.Items[i] = benchObject(i, i+2)
	}
	return out, nil
}

func (l *listLW) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	w := &benchWatch{out: make(chan api.Event), stop: make(chan struct{})}
	go func() { <-w.stop; close(w.out) }()
	return w, nil
}

var sink any

// heapDelta is how much more live heap there is while build's result is
// kept than before it was built.
func heapDelta(build func() any) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sink = build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	sink = nil
	return float64(after.HeapAlloc) - float64(before.HeapAlloc)
}

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/store"
)

// The end-to-end benchmarks: a change made on the server travels
//
//	store → watch cache → HTTP (chunked or websocket) over loopback → StreamWatcher
//	→ Reflector → queue → handleDeltas (Indexer) → sharedProcessor → listener → handler
//
// Server and client share the process (and its two cores), so allocations
// and CPU are the sum of both halves. Results: docs/performance-pipeline.md.

// benchKeys is how many ConfigMaps the update benchmarks cycle through.
const benchKeys = 1000

// benchInFlight bounds how far the producer may run ahead of the handler.
// Without a bound, a producer writing straight into the store outpaces any
// client, the watch cache closes the watch for being too slow and the
// benchmark measures recoveries instead of the pipeline. A few hundred
// events in flight keep every stage busy.
const benchInFlight = 256

// benchWatcherBuffer is the server's per-watcher queue in the pipeline
// benchmark: Kubernetes sizes it between 10 and 1,000 frames by the event
// rate, and at these rates it would pick the top of that range. With the
// default of 100, a burst that fills the queue while the websocket writer
// is busy gets the watch closed as too slow.
const benchWatcherBuffer = 1000

var benchData = json.RawMessage(`{"config.yaml":"replicas: 3\nimage: registry.example.com/app:v1.2.3\nlogLevel: info\n"}`)

// benchConfigMap is a ConfigMap shaped like a small real one (labels, an
// annotation, about 100 bytes of data), as informer/bench_test.go uses.
func benchConfigMap(i int) *api.Object {
	o := &api.Object{
		APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{
			Namespace:   "ns-" + strconv.Itoa(i%10),
			Name:        "config-" + strconv.Itoa(i),
			Labels:      map[string]string{"app": "web", "tier": "frontend"},
			Annotations: map[string]string{"owner": "team-a"},
		},
	}
	if err := o.Set("data", benchData); err != nil {
		panic(err)
	}
	return o
}

func storeKey(o *api.Object) string {
	return "/registry/configmaps/" + o.Metadata.Namespace + "/" + o.Metadata.Name
}

// preload writes n ConfigMaps straight into the server's store (no
// namespaces needed there) and returns them as stored.
func preload(tb testing.TB, srv *apiserver.Server, n int) []*api.Object {
	tb.Helper()
	ctx := context.Background()
	out := make([]*api.Object, n)
	for i := range n {
		o, err := srv.Store().Create(ctx, storeKey(benchConfigMap(i)), benchConfigMap(i))
		require.NoError(tb, err)
		out[i] = o
	}
	return out
}

// BenchmarkPipeline measures events per second from a write on the server
// to a handler's OnUpdate. "writes=store" updates the store directly (the
// fastest producer, so the delivery pipeline is what is measured);
// "writes=rest" updates through the REST API from four concurrent clients,
// so the write path (HTTP, decode, admission, store) is included as well.
// One op is one event handled.
func BenchmarkPipeline(b *testing.B) {
	type variant struct {
		writes string
		tk     client.TransportKind
		q      informer.QueueKind
	}
	var variants []variant
	for _, tk := range []client.TransportKind{client.TransportHTTP, client.TransportWebSocket} {
		for _, q := range []informer.QueueKind{informer.DeltaFIFO, informer.RealFIFO} {
			variants = append(variants, variant{"store", tk, q})
		}
	}
	variants = append(variants, variant{"rest", client.TransportHTTP, informer.RealFIFO})
	for _, v := range variants {
		b.Run(fmt.Sprintf("writes=%s/transport=%s/queue=%s", v.writes, v.tk, v.q), func(b *testing.B) {
			benchPipeline(b, v.writes, v.tk, v.q)
		})
	}
}

func benchPipeline(b *testing.B, writes string, tk client.TransportKind, q informer.QueueKind) {
	srv := startServer(b, apiserver.Config{WatcherBuffer: benchWatcherBuffer})
	c := newClient(b, srv, client.Config{Transport: tk})
	objs := preload(b, srv, benchKeys)
	waitCacheCaughtUp(b, srv)

	window := make(chan struct{}, benchInFlight)
	var handled atomic.Int64
	allHandled := make(chan struct{})
	target := int64(b.N)
	g := newGate(c.Resource(configMaps))
	startInformer(b, g, informer.Options{Queue: q}, func(inf *informer.SharedIndexInformer) {
		_, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, _ *api.Object) {
				<-window
				if handled.Add(1) == target {
					close(allHandled)
				}
			},
		})
		require.NoError(b, err)
	})

	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	switch writes {
	case "store":
		for i := range b.N {
			window <- struct{}{}
			o := objs[i%benchKeys]
			if _, err := srv.Store().Update(ctx, storeKey(o), o, store.Preconditions{}); err != nil {
				b.Fatal(err)
			}
		}
	case "rest":
		const writers = 4
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				last := map[int]*api.Object{}
				for i := w; i < b.N; i += writers {
					window <- struct{}{}
					k := i % benchKeys
					o := last[k]
					if o == nil {
						o = objs[k]
					}
					// A write that changes nothing makes no event (the
					// apiserver skips no-op updates, as Kubernetes does).
					o = o.DeepCopy()
					if err := o.Set("data", json.RawMessage(`{"n":"`+strconv.Itoa(i)+`"}`)); err != nil {
						b.Error(err)
						return
					}
					next, err := c.Resource(configMaps).Namespace(o.Metadata.Namespace).Update(ctx, o)
					if err != nil {
						b.Error(err)
						return
					}
					last[k] = next
				}
			})
		}
		wg.Wait()
	}
	select {
	case <-allHandled:
	case <-time.After(time.Minute):
		b.Fatalf("only %d of %d events handled", handled.Load(), b.N)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	// Anything but 1 means the watch was closed (too slow) or re-listed
	// during the run, and the number is not the steady state.
	b.ReportMetric(float64(g.watches.Load()), "watches")
}

// BenchmarkMemoryPerCachedObject lists N ConfigMaps from the apiserver into
// an informer and reports the heap it holds once synced, per object
// (B/cached-object), next to the heap of the same objects decoded on their
// own (B/decoded-object): the difference is what the cache adds. Server
// and client share the heap, so the server's state is loaded before the
// first measurement and only the informer's growth is counted.
func BenchmarkMemoryPerCachedObject(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			srv := startServer(b, apiserver.Config{})
			c := newClient(b, srv, client.Config{})
			objs := preload(b, srv, n)
			waitCacheCaughtUp(b, srv)

			var cached, decoded float64
			for range b.N {
				before := heapAfterGC()
				inf, stop := runInformer(b, c.Resource(configMaps), informer.Options{}, nil)
				after := heapAfterGC()
				require.Equal(b, n, inf.GetIndexer().Len())
				cached += float64(after-before) / float64(n)
				stop()
				runtime.KeepAlive(inf)

				decoded += decodedBytesPerObject(b, objs)
			}
			b.ReportMetric(cached/float64(b.N), "B/cached-object")
			b.ReportMetric(decoded/float64(b.N), "B/decoded-object")
		})
	}
}

// heapAfterGC is the live heap once garbage is collected.
func heapAfterGC() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// decodedBytesPerObject decodes each stored object from its JSON, as the
// client does off the wire, and returns the heap they hold, per object.
func decodedBytesPerObject(tb testing.TB, objs []*api.Object) float64 {
	raw := make([][]byte, len(objs))
	for i, o := range objs {
		raw[i] = o.AppendJSON(nil)
	}
	before := heapAfterGC()
	out := make([]*api.Object, len(objs))
	for i := range raw {
		out[i] = &api.Object{}
		require.NoError(tb, out[i].UnmarshalJSON(raw[i]))
	}
	after := heapAfterGC()
	runtime.KeepAlive(out)
	runtime.KeepAlive(raw)
	return float64(after-before) / float64(len(objs))
}

package interop_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/store"
)

var configMapsGVR = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// storeKey is where our apiserver keeps a namespaced ConfigMap in its
// store (apiserver/registry/resources.go: "/registry/<resource>/<ns>/<name>").
func storeKey(ns, name string) string { return "/registry/configmaps/" + ns + "/" + name }

// benchConfigMap is a ConfigMap of typical size: two labels, an
// annotation, three data keys (about 400 bytes of JSON).
func benchConfigMap(ns, name string, gen int) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{
		Name: name, Namespace: ns,
		Labels:      map[string]string{"app": "bench", "tier": "backend"},
		Annotations: map[string]string{"example.com/owner": "team-listwatch"},
	}}
	data := fmt.Sprintf(`{"config.yaml":"replicas: 3\nlog: info\n","generation":%q,"feature-flags":"a=true,b=false,c=true"}`, strconv.Itoa(gen))
	if err := o.Set("data", []byte(data)); err != nil {
		panic(err)
	}
	return o
}

// informerUnderTest is one of the two informers, started against a server
// and counting the events its handler receives.
type informerUnderTest struct {
	name  string
	start func(b *testing.B, ctx context.Context, srv *testServer, ns string, handled *atomic.Int64) (stop func())
}

// client-go is measured on its default encoding, protobuf, and on JSON,
// the only one ours reads, so that the like-for-like pair is
// client-go-json and listwatch.
var informersUnderTest = []informerUnderTest{
	{"client-go", startClientGoInformer},
	{"client-go-json", startClientGoJSONInformer},
	{"listwatch", startOurInformer},
}

// startClientGoInformer runs client-go's SharedInformerFactory ConfigMap
// informer for one namespace, untuned (client-go's defaults: protobuf-first
// Accept header, watch-list).
func startClientGoInformer(b *testing.B, ctx context.Context, srv *testServer, ns string, handled *atomic.Int64) func() {
	return runClientGoInformer(b, ctx, srv.readClient(b), ns, handled)
}

// startClientGoJSONInformer is startClientGoInformer on a clientset that
// asks for JSON only (AcceptContentTypes: application/json).
func startClientGoJSONInformer(b *testing.B, ctx context.Context, srv *testServer, ns string, handled *atomic.Int64) func() {
	cfg := srv.restConfig()
	cfg.AcceptContentTypes = "application/json"
	cfg.ContentType = "application/json"
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return runClientGoInformer(b, ctx, cs, ns, handled)
}

func runClientGoInformer(b *testing.B, ctx context.Context, cs kubernetes.Interface, ns string, handled *atomic.Int64) func() {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	count := func() { handled.Add(1) }
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { count() },
		UpdateFunc: func(_, obj any) { _ = obj.(*corev1.ConfigMap); count() },
		DeleteFunc: func(any) { count() },
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		b.Fatal("client-go informer did not sync")
	}
	return func() { cancel(); factory.Shutdown() }
}

// startOurInformer runs listwatch's SharedIndexInformer on the same
// resource, with its defaults.
func startOurInformer(b *testing.B, ctx context.Context, srv *testServer, ns string, handled *atomic.Int64) func() {
	c, err := client.New(client.Config{Host: srv.url})
	if err != nil {
		b.Fatal(err)
	}
	inf, err := informer.NewSharedIndexInformer(c.Resource(configMapsGVR).Namespace(ns), informer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	count := func() { handled.Add(1) }
	if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc:    func(*api.Object, bool) { count() },
		UpdateFunc: func(_, _ *api.Object) { count() },
		DeleteFunc: func(any) { count() },
	}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	if !informer.WaitForCacheSync(ctx, inf) {
		b.Fatal("listwatch informer did not sync")
	}
	return func() { cancel(); <-done }
}

// BenchmarkInformerThroughput measures events per second from a write to
// the informer's handler: each op is one update of one of 100 ConfigMaps,
// written straight into our apiserver's store (so the HTTP write path is
// not what is measured), served by the watch cache over loopback HTTP and
// delivered by the informer to a counting handler. The writer runs at most
// benchWindow events ahead of the handler (see benchWindow), so what is
// measured is the pipeline's sustained throughput.
//
// allocs/op and B/op count the whole process: store, watch cache, HTTP
// and informer. The "server-only" case replaces the informer with a raw
// watch that only counts lines; subtract it to get the informer's share.
func BenchmarkInformerThroughput(b *testing.B) {
	cases := append([]informerUnderTest{{"server-only", startRawWatch}}, informersUnderTest...)
	for _, inf := range cases {
		b.Run(inf.name, func(b *testing.B) { benchThroughput(b, inf) })
	}
}

func benchThroughput(b *testing.B, inf informerUnderTest) {
	const objects = 100
	srv := startServer(b, withWatcherBuffer(benchQueue))
	createNamespace(b, srv.writeClient(b), "bench")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := srv.Store()
	for i := range objects {
		if _, err := st.Create(ctx, storeKey("bench", fmt.Sprintf("cm-%03d", i)), benchConfigMap("bench", fmt.Sprintf("cm-%03d", i), 0)); err != nil {
			b.Fatal(err)
		}
	}
	var handled atomic.Int64
	stop := inf.start(b, ctx, srv, "bench", &handled)
	defer stop()
	// Wait for the initial adds, then count only updates.
	waitFor(b, &handled, objects)
	handled.Store(0)

	updates := make([]*api.Object, objects)
	for i := range updates {
		updates[i] = benchConfigMap("bench", fmt.Sprintf("cm-%03d", i), 1)
	}
	runtime.GC()
	cpu0 := cpuTime()
	b.ResetTimer()
	start := time.Now()
	n := int64(0)
	for b.Loop() {
		for n-handled.Load() >= benchWindow {
			time.Sleep(100 * time.Microsecond)
		}
		i := int(n % objects)
		if _, err := st.Update(ctx, storeKey("bench", updates[i].Metadata.Name), updates[i], store.Preconditions{}); err != nil {
			b.Fatal(err)
		}
		n++
	}
	waitFor(b, &handled, n)
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/event")
}

// waitFor waits until counter reaches n (bounded).
func waitFor(b *testing.B, counter *atomic.Int64, n int64) {
	b.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for counter.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("handled %d of %d events", counter.Load(), n)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// startRawWatch is the baseline: one watch connection whose frames are
// only counted, no decoding, no cache.
func startRawWatch(b *testing.B, ctx context.Context, srv *testServer, ns string, handled *atomic.Int64) func() {
	ctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+"/api/v1/namespaces/"+ns+"/configmaps?watch=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			if _, err := br.ReadSlice('\n'); err != nil {
				if err == bufio.ErrBufferFull {
					continue
				}
				return
			}
			handled.Add(1)
		}
	}()
	return func() { cancel(); <-done }
}

// BenchmarkInformerMemory measures the heap an informer holds per cached
// object: the server is filled with 5,000 ConfigMaps first, then the heap
// is measured before the informer starts and after it has synced (after a
// GC each time). The difference, divided by the objects, is B/object; it
// includes the informer's indexes and bookkeeping, not just the objects.
func BenchmarkInformerMemory(b *testing.B) {
	const objects = 5000
	for _, inf := range informersUnderTest {
		b.Run(inf.name, func(b *testing.B) {
			srv := startServer(b)
			createNamespace(b, srv.writeClient(b), "bench")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for i := range objects {
				name := fmt.Sprintf("cm-%05d", i)
				if _, err := srv.Store().Create(ctx, storeKey("bench", name), benchConfigMap("bench", name, 0)); err != nil {
					b.Fatal(err)
				}
			}
			var perObject float64
			for b.Loop() {
				before := heapInUse()
				var handled atomic.Int64
				stop := inf.start(b, ctx, srv, "bench", &handled)
				waitFor(b, &handled, objects)
				after := heapInUse()
				perObject = float64(after-before) / objects
				b.StopTimer()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}

// heapInUse is the live heap after a full GC.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

package etcd_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/etcd"
	"listwatch/etcd/embedded"
	"listwatch/store"
)

// The store comparison of docs/performance.md: the in-memory store, one
// embedded etcd member and a three-member embedded cluster, all on this
// machine. The etcd members fsync as real ones do (unlike the members the
// tests use). Run with:
//
//	cd etcd && go test -run '^$' -bench . -benchtime 2s ./

// benchClusters are started on first use and stopped by TestMain.
var benchClusters struct {
	once    sync.Once
	err     error
	dir     string
	servers []*embedded.Server
	one     *clientv3.Client // the single member
	three   *clientv3.Client // the three-member cluster, all endpoints
}

func startBenchClusters() error {
	b := &benchClusters
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "listwatch-etcd-bench-"); b.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		single, err := embedded.Start(ctx, embedded.Config{DataDir: filepath.Join(b.dir, "single"), LogLevel: "fatal"})
		if err != nil {
			b.err = err
			return
		}
		b.servers = append(b.servers, single)
		var members []embedded.Member
		for i := range 3 {
			members = append(members, embedded.Member{Name: fmt.Sprintf("m%d", i), DataDir: filepath.Join(b.dir, fmt.Sprintf("m%d", i))})
		}
		three, err := embedded.StartCluster(ctx, members, embedded.Config{LogLevel: "fatal"})
		if err != nil {
			b.err = err
			return
		}
		b.servers = append(b.servers, three...)
		if b.one, b.err = embedded.NewClient([]string{single.ClientURL()}); b.err != nil {
			return
		}
		b.three, b.err = embedded.NewClient(embedded.ClientURLs(three))
	})
	return b.err
}

func stopBenchClusters() {
	b := &benchClusters
	if b.one != nil {
		_ = b.one.Close()
	}
	if b.three != nil {
		_ = b.three.Close()
	}
	for _, s := range b.servers {
		s.Close()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// backends are the stores compared.
func backends(b *testing.B) []struct {
	name string
	new  func(b *testing.B) store.Interface
} {
	b.Helper()
	if err := startBenchClusters(); err != nil {
		b.Fatal(err)
	}
	onEtcd := func(cli *clientv3.Client) func(b *testing.B) store.Interface {
		return func(b *testing.B) store.Interface {
			s, err := etcd.New(context.Background(), cli, etcd.Options{Prefix: fmt.Sprintf("/bench-%d", time.Now().UnixNano())})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(s.Close)
			return s
		}
	}
	return []struct {
		name string
		new  func(b *testing.B) store.Interface
	}{
		{"memory", func(b *testing.B) store.Interface {
			s := store.New(store.Options{})
			b.Cleanup(s.Close)
			return s
		}},
		{"etcd-1-member", onEtcd(benchClusters.one)},
		{"etcd-3-members", onEtcd(benchClusters.three)},
	}
}

func benchConfigMap(i int) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "bench", Name: fmt.Sprintf("cm-%06d", i), Labels: map[string]string{"app": "bench"}}}
	if err := o.Set("data", []byte(`{"key":"a value of a few dozen bytes, like most ConfigMaps"}`)); err != nil {
		panic(err)
	}
	return o
}

const benchPrefix = "/registry/configmaps/bench/"

// Creates, one client at a time and 16 at once: the commit path (etcd's
// raft log and fsync, or one mutex).
func BenchmarkCreate(b *testing.B) {
	for _, be := range backends(b) {
		b.Run(be.name+"/serial", func(b *testing.B) {
			s := be.new(b)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if _, err := s.Create(ctx, benchPrefix+fmt.Sprintf("s%d", i), benchConfigMap(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "creates/s")
		})
		b.Run(be.name+"/16-clients", func(b *testing.B) {
			s := be.new(b)
			ctx := context.Background()
			var n atomic.Int64
			b.SetParallelism(8) // 8 × GOMAXPROCS(2) = 16 goroutines
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := int(n.Add(1))
					if _, err := s.Create(ctx, benchPrefix+fmt.Sprintf("p%d", i), benchConfigMap(i)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "creates/s")
		})
	}
}

// A consistent LIST of 1,000 objects from the store itself (what a list
// without resourceVersion reads), and the same list from a watch cache on
// that store (resourceVersion="0"), which never touches the store.
func BenchmarkList1000(b *testing.B) {
	for _, be := range backends(b) {
		s := be.new(b)
		ctx := context.Background()
		for i := range 1000 {
			if _, err := s.Create(ctx, benchPrefix+benchConfigMap(i).Metadata.Name, benchConfigMap(i)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(be.name+"/store", func(b *testing.B) {
			for b.Loop() {
				res, err := s.List(ctx, benchPrefix, store.ListOptions{})
				if err != nil || len(res.Items) != 1000 {
					b.Fatal(err, len(res.Items))
				}
			}
		})
		b.Run(be.name+"/watch-cache", func(b *testing.B) {
			c := newBenchCacher(b, s)
			for b.Loop() {
				objs, _, err := c.List(ctx, 0, nil)
				if err != nil || len(objs) != 1000 {
					b.Fatal(err, len(objs))
				}
			}
		})
	}
}

func newBenchCacher(b *testing.B, s store.Interface) *cacher.Cacher {
	b.Helper()
	c, err := cacher.New(context.Background(), cacher.Config{
		Store: s, Prefix: benchPrefix, Resource: api.GroupResource{Resource: "configmaps"},
		Kind: "ConfigMap", APIVersion: "v1",
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Stop)
	return c
}

// Fan-out: one write reaching 1,000 watchers of the watch cache. The store
// serves one watch whatever the number of watchers, so the store behind it
// should barely matter: that is the watch cache's point.
func BenchmarkFanout1000(b *testing.B) {
	const watchers = 1000
	for _, be := range backends(b) {
		b.Run(be.name, func(b *testing.B) {
			s := be.new(b)
			c := newBenchCacher(b, s)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan struct{}, watchers)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer cancel()
			f := false
			for range watchers {
				w, err := c.Watch(ctx, cacher.WatchOptions{SendInitialEvents: &f})
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					defer w.Stop()
					for {
						frames, err := w.Next(ctx, nil)
						if err != nil {
							return
						}
						for range frames {
							got <- struct{}{}
						}
					}
				})
			}
			i := 0
			for b.Loop() {
				if _, err := s.Create(ctx, benchPrefix+fmt.Sprintf("f%d", i), benchConfigMap(i)); err != nil {
					b.Fatal(err)
				}
				i++
				for range watchers {
					<-got
				}
			}
			b.ReportMetric(float64(i*watchers)/b.Elapsed().Seconds(), "deliveries/s")
		})
	}
}

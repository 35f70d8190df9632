package cacher

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"listwatch/api"
	"listwatch/store"
)

// BenchmarkDispatch measures the watch cache alone, without HTTP: one
// create fanned out to N watchers, each drained by its own goroutine the way
// an HTTP handler drains it. ns/op is per event; the metrics show the cost
// per delivery and that encoding happens once per event however many
// watchers get it.
//
//	go test ./apiserver/cacher/ -run '^$' -bench Dispatch -benchmem
func BenchmarkDispatch(b *testing.B) {
	for _, watchers := range []int{1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			s := store.New(store.Options{})
			defer s.Close()
			c, err := New(context.Background(), Config{Store: s, Prefix: testPrefix,
				Resource: api.GroupResource{Resource: "configmaps"}, Kind: "ConfigMap", APIVersion: "v1",
				WatcherBuffer: 1000})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Stop()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got sync.WaitGroup
			var readers sync.WaitGroup
			for range watchers {
				w, err := c.Watch(ctx, WatchOptions{SendInitialEvents: new(bool)})
				if err != nil {
					b.Fatal(err)
				}
				readers.Add(1)
				go func() {
					defer readers.Done()
					var buf [][]byte
					for {
						var err error
						buf, err = w.Next(ctx, buf[:0])
						for range buf {
							got.Done()
						}
						if err != nil {
							return
						}
					}
				}()
			}
			obj := configMap("ns", "x", nil, strings.Repeat("x", 1000))
			before := c.Stats()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got.Add(watchers)
				if _, err := s.Create(ctx, fmt.Sprintf("%sns/x%d", testPrefix, i), obj); err != nil {
					b.Fatal(err)
				}
				if i%256 == 255 {
					// Keep the writer within the store's watch buffer: an
					// unbounded burst would make the cache re-list.
					got.Wait()
				}
			}
			got.Wait()
			b.StopTimer()
			after := c.Stats()
			deliveries := float64(b.N * watchers)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/deliveries, "ns/delivery")
			b.ReportMetric(float64(after.FramesEncoded-before.FramesEncoded)/float64(b.N), "frames-encoded/event")
			b.ReportMetric(float64(after.BytesEncoded-before.BytesEncoded)/float64(b.N), "bytes-encoded/event")
			cancel()
			readers.Wait()
		})
	}
}

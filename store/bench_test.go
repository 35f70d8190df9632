package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"listwatch/api"
)

// BenchmarkWrite measures Update throughput (1000 keys, round robin) while
// 0, 1 or 100 watchers of the whole keyspace drain their events, and reports
// delivered writes per second: the clock stops only when every watcher has
// received the last write.
//
// Writers never wait for watchers, so a tight write loop would simply end
// watchers that cannot keep up (on 2 cores, 100 readers doing one channel
// receive each per event are slower than one writer doing 100 sends). The
// writer therefore writes in bursts of half a watch buffer and waits between
// bursts until every watcher has caught up: that measures the throughput at
// which every watcher gets every event, and no watcher is ever ended.
func BenchmarkWrite(b *testing.B) {
	for _, watchers := range []int{0, 1, 100} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			s := New(Options{})
			defer s.Close()
			ctx := context.Background()
			const keys = 1000
			burst := int64(s.opts.WatchBuffer / 2)
			objs := make([]*api.Object, keys)
			for i := range objs {
				objs[i] = configMap("bench", fmt.Sprint(i), "0")
				if _, err := s.Create(ctx, cmKey("bench", fmt.Sprint(i)), objs[i]); err != nil {
					b.Fatal(err)
				}
			}
			base := s.Revision()
			final := base + int64(b.N)
			// caughtUp is released by each watcher at the end of each burst.
			var caughtUp, readers sync.WaitGroup
			for range watchers {
				w, err := s.Watch(ctx, "/registry/", base)
				if err != nil {
					b.Fatal(err)
				}
				readers.Go(func() {
					defer w.Stop()
					for ev := range w.Events() {
						if (ev.Revision-base)%burst == 0 || ev.Revision == final {
							caughtUp.Done()
						}
						if ev.Revision == final {
							return
						}
					}
					b.Errorf("watch ended early: %v", w.Err())
				})
			}

			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if int64(i)%burst == 0 {
					caughtUp.Wait()
					caughtUp.Add(watchers)
				}
				if _, err := s.Update(ctx, cmKey("bench", fmt.Sprint(i%keys)), objs[i%keys], Preconditions{}); err != nil {
					b.Fatal(err)
				}
			}
			caughtUp.Wait()
			b.StopTimer()
			readers.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
		})
	}
}

// BenchmarkWatchReplay10k measures a watch that starts 10,000 events back:
// the whole history is replayed through the catch-up path into a default
// (1024) buffer while the reader drains it.
func BenchmarkWatchReplay10k(b *testing.B) {
	const events = 10000
	s := New(Options{HistoryLimit: events})
	defer s.Close()
	ctx := context.Background()
	for i := range events {
		if _, err := s.Create(ctx, cmKey("bench", fmt.Sprint(i)), configMap("bench", fmt.Sprint(i), "0")); err != nil {
			b.Fatal(err)
		}
	}
	from := s.CompactedRevision()
	if from == 0 {
		from = 1
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w, err := s.Watch(ctx, "/registry/", from)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for range w.Events() {
			if n++; n == events {
				break
			}
		}
		w.Stop()
		if n != events {
			b.Fatalf("replayed %d of %d events: %v", n, events, w.Err())
		}
	}
	b.ReportMetric(float64(b.N*events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCreateDelete measures creating a key at a random place in a
// store of 1,000 or 100,000 keys and deleting it again (one op = two
// writes). The key index touches one chunk per write, so the cost should
// hardly depend on the store's size.
func BenchmarkCreateDelete(b *testing.B) {
	for _, size := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("keys=%d", size), func(b *testing.B) {
			s := New(Options{})
			defer s.Close()
			ctx := context.Background()
			obj := configMap("bench", "x", "0")
			for i := range size {
				if _, err := s.Create(ctx, cmKey("bench", fmt.Sprint(i)), obj); err != nil {
					b.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			keys := make([]string, 1024)
			for i := range keys {
				keys[i] = cmKey("bench", fmt.Sprintf("%d-new", rng.IntN(size)))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				key := keys[i%len(keys)]
				if _, err := s.Create(ctx, key, obj); err != nil {
					b.Fatal(err)
				}
				if _, err := s.Delete(ctx, key, Preconditions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkList measures a full list of 1000 objects and a 100-item page of
// it, at the current revision and at a revision 1000 writes back.
func BenchmarkList(b *testing.B) {
	s := New(Options{})
	defer s.Close()
	ctx := context.Background()
	for i := range 1000 {
		if _, err := s.Create(ctx, cmKey("bench", fmt.Sprintf("%04d", i)), configMap("bench", "x", "0")); err != nil {
			b.Fatal(err)
		}
	}
	past := s.Revision()
	for i := range 1000 {
		if _, err := s.Update(ctx, cmKey("bench", fmt.Sprintf("%04d", i)), configMap("bench", "x", "1"), Preconditions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		opts ListOptions
	}{
		{"current/all", ListOptions{}},
		{"current/limit=100", ListOptions{Limit: 100}},
		{"past/all", ListOptions{Revision: past}},
		{"past/limit=100", ListOptions{Revision: past, Limit: 100}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := s.List(ctx, "/registry/configmaps/", c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

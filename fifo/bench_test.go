package fifo

import (
	"context"
	"fmt"
	"testing"

	"listwatch/api"
)

func noop(Deltas, bool) error { return nil }

// BenchmarkAddPop measures one Add and one Pop, the per-event cost the
// queue adds to the informer pipeline. keys is how many distinct objects the
// events touch: few keys let DeltaFIFO merge, many do not.
func BenchmarkAddPop(b *testing.B) {
	for _, k := range queueKinds {
		for _, keys := range []int{1, 1000} {
			b.Run(fmt.Sprintf("%s/keys=%d", k.name, keys), func(b *testing.B) {
				objs := make([]*api.Object, keys)
				for i := range objs {
					objs[i] = obj(fmt.Sprintf("o%d", i), "1")
				}
				q := k.new(Options{})
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					_ = q.Update(objs[i%keys])
					i++
					_ = q.Pop(ctx, noop)
				}
			})
		}
	}
}

// BenchmarkReplace measures a re-list of 10,000 objects against a cache of
// the same size with one object gone (one tombstone), then popping it all.
func BenchmarkReplace(b *testing.B) {
	const n = 10000
	list := make([]*api.Object, n)
	for i := range list {
		list[i] = obj(fmt.Sprintf("o%d", i), "2")
	}
	known := newKnown(append(list[1:], obj("gone", "1"))...)
	for _, k := range queueKinds {
		b.Run(k.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				q := k.new(Options{KnownObjects: known})
				_ = q.Replace(list, "2")
				for q.Len() > 0 {
					_ = q.Pop(ctx, noop)
				}
			}
		})
	}
}

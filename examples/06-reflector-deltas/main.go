// Command 06-reflector-deltas runs the two layers under every informer on
// their own, a Reflector writing into a DeltaFIFO, and prints every delta
// the consumer pops: Replaced for a list, Added, Updated and Deleted for
// watch events, and, after a disconnection long enough to need a re-list,
// a Deleted delta carrying a DeletedFinalStateUnknown tombstone for the
// object that was deleted while nobody was watching.
//
// It answers the fourth article's "the Reflector lists, then watches, and
// feeds the FIFO": what exactly goes into that queue, and why the consumer
// must be ready for an object it cannot see any more.
//
//	go run ./examples/06-reflector-deltas
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/fifo"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
)

func main() {
	queue := flag.String("queue", "deltafifo", "the queue: deltafifo (merges each key's deltas) or realfifo (every delta in arrival order)")
	history := flag.Int("history", 10, "how many events the server's watch cache keeps")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *queue != "deltafifo" && *queue != "realfifo" {
		demo.Fail(fmt.Errorf("-queue must be deltafifo or realfifo, not %q", *queue))
	}
	if *history < 1 {
		demo.Fail(fmt.Errorf("-history must be positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *queue, *history, *trace); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, queueKind string, history int, trace bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := demo.Tracer(trace)
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{EnableFaults: true, HistorySize: history, Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s; its watch cache keeps the last %d events", srv.URL(), history)

	var last *api.Object
	for _, name := range []string{"a", "b", "c"} {
		if last, err = cms.Create(ctx, demo.ConfigMap(name, map[string]string{"v": "1"}, nil)); err != nil {
			return err
		}
	}
	// The Reflector lists at resourceVersion "0", which the watch cache may
	// answer as it is, a moment behind the store. A list not older than
	// the last create's resourceVersion first waits for the cache to reach
	// it, so the three creates are in the list the Reflector gets. (Ours
	// answers a consistent list, no resourceVersion, from the store: that
	// one would not wait for the cache.)
	if _, err := cms.List(ctx, api.ListOptions{ResourceVersion: last.Metadata.ResourceVersion}); err != nil {
		return err
	}
	p.Say("setup", "created ConfigMaps a, b and c before the Reflector starts")

	// The consumer's cache. The queue consults it (KnownObjects) to know
	// which objects the consumer has: that is how a re-list can tell that
	// one of them is gone.
	cache := informer.NewIndexer(nil, nil)
	var queue fifo.Queue
	qopts := fifo.Options{KnownObjects: cache, Tracer: tr}
	if queueKind == "realfifo" {
		queue = fifo.NewRealFIFO(qopts)
	} else {
		queue = fifo.NewDeltaFIFO(qopts)
	}

	// The Reflector, behind a cable we can unplug. Its narration, minus
	// the events, is printed even without -trace.
	rtr := tr
	if rtr == nil {
		rtr = narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
			return layer == narrate.Reflector && !strings.Contains(line, "event ")
		}))
	}
	cable := demo.NewCable(cms)
	r := reflector.New(cable, queue, reflector.Options{
		// List, then watch: the articles' Reflector. The default since
		// client-go 1.35 streams the list (examples/11-watch-list).
		InitialList: reflector.ListThenWatch,
		Tracer:      rtr,
		Backoff:     reflector.Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond},
	})

	p.Section("1. list: the Reflector lists, and hands the list to the queue with Replace")
	var tasks errgroup
	var tombstones atomic.Int64
	tasks.Go(func() error { r.Run(ctx); return nil })
	tasks.Go(func() error { return consume(ctx, p, queue, cache, &tombstones) })
	defer func() {
		cancel()
		queue.Close()
		if err := tasks.Wait(); err != nil {
			demo.Fail(err)
		}
	}()
	if err := waitFor(func() bool { return cache.Len() == 3 }, "the first list in the cache"); err != nil {
		return err
	}

	p.Section("2. watch: each event becomes one delta")
	// Each change is printed before it is made: the delta it causes can
	// be popped before the write's response is even read.
	p.Say("change", "create d")
	if _, err := cms.Create(ctx, demo.ConfigMap("d", map[string]string{"v": "1"}, nil)); err != nil {
		return err
	}
	p.Say("change", "update a: v=2")
	if _, err := cms.Update(ctx, demo.ConfigMap("a", map[string]string{"v": "2"}, nil)); err != nil {
		return err
	}
	p.Say("change", "delete c")
	if err := cms.Delete(ctx, "c", client.DeleteOptions{}); err != nil {
		return err
	}
	if err := waitFor(func() bool { return has(cache, "d") && !has(cache, "c") && data(cache, "a") == "2" }, "the three changes"); err != nil {
		return err
	}

	p.Section("3. disconnected: b is deleted while nobody watches, and the server's window moves on")
	cable.Unplug()
	p.Say("fault", "network down, and KillWatchConnections reset %d watch connection(s)", srv.Faults().KillWatchConnections())
	p.Say("change", "delete b        <- the Reflector will never see this DELETED event")
	if err := cms.Delete(ctx, "b", client.DeleteOptions{}); err != nil {
		return err
	}
	p.Say("change", "create e")
	if _, err := cms.Create(ctx, demo.ConfigMap("e", map[string]string{"v": "1"}, nil)); err != nil {
		return err
	}
	var a *api.Object
	for v := 3; v < 3+history; v++ {
		if a, err = cms.Update(ctx, demo.ConfigMap("a", map[string]string{"v": strconv.Itoa(v)}, nil)); err != nil {
			return err
		}
	}
	p.Say("change", "update a %d times, to v=%s: more changes than the watch cache keeps", history, demo.Data(a, "v"))
	p.Say("fault", "CompactNow at rv %d", srv.Faults().CompactNow())

	p.Section("4. reconnected: the watch gets 410, the Reflector re-lists, Replace finds b missing")
	cable.Plug()
	p.Say("fault", "network back")
	if err := waitFor(func() bool { return !has(cache, "b") && has(cache, "e") && data(cache, "a") == demo.Data(a, "v") }, "the re-list"); err != nil {
		return err
	}
	keys := cache.ListKeys()
	slices.Sort(keys)
	p.Say("result", "the consumer's cache: %s, as on the server; b left through a tombstone", strings.Join(keys, ", "))
	demo.Check(tombstones.Load() == 1, "expected one tombstone, got %d", tombstones.Load())
	return nil
}

// consume pops the queue until it is closed, prints every delta, and keeps
// the cache in step, as an informer's handleDeltas does. Pop calls process
// under the queue's lock, so Replace never sees the cache half-updated.
func consume(ctx context.Context, p *demo.Printer, q fifo.Queue, cache *informer.Indexer, tombstones *atomic.Int64) error {
	for {
		err := q.Pop(ctx, func(deltas fifo.Deltas, initial bool) error {
			for _, d := range deltas {
				p.Say("delta", "%s", describe(d, initial, cache))
				if _, ok := d.Object.(fifo.DeletedFinalStateUnknown); ok {
					tombstones.Add(1)
				}
				if err := apply(cache, d); err != nil {
					return err
				}
			}
			if len(deltas) > 1 {
				p.Say("pop", "(those %d deltas came out of the queue together: DeltaFIFO keeps one entry per key)", len(deltas))
			}
			return nil
		})
		switch {
		case errors.Is(err, fifo.ErrClosed), ctx.Err() != nil:
			return nil
		case err != nil:
			return err
		}
	}
}

func describe(d fifo.Delta, initial bool, cache *informer.Indexer) string {
	switch o := d.Object.(type) {
	case *api.Object:
		s := fmt.Sprintf("%-8s %s rv=%s v=%s", d.Type, o.Key(), o.Metadata.ResourceVersion, demo.Data(o, "v"))
		cached, ok := cache.GetByKey(o.Key())
		switch {
		case initial:
			s += "  (initial list)"
		case d.Type == fifo.Replaced && ok && cached.Metadata.ResourceVersion == o.Metadata.ResourceVersion:
			s += "  (unchanged: a re-list re-delivers everything)"
		case d.Type == fifo.Replaced && ok:
			s += fmt.Sprintf("  (changed: the cache had rv=%s; the changes in between are not in a list)", cached.Metadata.ResourceVersion)
		case d.Type == fifo.Replaced:
			s += "  (new to us: created while we were away)"
		}
		return s
	case fifo.DeletedFinalStateUnknown:
		last := "?"
		if o.Obj != nil {
			last = o.Obj.Metadata.ResourceVersion
		}
		return fmt.Sprintf("%-8s %s  DeletedFinalStateUnknown{last seen rv=%s}: gone from the re-list; deleted while we were away, final state unknown",
			d.Type, o.Key, last)
	}
	return fmt.Sprintf("%-8s %T", d.Type, d.Object)
}

// apply updates the cache with one delta.
func apply(cache *informer.Indexer, d fifo.Delta) error {
	switch o := d.Object.(type) {
	case *api.Object:
		if d.Type == fifo.Deleted {
			return cache.Delete(o)
		}
		return cache.Update(o)
	case fifo.DeletedFinalStateUnknown:
		ns, name, _ := strings.Cut(o.Key, "/")
		return cache.Delete(&api.Object{Metadata: api.ObjectMeta{Namespace: ns, Name: name}})
	}
	return fmt.Errorf("unexpected delta object %T", d.Object)
}

func has(cache *informer.Indexer, name string) bool {
	_, ok := cache.GetByKey(demo.Namespace + "/" + name)
	return ok
}

func data(cache *informer.Indexer, name string) string {
	obj, ok := cache.GetByKey(demo.Namespace + "/" + name)
	if !ok {
		return ""
	}
	return demo.Data(obj, "v")
}

// waitFor polls cond for up to 15 s: the deltas travel asynchronously.
func waitFor(cond func() bool, what string) error {
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// errgroup runs goroutines and collects the first error.
type errgroup struct {
	errs chan error
	n    int
}

func (g *errgroup) Go(f func() error) {
	if g.errs == nil {
		g.errs = make(chan error, 8)
	}
	g.n++
	go func() { g.errs <- f() }()
}

func (g *errgroup) Wait() error {
	var first error
	for ; g.n > 0; g.n-- {
		if err := <-g.errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Command 08-slow-handler shows what the fourth article's sharedProcessor
// and processorListener are for: one informer, one watch, one cache, two
// handlers, and one of them slow. Each handler has its own listener with
// an unbounded buffer and its own goroutine, so the slow one builds up a
// backlog while the fast one keeps up, and neither slows the informer.
//
// Then, with nothing changing, the informer's resync re-delivers every
// cached object to both handlers as OnUpdate(old, new) with old and new the
// same resourceVersion: a resync, a reminder to re-check, not a change.
//
//	go run ./examples/08-slow-handler
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
	"listwatch/narrate"
)

func main() {
	delay := flag.Duration("delay", 200*time.Millisecond, "how long the slow handler takes per notification")
	changes := flag.Int("changes", 15, "how many changes arrive in the burst")
	resync := flag.Duration("resync", 5*time.Second, "the informer's resync period (at least 1s)")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *delay <= 0 || *changes < 1 || *resync < time.Second {
		demo.Fail(fmt.Errorf("need -delay > 0, -changes >= 1, -resync >= 1s"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *delay, *changes, *resync, *trace); err != nil {
		demo.Fail(err)
	}
}

// handler counts what one handler was told, telling changes from syncs.
type handler struct {
	name    string
	delay   time.Duration
	p       *demo.Printer
	quiet   atomic.Bool // during the burst only the summary lines print
	adds    atomic.Int64
	changes atomic.Int64
	syncs   atomic.Int64
}

func (h *handler) funcs() informer.ResourceEventHandlerFuncs {
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, initial bool) {
			time.Sleep(h.delay)
			h.adds.Add(1)
			h.p.Say(h.name, "OnAdd    %s rv=%s (initial list: %v)", obj.Key(), obj.Metadata.ResourceVersion, initial)
		},
		UpdateFunc: func(old, obj *api.Object) {
			time.Sleep(h.delay)
			if old.Metadata.ResourceVersion == obj.Metadata.ResourceVersion {
				h.syncs.Add(1)
				h.p.Say(h.name, "OnUpdate %s rv %s→%s  same resourceVersion: a resync (Sync), not a change",
					obj.Key(), old.Metadata.ResourceVersion, obj.Metadata.ResourceVersion)
				return
			}
			n := h.changes.Add(1)
			if !h.quiet.Load() {
				h.p.Say(h.name, "OnUpdate %s rv %s→%s  change #%d", obj.Key(), old.Metadata.ResourceVersion, obj.Metadata.ResourceVersion, n)
			}
		},
	}
}

func run(p *demo.Printer, delay time.Duration, changes int, resync time.Duration, trace bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := demo.Tracer(trace)
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	p.Say("server", "our apiserver on %s", srv.URL())
	names := []string{"a", "b", "c"}
	for _, name := range names {
		if _, err := cms.Create(ctx, demo.ConfigMap(name, map[string]string{"n": "0"}, nil)); err != nil {
			return err
		}
	}

	// Without -trace, the informer still narrates its resyncs.
	itr := tr
	if itr == nil {
		itr = narrate.New(os.Stdout, narrate.WithoutTimes(), narrate.WithFilter(func(layer, line string) bool {
			return strings.Contains(line, "resync")
		}))
	}
	inf, err := informer.NewSharedIndexInformer(cms, informer.Options{ResyncPeriod: resync, Tracer: itr})
	if err != nil {
		return err
	}
	fast := &handler{name: "fast", p: p}
	slow := &handler{name: "slow", delay: delay, p: p}
	fastReg, err := inf.AddEventHandlerWithOptions(fast.funcs(), informer.HandlerOptions{Name: "fast"})
	if err != nil {
		return err
	}
	slowReg, err := inf.AddEventHandlerWithOptions(slow.funcs(), informer.HandlerOptions{Name: "slow"})
	if err != nil {
		return err
	}
	p.Say("informer", "one informer on ConfigMaps in default, resync every %v, two handlers: fast, and slow (%v per call)", resync, delay)
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }() // also done below, before the results; both are harmless
	if !informer.WaitForCacheSync(ctx, inf, fastReg, slowReg) {
		return fmt.Errorf("the informer did not sync")
	}

	p.Section("1. a burst of %d changes: the fast handler keeps up, the slow one queues", changes)
	fast.quiet.Store(true)
	slow.quiet.Store(true)
	burstStart := time.Now()
	for i := 1; i <= changes; i++ {
		name := names[(i-1)%len(names)]
		if _, err := cms.Update(ctx, demo.ConfigMap(name, map[string]string{"n": strconv.Itoa(i)}, nil)); err != nil {
			return err
		}
	}
	p.Say("change", "updated a, b and c %d times in %v", changes, time.Since(burstStart).Round(time.Millisecond))

	slowBehind := int64(-1) // the slow handler's backlog when the fast one was done
	tick := time.NewTicker(delay)
	defer tick.Stop()
	deadline := time.After(time.Duration(changes)*delay + 15*time.Second)
	for slow.changes.Load() < int64(changes) {
		select {
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("the slow handler did not catch up")
		}
		if slowBehind < 0 && fast.changes.Load() == int64(changes) {
			slowBehind = int64(slowReg.Pending())
		}
		// What is neither handled nor pending is the notification the slow
		// handler is in the middle of: say so, or the numbers do not add up.
		slowDone, slowPending := slow.changes.Load(), slowReg.Pending()
		inHand := ""
		if busy := int64(changes) - slowDone - int64(slowPending); busy > 0 {
			inHand = fmt.Sprintf(", %d in its handler", busy)
		}
		p.Say("backlog", "+%-6v fast: %2d handled, %2d pending   slow: %2d handled, %2d pending%s",
			time.Since(burstStart).Round(100*time.Millisecond),
			fast.changes.Load(), fastReg.Pending(), slowDone, slowPending, inHand)
	}
	p.Say("backlog", "+%-6v slow caught up; the informer (and the fast handler) never waited for it",
		time.Since(burstStart).Round(100*time.Millisecond))
	fast.quiet.Store(false)
	slow.quiet.Store(false)

	p.Section("2. nothing changes: the resync re-delivers each cached object (one SyncAll delta)")
	syncDeadline := time.After(3*resync + time.Duration(len(names))*delay + 10*time.Second)
	for fast.syncs.Load() < int64(len(names)) || slow.syncs.Load() < int64(len(names)) {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-syncDeadline:
			return fmt.Errorf("no full resync arrived")
		}
	}
	// Stop the informer, so that nothing more is printed after the results.
	cancel()
	<-done
	fastChanges, slowChanges := fast.changes.Load(), slow.changes.Load()

	p.Say("result", "fast: %d adds, %d changes, %d syncs; slow: %d adds, %d changes, %d syncs",
		fast.adds.Load(), fastChanges, fast.syncs.Load(), slow.adds.Load(), slowChanges, slow.syncs.Load())
	p.Say("result", "when the fast handler had handled all %d changes, the slow one still had %d pending", changes, slowBehind)
	p.Say("result", "a resync is OnUpdate with old.resourceVersion == new.resourceVersion: compare them before doing work")

	demo.Check(fastChanges == int64(changes) && slowChanges == int64(changes),
		"each handler should count %d changes (syncs apart), got fast %d, slow %d", changes, fastChanges, slowChanges)
	demo.Check(slowBehind > 0, "the slow handler had no backlog when the fast one was done")
	return nil
}

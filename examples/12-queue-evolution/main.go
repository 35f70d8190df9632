// Command 12-queue-evolution runs one re-list through the three queues
// client-go's informers have used, DeltaFIFO (the articles' era, until
// Kubernetes 1.33), RealFIFO (1.33-1.35) and the atomic RealFIFO (the
// default since 1.36), and prints what a handler is told and what it would
// read in the informer's cache at that moment.
//
// The Reflector's calls are scripted, so every run prints the same lines:
// an initial list, three watch events the informer has not popped yet when
// the watch breaks, changes made while it was away (c deleted, b deleted, c
// created again), and the re-list. Each delta is then popped and applied
// with informer.ProcessDeltas (client-go's processDeltas) to a fresh cache,
// with a handler that prints each call.
//
//	go run ./examples/12-queue-evolution
//	go run ./examples/12-queue-evolution -queue AtomicFIFO
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/examples/internal/demo"
	"listwatch/fifo"
	"listwatch/informer"
	"listwatch/narrate"
)

func main() {
	only := flag.String("queue", "", "run only this queue: DeltaFIFO, RealFIFO or AtomicFIFO (default: all three, oldest first)")
	trace := flag.Bool("trace", false, "narrate the queue and the cache")
	flag.Parse()
	tr := demo.Tracer(*trace)
	p := demo.NewPrinter(os.Stdout)
	kinds := []informer.QueueKind{informer.DeltaFIFO, informer.RealFIFO, informer.AtomicFIFO}
	ran := false
	for _, k := range kinds {
		if *only != "" && !strings.EqualFold(*only, string(k)) {
			continue
		}
		ran = true
		if err := run(p, k, tr); err != nil {
			demo.Fail(err)
		}
	}
	if !ran {
		demo.Fail(fmt.Errorf("-queue must be DeltaFIFO, RealFIFO or AtomicFIFO, not %q", *only))
	}
}

// era says which Kubernetes versions used each queue.
var era = map[informer.QueueKind]string{
	informer.DeltaFIFO:  "the informer queue until Kubernetes 1.33, and the articles'",
	informer.RealFIFO:   "Kubernetes 1.33 to 1.35 (InOrderInformers)",
	informer.AtomicFIFO: "the default since Kubernetes 1.36 (AtomicFIFO, UnlockWhileProcessingFIFO)",
}

func cm(name, rv string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// newQueue builds the queue as the informer does for each kind.
func newQueue(kind informer.QueueKind, cache *informer.Indexer, tr *narrate.Tracer) fifo.Queue {
	switch kind {
	case informer.DeltaFIFO:
		return fifo.NewDeltaFIFO(fifo.Options{KnownObjects: cache, Tracer: tr})
	case informer.RealFIFO:
		return fifo.NewRealFIFO(fifo.Options{KnownObjects: cache, Tracer: tr})
	}
	// The atomic queue is not given the cache: it never reads it.
	return fifo.NewRealFIFO(fifo.Options{Atomic: true, UnlockWhileProcessing: true, Tracer: tr})
}

func run(p *demo.Printer, kind informer.QueueKind, tr *narrate.Tracer) error {
	p.Section("%s: %s", kind, era[kind])
	cache := informer.NewIndexer(nil, tr)
	q := newQueue(kind, cache, tr)
	h := &handler{p: p, cache: cache}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	drain := func() error {
		for q.Len() > 0 {
			if err := q.Pop(ctx, func(d fifo.Deltas, initial bool) error {
				h.popped(d)
				return informer.ProcessDeltas(cache, h, d, initial)
			}); err != nil {
				return err
			}
		}
		return nil
	}

	// The initial list, handled before anything else happens.
	h.quiet = true
	if err := errors.Join(q.Replace([]*api.Object{cm("a", "1"), cm("b", "2"), cm("c", "3")}, "3"), drain()); err != nil {
		return err
	}
	h.quiet = false
	p.Say("cache", "after the initial list: %s", h.snapshot())

	// Three watch events, queued while the handler is still busy.
	errs := []error{q.Update(cm("a", "4")), q.Add(cm("d", "5")), q.Update(cm("a", "6"))}
	p.Say("watch", "MODIFIED a@4, ADDED d@5, MODIFIED a@6 (queued, not popped yet); then the watch breaks")
	p.Say("server", "while the informer is away: c deleted (rv 7), b deleted (rv 8), c created again (rv 9)")
	// The re-list: the server's state at rv 9.
	errs = append(errs, q.Replace([]*api.Object{cm("a", "6"), cm("c", "9"), cm("d", "5")}, "9"))
	p.Say("relist", "a@6 c@9 d@5 at rv 9 → Replace; the queue now holds %s", describe(q))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return drain()
}

// describe lists what the queue holds, oldest first.
func describe(q fifo.Queue) string {
	var parts []string
	switch q := q.(type) {
	case *fifo.RealFIFO:
		for _, d := range q.Pending() {
			parts = append(parts, deltaString(d))
		}
	case *fifo.DeltaFIFO:
		for _, key := range q.ListKeys() {
			ds, _ := q.Get(key)
			var inner []string
			for _, d := range ds {
				inner = append(inner, deltaString(d))
			}
			parts = append(parts, strings.TrimPrefix(key, "default/")+":["+strings.Join(inner, " ")+"]")
		}
	}
	return fmt.Sprintf("%d items: %s", len(parts), strings.Join(parts, ", "))
}

func deltaString(d fifo.Delta) string {
	switch o := d.Object.(type) {
	case *api.Object:
		return fmt.Sprintf("%s %s@%s", d.Type, o.Metadata.Name, o.Metadata.ResourceVersion)
	case fifo.DeletedFinalStateUnknown:
		return fmt.Sprintf("%s %s(tombstone)", d.Type, strings.TrimPrefix(o.Key, "default/"))
	case fifo.ReplacedAllInfo:
		return fmt.Sprintf("%s(%d objects @%s)", d.Type, len(o.Objects), o.ResourceVersion)
	}
	return string(d.Type)
}

// handler prints each call with what the cache holds at that moment: what a
// handler of a plain informer, called inside Pop, would read from it.
type handler struct {
	p     *demo.Printer
	cache *informer.Indexer
	quiet bool
}

func (h *handler) snapshot() string {
	var parts []string
	for _, o := range h.cache.List() {
		parts = append(parts, o.Metadata.Name+"@"+o.Metadata.ResourceVersion)
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func (h *handler) popped(d fifo.Deltas) {
	if h.quiet {
		return
	}
	var parts []string
	for _, x := range d {
		parts = append(parts, deltaString(x))
	}
	h.p.Say("pop", "%s", strings.Join(parts, ", "))
}

func (h *handler) say(format string, args ...any) {
	if !h.quiet {
		h.p.Say("handler", "%-22s cache %s", fmt.Sprintf(format, args...), h.snapshot())
	}
}

func (h *handler) OnAdd(o *api.Object, _ bool) {
	h.say("OnAdd %s@%s", o.Metadata.Name, o.Metadata.ResourceVersion)
}

func (h *handler) OnUpdate(old, o *api.Object) {
	h.say("OnUpdate %s %s→%s", o.Metadata.Name, old.Metadata.ResourceVersion, o.Metadata.ResourceVersion)
}

func (h *handler) OnDelete(obj any) {
	switch o := obj.(type) {
	case fifo.DeletedFinalStateUnknown:
		h.say("OnDelete %s (tombstone)", strings.TrimPrefix(o.Key, "default/"))
	case *api.Object:
		h.say("OnDelete %s", o.Metadata.Name)
	}
}

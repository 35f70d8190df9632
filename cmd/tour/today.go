package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
)

// todayHandler names the second informer's handler in its lines.
const todayHandler = "today"

// todaysDefault is the chapter of client-go as it is today: the tour's
// informer runs the articles' path (LIST, then WATCH, into a DeltaFIFO);
// client-go v0.37.2 with its defaults streams the initial state over the
// watch (its WatchListClient feature gate, on since 1.35) into an atomic
// RealFIFO (AtomicFIFO, on since 1.36). A second informer with those
// defaults starts beside the first, the same change to demo reaches both,
// and the chapter follows it through the second. It is stopped at the
// chapter's end: the rest of the tour goes on with the articles' path.
func (t *tour) todaysDefault(ctx context.Context) error {
	t.chapter(chapterToday())
	// The server's lines and the first informer's handler stay; the first
	// informer's other client-side lines are left out, so every client
	// line of the chapter is the second informer's, from its own Tracer.
	restore := t.spot.focus(func(layer, line string) bool {
		switch layer {
		case narrate.Store, narrate.WatchCache:
			return t.spot.followed(line)
		case narrate.HTTP:
			return strings.HasPrefix(line, "WATCH configmaps") && strings.Contains(line, "sendInitialEvents")
		case narrate.Handler:
			return true
		}
		return false
	})
	defer restore()
	var over atomic.Bool // set before it stops: its shutdown is not part of the story
	tr := narrate.New(t.con, narrate.WithColour(t.o.Colour), narrate.WithStart(t.start),
		narrate.WithFilter(func(layer, line string) bool { return !over.Load() && keepToday(layer, line) }))

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	c, err := client.New(client.Config{Host: t.srv.URL(), Tracer: tr,
		HTTPClient: &http.Client{Transport: transport}, UserAgent: "tour-today/" + client.Version})
	if err != nil {
		return err
	}
	lw := &listCounter{ListerWatcher: c.Resource(configMaps).Namespace(namespace)}
	inf, err := informer.NewSharedIndexInformer(lw, informer.Options{
		// client-go's defaults: the Reflector's InitialList is left at its
		// default, WatchList; the queue is the atomic RealFIFO.
		Queue:     informer.AtomicFIFO,
		Tracer:    tr,
		Reflector: reflector.Options{Name: "today"},
	})
	if err != nil {
		return err
	}
	got := make(chan string, 16)
	if _, err := inf.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj *api.Object) {
			if obj.Key() == demoKey {
				got <- obj.Metadata.ResourceVersion
			}
		},
	}, informer.HandlerOptions{Name: todayHandler}); err != nil {
		return err
	}
	ictx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(ictx)
	}()
	defer func() {
		over.Store(true)
		stop()
		<-done
	}()
	return t.followToday(ctx, inf, lw, got)
}

// listCounter counts the Lists a Reflector asks for: on today's default
// path there is none.
type listCounter struct {
	reflector.ListerWatcher
	lists atomic.Int64
}

// List implements reflector.ListerWatcher.
func (l *listCounter) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	l.lists.Add(1)
	return l.ListerWatcher.List(ctx, opts)
}

// followToday waits for the second informer to sync, changes demo, and
// waits until both informers' handlers are told.
func (t *tour) followToday(ctx context.Context, inf *informer.SharedIndexInformer, lw *listCounter, got <-chan string) error {
	sctx, cancel := context.WithTimeout(ctx, t.o.StageTimeout)
	defer cancel()
	if !informer.WaitForCacheSync(sctx, inf) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return t.late("the informer on today's default path syncs")
	}
	synced := inf.LastSyncResourceVersion()
	rv, err := t.changeDemo(ctx, "today")
	if err != nil {
		return err
	}
	for {
		select {
		case r := <-got:
			if r != rv {
				continue
			}
			if n := lw.lists.Load(); n != 0 {
				return fmt.Errorf("%s: the informer on today's default path sent %d LIST(s); it streams the state over its watch", t.here(), n)
			}
			t.check("today's default path: no LIST, the state streamed over the watch up to rv %s, "+
				"then rv %s through the atomic RealFIFO, to both informers", synced, rv)
			return nil
		case <-sctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return t.late("rv " + rv + " reaches the informer on today's default path")
		}
	}
}

// keepToday is the second informer's filter: its watch's life and the
// followed objects' lines, not its routine ones.
func keepToday(layer, line string) bool {
	if strings.Contains(line, demoKey) || strings.Contains(line, alphaKey) {
		return true
	}
	return lifecycle(layer, line, false) || strings.Contains(line, "initial-events-end")
}

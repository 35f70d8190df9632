package gc

import (
	"context"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/narrate"
)

// Discovery makes the collector watch every resource the server serves,
// not only the configured ones, as kube-controller-manager's does: it
// watches every preferred resource that allows delete, list and watch
// (GetDeletableResources in pkg/controller/garbagecollector/
// garbagecollector.go), Events aside (DefaultIgnoredResources in
// graph_builder.go), and looks again every 30 seconds (GarbageCollector.Sync,
// started by cmd/kube-controller-manager/app/core.go), so that a custom
// resource defined later is collected too, and that a dependent of any
// kind is orphaned or deleted first when its owner asks.
type Discovery struct {
	// Resources lists what the server serves
	// (client.Client.ServerPreferredResources).
	Resources func(ctx context.Context) ([]client.APIResource, error)
	// NewInformer makes an informer of the collector's own for a
	// discovered resource: the collector adds its index before it starts
	// it, which a shared informer already running would refuse.
	NewInformer func(gvr api.GroupVersionResource) (*informer.SharedIndexInformer, error)
	// Period is how long between looks; 0 is 30 s.
	Period time.Duration
}

// ignoredResources are never watched: Events own nothing and are many.
var ignoredResources = map[api.GroupVersionResource]bool{
	{Version: "v1", Resource: "events"}:                         true,
	{Group: "events.k8s.io", Version: "v1", Resource: "events"}: true,
}

// discover watches what discovery finds until ctx ends, and returns once
// every informer it started has stopped.
func (g *Collector) discover(ctx context.Context) {
	d := g.opts.Discover
	period := d.Period
	if period <= 0 {
		period = 30 * time.Second
	}
	running := map[api.GroupVersionResource]*discovered{}
	var wg sync.WaitGroup
	defer wg.Wait()
	ticker := g.opts.Clock.NewTicker(period)
	defer ticker.Stop()
	for {
		g.syncDiscovered(ctx, running, &wg)
		select {
		case <-ctx.Done():
			for _, r := range running {
				r.stop()
			}
			return
		case <-ticker.C():
		}
	}
}

// discovered is one resource the collector found and watches.
type discovered struct {
	index int
	stop  context.CancelFunc
}

// syncDiscovered starts watching what the server serves and the collector
// does not watch yet, and stops watching what it no longer serves. A
// failed discovery changes nothing until the next look.
func (g *Collector) syncDiscovered(ctx context.Context, running map[api.GroupVersionResource]*discovered, wg *sync.WaitGroup) {
	served, err := g.opts.Discover.Resources(ctx)
	if err != nil {
		g.opts.Tracer.Printf(narrate.Controller, "gc: discovery failed, trying again later: %v", err)
		return
	}
	seen := map[api.GroupVersionResource]bool{}
	for _, s := range served {
		if !s.Allows("delete") || !s.Allows("list") || !s.Allows("watch") || ignoredResources[s.GVR] {
			continue
		}
		seen[s.GVR] = true
		if running[s.GVR] != nil || g.watches(s.GVR) {
			continue
		}
		inf, err := g.opts.Discover.NewInformer(s.GVR)
		if err != nil {
			g.opts.Tracer.Printf(narrate.Controller, "gc: %s: %v", s.GVR.Resource, err)
			continue
		}
		if _, err := g.add(Resource{GVR: s.GVR, Kind: s.Kind, Namespaced: s.Namespaced, Informer: inf}); err != nil {
			g.opts.Tracer.Printf(narrate.Controller, "gc: %s: %v", s.GVR.Resource, err)
			continue
		}
		runCtx, stop := context.WithCancel(ctx)
		running[s.GVR] = &discovered{index: g.indexOf(s.GVR), stop: stop}
		wg.Go(func() { inf.Run(runCtx) })
		g.opts.Tracer.Printf(narrate.Controller, "gc: watching %s too (discovered)", s.GVR)
	}
	for gvr, r := range running {
		if !seen[gvr] {
			r.stop()
			g.forget(r.index)
			delete(running, gvr)
			g.opts.Tracer.Printf(narrate.Controller, "gc: %s is no longer served: not watching it", gvr)
		}
	}
}

// watches reports whether the collector watches gvr already.
func (g *Collector) watches(gvr api.GroupVersionResource) bool {
	return g.indexOf(gvr) >= 0
}

// indexOf is the index of the watched resource gvr, or -1.
func (g *Collector) indexOf(gvr api.GroupVersionResource) int {
	g.mu.RLock()
	defer g.mu.RUnlock()
	for i, r := range g.res {
		if r.GVR == gvr && !g.gone[i] {
			return i
		}
	}
	return -1
}

// forget marks the watched resource i gone: its items are dropped and
// owner references to its kind are no longer looked up.
func (g *Collector) forget(i int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gone[i] = true
	r := g.res[i]
	if g.byKind[r.GVR.APIVersion()+"/"+r.Kind] == i {
		delete(g.byKind, r.GVR.APIVersion()+"/"+r.Kind)
	}
}

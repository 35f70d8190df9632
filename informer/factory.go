package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/reflector"
)

// ListerWatcherFor builds the ListerWatcher for one resource in one
// namespace ("" for all namespaces). With the client it is a one-liner
// around the client's resource client; taking a function keeps this
// package free of the concrete client.
type ListerWatcherFor func(gvr api.GroupVersionResource, namespace string) reflector.ListerWatcher

// InformerKey identifies one of a Factory's informers.
type InformerKey struct {
	Resource  api.GroupVersionResource
	Namespace string
}

func (k InformerKey) String() string {
	r := k.Resource.Resource
	if k.Resource.Group != "" {
		r += "." + k.Resource.Group
	}
	if k.Namespace != "" {
		return r + " in " + k.Namespace
	}
	return r
}

// Factory hands out one shared informer per resource and namespace, so
// that every part of a program asking for configmaps shares one watch and
// one cache (client-go's SharedInformerFactory, informers/factory.go).
type Factory struct {
	newLW         ListerWatcherFor
	defaultResync time.Duration
	opts          Options

	mu           sync.Mutex
	informers    map[InformerKey]*SharedIndexInformer
	started      map[InformerKey]bool
	cancels      []context.CancelFunc
	shuttingDown bool
	wg           sync.WaitGroup
}

// NewFactory returns a Factory whose informers get their ListerWatcher
// from newLW, resync every defaultResync (0: never) and otherwise use
// opts (the Reflector's name is set per informer).
func NewFactory(newLW ListerWatcherFor, defaultResync time.Duration, opts Options) *Factory {
	return &Factory{
		newLW:         newLW,
		defaultResync: defaultResync,
		opts:          opts,
		informers:     map[InformerKey]*SharedIndexInformer{},
		started:       map[InformerKey]bool{},
	}
}

// InformerFor returns the shared informer for gvr in namespace, creating
// it the first time. It is not running until Start.
func (f *Factory) InformerFor(gvr api.GroupVersionResource, namespace string) (*SharedIndexInformer, error) {
	key := InformerKey{Resource: gvr, Namespace: namespace}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[key]; ok {
		return inf, nil
	}
	if f.newLW == nil {
		return nil, errors.New("informer: Factory has no ListerWatcherFor")
	}
	lw := f.newLW(gvr, namespace)
	if lw == nil {
		return nil, fmt.Errorf("informer: no ListerWatcher for %s", key)
	}
	opts := f.opts
	opts.ResyncPeriod = f.defaultResync
	opts.Reflector.Name = key.String()
	inf, err := NewSharedIndexInformer(lw, opts)
	if err != nil {
		return nil, fmt.Errorf("informer for %s: %w", key, err)
	}
	f.informers[key] = inf
	return inf, nil
}

// Start runs every informer not yet started, until ctx is done or
// Shutdown. Call it again after asking for more informers.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shuttingDown {
		return
	}
	for key, inf := range f.informers {
		if f.started[key] {
			continue
		}
		f.started[key] = true
		runCtx, cancel := context.WithCancel(ctx)
		f.cancels = append(f.cancels, cancel)
		f.wg.Go(func() { inf.Run(runCtx) })
	}
}

// WaitForCacheSync waits until every started informer has synced, or ctx
// is done, and reports which have.
func (f *Factory) WaitForCacheSync(ctx context.Context) map[InformerKey]bool {
	f.mu.Lock()
	started := map[InformerKey]*SharedIndexInformer{}
	for key, inf := range f.informers {
		if f.started[key] {
			started[key] = inf
		}
	}
	f.mu.Unlock()
	out := make(map[InformerKey]bool, len(started))
	for key, inf := range started {
		out[key] = WaitForCacheSync(ctx, inf)
	}
	return out
}

// Shutdown stops every informer the Factory started and waits until they
// have all returned. Nothing starts after it.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shuttingDown = true
	for _, cancel := range f.cancels {
		cancel()
	}
	f.cancels = nil
	f.mu.Unlock()
	f.wg.Wait()
}

// Syncable is anything that can say it has synced: an informer or a
// handler registration.
type Syncable interface {
	HasSynced() bool
	Synced() <-chan struct{}
}

// WaitForCacheSync waits until every s has synced (true) or ctx is done
// (false), without polling.
func WaitForCacheSync(ctx context.Context, s ...Syncable) bool {
	for _, x := range s {
		select {
		case <-x.Synced():
		case <-ctx.Done():
			return false
		}
	}
	return true
}

package chaos

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/reflector"
)

// informerVariant is how informer number i is set up. The informers of a
// run differ, so that one run covers the three queues (AtomicFIFO,
// RealFIFO, DeltaFIFO), both ways to fetch the initial state (watch-list,
// the default, and list-then-watch), namespace-scoped and cluster-wide
// watches, paged lists (which read the store at an exact revision and so
// meet compaction), websocket watches, and both ways a watch timeout is
// chosen. Five informers cover each queue and each initial-list mode; six
// cover every pairing of the two.
type informerVariant struct {
	queue     informer.QueueKind
	namespace string // "" for all namespaces
	pageSize  int64
	transport client.TransportKind
	watchList bool
	// serverTimeout drops the reflector's timeoutSeconds from each watch,
	// so the server's default (and the watch-timeout fault) decides when
	// it ends, as for a client that names none (the first article's).
	serverTimeout bool
}

func variantFor(i int, namespaces []string) informerVariant {
	kinds := informer.QueueKinds()
	v := informerVariant{queue: kinds[i%len(kinds)], transport: client.TransportHTTP}
	v.watchList = i%2 == 0
	if i%4 == 2 {
		v.namespace = namespaces[(i/4)%len(namespaces)]
	}
	if i%4 == 1 {
		v.pageSize = 50 // odd informers list, so their lists are paged
	}
	if i%4 == 3 {
		v.transport = client.TransportWebSocket
	}
	v.serverTimeout = (i/2)%2 == 0
	return v
}

func (v informerVariant) String() string {
	ns := v.namespace
	if ns == "" {
		ns = "all namespaces"
	}
	s := fmt.Sprintf("%s, %s, %s", v.queue, ns, v.transport)
	if v.pageSize > 0 {
		s += fmt.Sprintf(", pages of %d", v.pageSize)
	}
	if v.watchList {
		s += ", watch-list"
	} else {
		s += ", list-then-watch"
	}
	if v.serverTimeout {
		s += ", server picks watch timeouts"
	} else {
		s += ", client picks watch timeouts"
	}
	return s
}

// observedInformer is one informer of the run with everything around it
// that observes or disturbs it: the counting ListerWatcher, the gate that
// can stop it reading its watch, and two recording handlers, the second of
// which can be made slow.
type observedInformer struct {
	index     int
	variant   informerVariant
	inf       *informer.SharedIndexInformer
	lw        *observedLW
	fast      *recorder
	slow      *recorder
	fastReg   informer.ResourceEventHandlerRegistration
	slowReg   informer.ResourceEventHandlerRegistration
	transport *http.Transport
}

// name is the informer's name in reports.
func (o *observedInformer) name() string { return fmt.Sprintf("informer-%d", o.index) }

// userAgent is what the informer's client sends, so that the server's
// debug view shows which watch is whose.
func (o *observedInformer) userAgent() string { return fmt.Sprintf("chaos-informer-%d", o.index) }

func newObservedInformer(i int, v informerVariant, host string, cfg Config) (*observedInformer, error) {
	o := &observedInformer{index: i, variant: v, fast: newRecorder(), slow: newRecorder(), transport: newTransport()}
	c, err := client.New(client.Config{
		Host:             host,
		Transport:        v.transport,
		HTTPClient:       &http.Client{Transport: o.transport},
		IdleWatchTimeout: cfg.IdleWatchTimeout,
		UserAgent:        o.userAgent(),
		Tracer:           cfg.ClientTracer,
	})
	if err != nil {
		return nil, err
	}
	rc := c.Resource(configMaps)
	if v.namespace != "" {
		rc = rc.Namespace(v.namespace)
	}
	lw := &observedLW{rc: rc, stripTimeout: v.serverTimeout, gate: newGate()}
	ropts := reflector.Options{
		Name:            fmt.Sprintf("informer-%d", i),
		MinWatchTimeout: 2 * time.Second,
		MaxWatchTimeout: 4 * time.Second,
		PageSize:        v.pageSize,
		InitialList:     reflector.ListThenWatch,
		// Short backoffs: a 403 burst must not leave an informer asleep
		// for half a minute (client-go's cap) at the end of the run.
		Backoff: reflector.Backoff{Initial: 50 * time.Millisecond, Max: time.Second, ResetAfter: 5 * time.Second},
	}
	if v.watchList {
		ropts.InitialList = reflector.WatchList
	}
	inf, err := informer.NewSharedIndexInformer(lw, informer.Options{Queue: v.queue, Reflector: ropts, Tracer: cfg.ClientTracer})
	if err != nil {
		return nil, err
	}
	o.inf, o.lw = inf, lw
	if o.fastReg, err = inf.AddEventHandlerWithOptions(o.fast, informer.HandlerOptions{Name: "fast"}); err != nil {
		return nil, err
	}
	if o.slowReg, err = inf.AddEventHandlerWithOptions(o.slow, informer.HandlerOptions{Name: "slow"}); err != nil {
		return nil, err
	}
	return o, nil
}

// observedLW is the informer's ListerWatcher: the resource client, counting
// every list or watch-list (the initial one and each re-list) and every
// watch (each reconnect), and putting a gate between each watch and the reflector.
type observedLW struct {
	rc           *client.ResourceClient
	stripTimeout bool
	gate         *gate

	lists, listPages, watches, watchEvents atomic.Int64
}

// List counts a list request. A paged list is several requests; only the
// first page (no continue token) counts as a re-list.
func (lw *observedLW) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	lw.listPages.Add(1)
	if opts.Continue == "" {
		lw.lists.Add(1)
	}
	return lw.rc.List(ctx, opts)
}

// Watch counts a watch request and wraps the watch in the gate. A
// watch-list (sendInitialEvents) fetches the whole state again, so it also
// counts as a re-list.
func (lw *observedLW) Watch(ctx context.Context, opts api.ListOptions) (client.Watcher, error) {
	lw.watches.Add(1)
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		lw.lists.Add(1)
	}
	if lw.stripTimeout {
		opts.TimeoutSeconds = nil
	}
	w, err := lw.rc.Watch(ctx, opts)
	if err != nil {
		return nil, err
	}
	return newGatedWatcher(w, lw.gate, &lw.watchEvents), nil
}

// gate lets events through while open. Closing it makes the watch's reader
// stop reading, as a client that stopped consuming does: the bytes pile up
// in the socket, then in the server's queue for this watcher.
type gate struct {
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
}

func newGate() *gate {
	g := &gate{open: make(chan struct{})}
	close(g.open)
	return g
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *gate) reopen() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}

func (g *gate) opened() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// gatedWatcher relays a watch's events through a gate.
type gatedWatcher struct {
	inner  client.Watcher
	out    chan api.Event
	done   chan struct{}
	once   sync.Once
	g      *gate
	events *atomic.Int64
}

func newGatedWatcher(inner client.Watcher, g *gate, events *atomic.Int64) *gatedWatcher {
	w := &gatedWatcher{inner: inner, out: make(chan api.Event), done: make(chan struct{}), g: g, events: events}
	go w.relay()
	return w
}

func (w *gatedWatcher) relay() {
	defer close(w.out)
	in := w.inner.ResultChan()
	for {
		select {
		case <-w.g.opened():
		case <-w.done:
			return
		}
		var ev api.Event
		var ok bool
		select {
		case ev, ok = <-in:
			if !ok {
				return
			}
		case <-w.done:
			return
		}
		if ev.Type != api.Bookmark {
			w.events.Add(1)
		}
		select {
		case w.out <- ev:
		case <-w.done:
			return
		}
	}
}

// ResultChan delivers the events that passed the gate.
func (w *gatedWatcher) ResultChan() <-chan api.Event { return w.out }

// Stop stops the inner watch; the relay then ends and closes ResultChan.
func (w *gatedWatcher) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.inner.Stop()
	})
}

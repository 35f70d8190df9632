package informer

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/fifo"
	"listwatch/internal/clock"
	"listwatch/narrate"
	"listwatch/reflector"
)

// SharedIndexInformer keeps an indexed local cache of one resource and
// tells any number of handlers about every change (client-go's
// sharedIndexInformer in tools/cache/shared_informer.go).
//
// Inside, at Run: a Reflector lists and watches the server and writes
// deltas into a queue; a process loop pops them and hands them to
// handleDeltas, which first updates the Indexer and then gives each
// handler's listener a notification:
//
//	Reflector ──► queue (AtomicFIFO, RealFIFO or DeltaFIFO) ──Pop──► handleDeltas ──► Indexer
//	                                                          └──► sharedProcessor ──► listener ──► handler
//
// One informer per resource is meant to be shared by every part of a
// program that needs it (see Factory): one watch, one cache, many handlers.
type SharedIndexInformer struct {
	lw        reflector.ListerWatcher
	opts      Options
	name      string
	indexer   *Indexer
	processor *sharedProcessor
	clock     clock.Clock
	tr        *narrate.Tracer

	// synced is closed once the queue has delivered the first list.
	synced     chan struct{}
	syncedOnce sync.Once

	// mu guards the lifecycle and configuration below.
	mu                sync.Mutex
	started, stopped  bool
	resyncCheckPeriod time.Duration
	watchErrorHandler func(*reflector.Reflector, error)
	reflector         *reflector.Reflector
	handlerSeq        int

	// blockDeltas is held while deltas are processed, and while a late
	// handler is handed the cache, so it sees every object exactly once:
	// either in its synthetic adds or as a later notification.
	blockDeltas sync.Mutex
}

// NewSharedIndexInformer returns an informer for what lw lists and
// watches. It does nothing until Run.
func NewSharedIndexInformer(lw reflector.ListerWatcher, opts Options) (*SharedIndexInformer, error) {
	if lw == nil {
		return nil, errors.New("informer: nil ListerWatcher")
	}
	switch opts.Queue {
	case "", AtomicFIFO, RealFIFO, DeltaFIFO:
	default:
		return nil, fmt.Errorf("informer: unknown queue kind %q (want one of %q)", opts.Queue, QueueKinds())
	}
	for name, fn := range opts.Indexers {
		if fn == nil {
			return nil, fmt.Errorf("informer: index %q has a nil IndexFunc", name)
		}
	}
	if opts.ResyncPeriod < 0 {
		return nil, fmt.Errorf("informer: negative resync period %v", opts.ResyncPeriod)
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	name := opts.Reflector.Name
	if name == "" {
		name = "informer"
	}
	return &SharedIndexInformer{
		lw:                lw,
		opts:              opts,
		name:              name,
		indexer:           NewIndexer(opts.Indexers, opts.Tracer),
		processor:         newSharedProcessor(opts.Clock, opts.Tracer),
		clock:             opts.Clock,
		tr:                opts.Tracer,
		synced:            make(chan struct{}),
		resyncCheckPeriod: opts.ResyncPeriod,
	}, nil
}

// Run starts the informer and blocks until ctx is done; by then every
// goroutine it started has ended (a handler call in progress is waited
// for). An informer runs once: a second Run returns at once.
func (s *SharedIndexInformer) Run(ctx context.Context) {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		s.tr.Printf(narrate.Processor, "%s: Run called again; an informer runs once", s.name)
		return
	}
	q := s.newQueue()
	ropts := s.opts.Reflector
	ropts.ResyncPeriod = s.resyncCheckPeriod
	ropts.ShouldResync = s.processor.shouldResync
	ropts.Clock = s.clock
	ropts.Tracer = s.tr
	r := reflector.New(s.lw, &queueFeeder{s: s, q: q}, ropts)
	if s.watchErrorHandler != nil {
		r.SetWatchErrorHandler(s.watchErrorHandler)
	}
	s.reflector = r
	s.started = true
	s.mu.Unlock()

	// The processor gets its own context and stops strictly after the
	// controller, so no notification is ever sent to a stopped listener.
	procCtx, stopProcessor := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() { s.processor.run(procCtx) })
	defer func() {
		s.mu.Lock()
		s.stopped = true // no handler may join from now on
		s.mu.Unlock()
		stopProcessor()
		wg.Wait()
	}()
	s.runController(ctx, r, q)
}

// runController is client-go's controller.Run: the Reflector fills the
// queue in one goroutine while this one pops it.
func (s *SharedIndexInformer) runController(ctx context.Context, r *reflector.Reflector, q fifo.Queue) {
	var wg sync.WaitGroup
	wg.Go(func() { r.Run(ctx) })
	defer wg.Wait()
	defer q.Close()
	for {
		err := q.Pop(ctx, s.handleDeltas)
		s.checkSynced(q)
		switch {
		case err == nil:
		case errors.Is(err, fifo.ErrClosed) || ctx.Err() != nil:
			return
		default:
			s.tr.Printf(narrate.Indexer, "%s: processing deltas: %v", s.name, err)
		}
	}
}

// newQueue builds the queue as client-go's newQueueFIFO does: the atomic
// queue is not given the cache (it never reads it), the older two are.
func (s *SharedIndexInformer) newQueue() fifo.Queue {
	qopts := fifo.Options{KnownObjects: s.indexer, Tracer: s.tr}
	if s.opts.NewQueue != nil {
		if q := s.opts.NewQueue(qopts); q != nil {
			return q
		}
		s.tr.Printf(narrate.Processor, "%s: NewQueue returned nil; using the default queue", s.name)
	}
	switch s.opts.Queue {
	case DeltaFIFO:
		return fifo.NewDeltaFIFO(qopts)
	case RealFIFO:
		return fifo.NewRealFIFO(qopts)
	}
	return fifo.NewRealFIFO(fifo.Options{Atomic: true, UnlockWhileProcessing: true, Tracer: s.tr})
}

// checkSynced closes synced once the queue says the first list is through.
func (s *SharedIndexInformer) checkSynced(q fifo.Queue) {
	if q.HasSynced() {
		s.syncedOnce.Do(func() {
			close(s.synced)
			s.tr.Printf(narrate.Processor, "%s: synced (%d cached)", s.name, s.indexer.Len())
		})
	}
}

// handleDeltas is client-go's sharedIndexInformer.handleDeltas: apply the
// deltas to the Indexer and hand each resulting call to the processor,
// with blockDeltas held so a handler joining meanwhile sees each object
// exactly once.
func (s *SharedIndexInformer) handleDeltas(deltas fifo.Deltas, isInInitialList bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	return ProcessDeltas(s.indexer, distributor{s.processor}, deltas, isInInitialList)
}

// distributor is the ResourceEventHandler the informer gives
// ProcessDeltas: each call becomes a notification for every listener
// (client-go's sharedIndexInformer OnAdd, OnUpdate, OnDelete).
type distributor struct{ p *sharedProcessor }

func (d distributor) OnAdd(obj *api.Object, isInInitialList bool) {
	d.p.distribute(notification{kind: addNotification, newObj: obj, isInInitialList: isInInitialList}, false)
}

// OnUpdate with the same resourceVersion on both sides is a resync (or a
// re-list re-delivering an unchanged object): only handlers due for a
// resync want it.
func (d distributor) OnUpdate(old, obj *api.Object) {
	isSync := old.Metadata.ResourceVersion == obj.Metadata.ResourceVersion
	d.p.distribute(notification{kind: updateNotification, oldObj: old, newObj: obj}, isSync)
}

func (d distributor) OnDelete(obj any) {
	d.p.distribute(notification{kind: deleteNotification, deleted: obj}, false)
}

// AddEventHandler registers h with the informer's default resync period.
// A handler added after Run first receives a synthetic OnAdd (with
// isInInitialList true) for every object already cached.
func (s *SharedIndexInformer) AddEventHandler(h ResourceEventHandler) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(h, HandlerOptions{})
}

// AddEventHandlerWithResyncPeriod registers h with its own resync period.
func (s *SharedIndexInformer) AddEventHandlerWithResyncPeriod(h ResourceEventHandler, resync time.Duration) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithOptions(h, HandlerOptions{ResyncPeriod: &resync})
}

// AddEventHandlerWithOptions registers h. Resync periods follow client-go:
// at least one second; if the informer was built without a resync period
// no handler gets resyncs; a handler added before Run with a shorter
// period than the others makes the informer check that often; one added
// after Run gets at least the informer's check period.
func (s *SharedIndexInformer) AddEventHandlerWithOptions(h ResourceEventHandler, opts HandlerOptions) (ResourceEventHandlerRegistration, error) {
	if h == nil {
		return nil, errors.New("informer: nil handler")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, fmt.Errorf("informer %s: handler not added, the informer has stopped", s.name)
	}
	resync := s.opts.ResyncPeriod
	if opts.ResyncPeriod != nil {
		resync = *opts.ResyncPeriod
	}
	if resync > 0 {
		resync = max(resync, minimumResyncPeriod)
		if resync < s.resyncCheckPeriod {
			if s.started {
				resync = s.resyncCheckPeriod
			} else {
				s.resyncCheckPeriod = resync
				s.processor.resyncCheckPeriodChanged(s.effectiveResync)
			}
		}
	}
	s.handlerSeq++
	name := opts.Name
	if name == "" {
		name = fmt.Sprintf("handler-%d", s.handlerSeq)
	}
	l := newProcessorListener(name, h, resync, s.effectiveResync(resync), s.clock.Now(), s.synced, s.tr)
	if !s.started {
		s.processor.addListener(l)
		return l, nil
	}

	// Joining a running informer: stop the deltas, hand the newcomer the
	// whole cache as adds, then let the deltas flow again.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	items := s.indexer.List()
	for range items {
		l.sync.start() // counted before watchSynced can possibly run
	}
	processorRunning := s.processor.addListener(l)
	for _, obj := range items {
		l.pending.Add(1)
		l.addCh <- notification{kind: addNotification, newObj: obj, isInInitialList: true}
	}
	if processorRunning {
		s.processor.startWatchSynced(l)
	}
	s.tr.Printf(narrate.Processor, "%s: handler %s joined late: %d synthetic adds", s.name, name, len(items))
	return l, nil
}

// effectiveResync is client-go's determineResyncPeriod.
func (s *SharedIndexInformer) effectiveResync(requested time.Duration) time.Duration {
	switch {
	case requested == 0 || s.resyncCheckPeriod == 0:
		return 0
	case requested < s.resyncCheckPeriod:
		return s.resyncCheckPeriod
	default:
		return requested
	}
}

// RemoveEventHandler unregisters a handler. Notifications still waiting
// for it are dropped; a call in progress finishes. Removing twice is fine.
func (s *SharedIndexInformer) RemoveEventHandler(reg ResourceEventHandlerRegistration) error {
	l, ok := reg.(*processorListener)
	if !ok {
		return fmt.Errorf("informer: %T is not a registration from this package", reg)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	s.processor.removeListener(l)
	return nil
}

// HasSynced is true once the first list has been delivered to the cache.
func (s *SharedIndexInformer) HasSynced() bool {
	select {
	case <-s.synced:
		return true
	default:
		return false
	}
}

// Synced is closed when HasSynced turns true.
func (s *SharedIndexInformer) Synced() <-chan struct{} { return s.synced }

// GetIndexer returns the cache.
func (s *SharedIndexInformer) GetIndexer() *Indexer { return s.indexer }

// GetStore returns the cache; the same as GetIndexer.
func (s *SharedIndexInformer) GetStore() *Indexer { return s.indexer }

// AddIndexers adds indexes; refused once the cache holds objects.
func (s *SharedIndexInformer) AddIndexers(indexers Indexers) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return fmt.Errorf("informer %s: indexers not added, the informer has stopped", s.name)
	}
	return s.indexer.AddIndexers(indexers)
}

// SetWatchErrorHandler installs the Reflector's error handler (see
// reflector.Reflector.SetWatchErrorHandler). Only before Run.
func (s *SharedIndexInformer) SetWatchErrorHandler(h func(r *reflector.Reflector, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return fmt.Errorf("informer %s: already started", s.name)
	}
	s.watchErrorHandler = h
	return nil
}

// LastStoreSyncResourceVersion is the resourceVersion the cache has been
// brought up to: the last list's, object's or bookmark's it applied
// (client-go's Store.LastStoreSyncResourceVersion). Unlike the Reflector's
// LastSyncResourceVersion it never runs ahead of what handlers can read.
// Like client-go it is "" unless the queue is AtomicFIFO: only that queue
// hands the cache whole lists and bookmarks in the order they arrived
// (DeltaFIFO reorders, and neither older queue passes bookmarks on).
func (s *SharedIndexInformer) LastStoreSyncResourceVersion() string {
	if s.opts.NewQueue != nil || (s.opts.Queue != "" && s.opts.Queue != AtomicFIFO) {
		return ""
	}
	return s.indexer.ResourceVersion()
}

// LastSyncResourceVersion is the Reflector's; "" before Run.
func (s *SharedIndexInformer) LastSyncResourceVersion() string {
	s.mu.Lock()
	r := s.reflector
	s.mu.Unlock()
	if r == nil {
		return ""
	}
	return r.LastSyncResourceVersion()
}

// Backlog returns, for each registered handler by name, how many
// notifications wait for it. client-go has no such gauge; it is here so a
// slow handler's growing backlog can be seen.
func (s *SharedIndexInformer) Backlog() map[string]int { return s.processor.backlog() }

// HasStarted reports whether Run was called.
func (s *SharedIndexInformer) HasStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// IsStopped reports whether Run has returned (or is returning).
func (s *SharedIndexInformer) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

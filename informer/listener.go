package informer

import (
	"sync"
	"sync/atomic"
	"time"

	"listwatch/narrate"
)

// initialRingSize is the starting capacity of each listener's buffer
// (client-go's initialBufferSize).
const initialRingSize = 1024

// ResourceEventHandlerRegistration is what AddEventHandler returns: the
// handle to remove the handler again, and to ask whether it has caught up.
type ResourceEventHandlerRegistration interface {
	// Name is the handler's name in narration and Backlog.
	Name() string
	// HasSynced is true once the informer has synced and this handler has
	// been handed every object of the initial list.
	HasSynced() bool
	// Synced is closed when HasSynced turns true.
	Synced() <-chan struct{}
	// Pending is how many notifications wait for this handler: its
	// backlog. A slow handler's backlog grows; the others' do not.
	Pending() int
}

// processorListener relays notifications to one handler (client-go's
// processorListener). Three goroutines run per listener, as in client-go:
// pop and run, with an unbounded ring between them, carry notifications
// from the informer to the handler:
//
//	add ──addCh──► pop [ring] ──nextCh──► run ──► handler.OnAdd/OnUpdate/OnDelete
//
// add hands a notification to pop, which is always ready to take it: it
// either passes it straight on to run or, if run is busy in the handler,
// parks it in the ring. So a slow handler only makes its own ring grow; it
// never blocks the informer, and never delays another handler. The third,
// watchSynced, waits for the informer to sync and then tells the
// listener's sync tracker, so HasSynced can also wait for this handler.
type processorListener struct {
	name    string
	handler ResourceEventHandler
	tr      *narrate.Tracer

	addCh  chan notification
	nextCh chan notification
	// popDone is closed when pop returns; runDone when run returns.
	popDone chan struct{}
	runDone chan struct{}
	ring    ring // owned by pop

	// pending counts notifications added but not yet handed to the handler.
	pending atomic.Int64
	sync    *syncTracker
	// upstreamSynced is the informer's synced channel.
	upstreamSynced <-chan struct{}

	// resync bookkeeping, guarded by resyncMu. syncing is guarded by the
	// processor's lock.
	resyncMu              sync.Mutex
	requestedResyncPeriod time.Duration
	resyncPeriod          time.Duration
	nextResync            time.Time
	syncing               bool
}

func newProcessorListener(name string, h ResourceEventHandler, requestedResync, resync time.Duration,
	now time.Time, upstreamSynced <-chan struct{}, tr *narrate.Tracer) *processorListener {
	l := &processorListener{
		name:                  name,
		handler:               h,
		tr:                    tr,
		addCh:                 make(chan notification),
		nextCh:                make(chan notification),
		popDone:               make(chan struct{}),
		runDone:               make(chan struct{}),
		ring:                  newRing(initialRingSize),
		sync:                  newSyncTracker(),
		upstreamSynced:        upstreamSynced,
		requestedResyncPeriod: requestedResync,
		resyncPeriod:          resync,
	}
	l.determineNextResync(now)
	return l
}

// Name implements ResourceEventHandlerRegistration.
func (l *processorListener) Name() string { return l.name }

// HasSynced implements ResourceEventHandlerRegistration.
func (l *processorListener) HasSynced() bool { return l.sync.hasSynced() }

// Synced implements ResourceEventHandlerRegistration.
func (l *processorListener) Synced() <-chan struct{} { return l.sync.done }

// Pending implements ResourceEventHandlerRegistration.
func (l *processorListener) Pending() int { return int(l.pending.Load()) }

// add queues n for the handler. The caller must make sure pop is running
// (the processor does).
func (l *processorListener) add(n notification) {
	if n.kind == addNotification && n.isInInitialList {
		l.sync.start()
	}
	l.pending.Add(1)
	l.addCh <- n
}

// pop moves notifications from addCh to nextCh, through the ring while the
// handler is busy. It returns when addCh is closed, dropping whatever is
// still buffered (the handler is being removed or the informer stopped).
func (l *processorListener) pop() {
	defer close(l.popDone)
	defer close(l.nextCh)          // tells run to stop
	var nextCh chan<- notification // nil (disabled) while there is nothing to send
	var next notification
	for {
		select {
		case nextCh <- next:
			var ok bool
			if next, ok = l.ring.read(); !ok {
				nextCh = nil
			}
		case n, ok := <-l.addCh:
			if !ok {
				return
			}
			if nextCh == nil {
				next, nextCh = n, l.nextCh // fast path: straight through
			} else {
				l.ring.write(n)
			}
		}
	}
}

// run calls the handler for each notification, one at a time.
func (l *processorListener) run() {
	defer close(l.runDone)
	for n := range l.nextCh {
		l.pending.Add(-1)
		if l.tr.Enabled() {
			l.tr.Printf(narrate.Handler, "%s %s", l.name, n.describe())
		}
		switch n.kind {
		case addNotification:
			l.handler.OnAdd(n.newObj, n.isInInitialList)
			if n.isInInitialList {
				l.sync.finished()
			}
		case updateNotification:
			l.handler.OnUpdate(n.oldObj, n.newObj)
		case deleteNotification:
			l.handler.OnDelete(n.deleted)
		}
	}
}

// watchSynced tells the sync tracker when the informer has synced.
func (l *processorListener) watchSynced() {
	select {
	case <-l.upstreamSynced:
		l.sync.upstreamHasSynced()
	case <-l.popDone:
	}
}

// shouldResync reports whether this handler is due for a resync at now.
func (l *processorListener) shouldResync(now time.Time) bool {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	return l.resyncPeriod > 0 && !now.Before(l.nextResync)
}

func (l *processorListener) determineNextResync(now time.Time) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.nextResync = now.Add(l.resyncPeriod)
}

func (l *processorListener) setResyncPeriod(d time.Duration) {
	l.resyncMu.Lock()
	defer l.resyncMu.Unlock()
	l.resyncPeriod = d
}

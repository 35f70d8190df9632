package informer

import (
	"context"
	"slices"
	"sync"
	"time"

	"listwatch/internal/clock"
	"listwatch/narrate"
)

// sharedProcessor fans the informer's notifications out to its listeners
// (client-go's sharedProcessor). Ordinary notifications go to every
// listener; resync notifications only to the listeners due for a resync,
// as decided by shouldResync at the last resync tick.
type sharedProcessor struct {
	mu sync.RWMutex
	// cond wakes a distribute that arrived before the listeners were
	// started; it waits holding the read lock.
	cond      *sync.Cond
	started   bool
	listeners []*processorListener // in registration order
	clock     clock.Clock
	tr        *narrate.Tracer
	wg        sync.WaitGroup
}

func newSharedProcessor(c clock.Clock, tr *narrate.Tracer) *sharedProcessor {
	p := &sharedProcessor{clock: c, tr: tr}
	p.cond = sync.NewCond(p.mu.RLocker())
	return p
}

// addListener registers l, starting its goroutines if the processor runs.
// It reports whether it was running.
func (p *sharedProcessor) addListener(l *processorListener) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.listeners = append(p.listeners, l)
	if p.started {
		// Not watchSynced yet: a late listener must first be handed the
		// current cache, or it could report synced before seeing it.
		p.wg.Go(l.run)
		p.wg.Go(l.pop)
	}
	return p.started
}

// startWatchSynced starts l's watchSynced goroutine if the processor runs.
func (p *sharedProcessor) startWatchSynced(l *processorListener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started && slices.Contains(p.listeners, l) {
		p.wg.Go(l.watchSynced)
	}
}

// removeListener unregisters l and stops its goroutines; notifications
// still buffered for it are dropped. Removing twice is not an error.
func (p *sharedProcessor) removeListener(l *processorListener) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.Index(p.listeners, l)
	if i < 0 {
		return
	}
	p.listeners = slices.Delete(p.listeners, i, i+1)
	if p.started {
		close(l.addCh)
	}
	p.tr.Printf(narrate.Processor, "removed handler %s (%d notifications dropped)", l.name, l.Pending())
}

// distribute hands n to the listeners: to all of them, or for a resync
// only to those due for one. It never waits for a handler, only for pop
// goroutines that are always ready.
func (p *sharedProcessor) distribute(n notification, isSync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for !p.started && len(p.listeners) > 0 {
		p.cond.Wait()
	}
	for _, l := range p.listeners {
		if isSync && !l.syncing {
			continue
		}
		// Narrate before handing over, so this line always precedes the
		// handler's own.
		if p.tr.Enabled() {
			p.tr.Printf(narrate.Processor, "dispatched %s to handler %s (backlog %d)", n.describe(), l.name, l.Pending()+1)
		}
		l.add(n)
	}
}

// run starts every listener and, once ctx is done, stops them all and
// waits for their goroutines (including a handler call in progress).
func (p *sharedProcessor) run(ctx context.Context) {
	p.mu.Lock()
	for _, l := range p.listeners {
		p.wg.Go(l.watchSynced)
		p.wg.Go(l.run)
		p.wg.Go(l.pop)
	}
	p.started = true
	p.cond.Broadcast()
	p.mu.Unlock()

	<-ctx.Done()

	p.mu.Lock()
	for _, l := range p.listeners {
		close(l.addCh) // pop stops, then run
	}
	p.listeners = nil
	p.started = false
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// shouldResync marks which listeners are due for a resync now and reports
// whether any is. The Reflector's resync timer asks it.
func (p *sharedProcessor) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	any := false
	var due []string
	for _, l := range p.listeners {
		l.syncing = l.shouldResync(now)
		if l.syncing {
			any = true
			due = append(due, l.name)
			l.determineNextResync(now)
		}
	}
	if any {
		p.tr.Printf(narrate.Processor, "resync due for handlers %v", due)
	}
	return any
}

// resyncCheckPeriodChanged re-derives every listener's resync period after
// the informer's check period shrank.
func (p *sharedProcessor) resyncCheckPeriodChanged(effective func(requested time.Duration) time.Duration) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, l := range p.listeners {
		l.setResyncPeriod(effective(l.requestedResyncPeriod))
	}
}

// backlog returns each listener's pending count, by name.
func (p *sharedProcessor) backlog() map[string]int {
	p.mu.RLock()
	defer p.mu.RUnlock()
	out := make(map[string]int, len(p.listeners))
	for _, l := range p.listeners {
		out[l.name] = l.Pending()
	}
	return out
}

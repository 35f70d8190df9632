package workqueue

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"listwatch/narrate"
)

// DelayingInterface is a queue that can also add an item later: the retry
// half of a controller ("try again in 5 s"). It is client-go's
// TypedDelayingInterface.
type DelayingInterface[T comparable] interface {
	Interface[T]
	// AddAfter adds item once d has passed; d <= 0 adds it now. Asking
	// again for an item already waiting keeps the earlier time.
	AddAfter(item T, d time.Duration)
}

// DelayingQueue is a Queue plus a waiting room. Items given to AddAfter sit
// in a min-heap ordered by ready time; one goroutine sleeps on a timer for
// the earliest and moves items into the queue as they come due. The
// goroutine ends at ShutDown, so a DelayingQueue must be shut down.
//
// It is client-go's delayingType (delaying_queue.go).
type DelayingQueue[T comparable] struct {
	*Queue[T]

	adds     chan waiting[T]
	stop     chan struct{}
	stopOnce sync.Once
	loopDone sync.WaitGroup
}

var _ DelayingInterface[string] = (*DelayingQueue[string])(nil)

// NewDelaying returns a delaying queue and starts its timer goroutine.
func NewDelaying[T comparable](cfg Config) *DelayingQueue[T] {
	q := &DelayingQueue[T]{
		Queue: New[T](cfg),
		// Buffered so a burst of AddAfter calls does not wait on the loop
		// (client-go buffers 1000 too).
		adds: make(chan waiting[T], 1000),
		stop: make(chan struct{}),
	}
	q.loopDone.Add(1)
	go q.loop()
	return q
}

// AddAfter adds item to the queue once d has passed.
func (q *DelayingQueue[T]) AddAfter(item T, d time.Duration) {
	if q.ShuttingDown() {
		return
	}
	q.mu.Lock()
	q.metrics.retries++
	if d > 0 {
		q.metrics.waiting++ // counted before it is sent: never in no count at all
	}
	q.mu.Unlock()
	if d <= 0 {
		q.Add(item)
		return
	}
	q.cfg.Tracer.Printf(narrate.Workqueue, "%s: %v waits %v", q.name, item, d)
	select {
	case q.adds <- waiting[T]{item: item, readyAt: q.cfg.Clock.Now().Add(d)}:
	case <-q.stop:
		q.leftWaitingRoom()
	}
}

// moveIntoQueue adds an item that came due and counts it out of the waiting
// room under one lock, so no reader of the metrics sees it in both counts
// or in neither (a worker that already took it would otherwise see the
// queue still waiting).
func (q *DelayingQueue[T]) moveIntoQueue(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(item)
	q.metrics.waiting = max(q.metrics.waiting-1, 0) // 0 once dropWaitingRoom ran
}

// leftWaitingRoom counts one item out of the waiting room without adding
// it: it merged into an earlier wait for the same item, or was dropped at
// shutdown.
func (q *DelayingQueue[T]) leftWaitingRoom() {
	q.mu.Lock()
	q.metrics.waiting = max(q.metrics.waiting-1, 0) // 0 once dropWaitingRoom ran
	q.mu.Unlock()
}

// dropWaitingRoom counts the waiting room empty once the timer goroutine
// has stopped: its items are dropped, never added.
func (q *DelayingQueue[T]) dropWaitingRoom() {
	q.mu.Lock()
	q.metrics.waiting = 0
	q.mu.Unlock()
}

// ShutDown shuts the queue down and stops the timer goroutine; items still
// waiting for their time are dropped.
func (q *DelayingQueue[T]) ShutDown() {
	q.Queue.ShutDown()
	q.stopOnce.Do(func() { close(q.stop) })
	q.loopDone.Wait()
	q.dropWaitingRoom()
}

// ShutDownWithDrain stops the timer goroutine and drains the queue (see
// Queue.ShutDownWithDrain).
func (q *DelayingQueue[T]) ShutDownWithDrain(ctx context.Context) error {
	q.stopOnce.Do(func() { close(q.stop) })
	q.loopDone.Wait()
	q.dropWaitingRoom()
	return q.Queue.ShutDownWithDrain(ctx)
}

// loop owns the heap: no lock needed, every change arrives on q.adds.
func (q *DelayingQueue[T]) loop() {
	defer q.loopDone.Done()
	h := &waitHeap[T]{}
	byItem := map[T]*waiting[T]{}
	var timer interface {
		C() <-chan time.Time
		Stop() bool
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		// Move everything due into the queue.
		now := q.cfg.Clock.Now()
		for h.Len() > 0 && !(*h)[0].readyAt.After(now) {
			w := heap.Pop(h).(*waiting[T])
			delete(byItem, w.item)
			q.moveIntoQueue(w.item)
		}
		// Sleep until the earliest is due, or until something new arrives.
		var due <-chan time.Time
		if timer != nil {
			timer.Stop()
			timer = nil
		}
		if h.Len() > 0 {
			timer = q.cfg.Clock.NewTimer((*h)[0].readyAt.Sub(now))
			due = timer.C()
		}
		select {
		case <-q.stop:
			return
		case <-due:
		case w := <-q.adds:
			q.insert(h, byItem, w)
			// Take the rest of a burst before re-arming the timer.
			for more := true; more; {
				select {
				case w := <-q.adds:
					q.insert(h, byItem, w)
				default:
					more = false
				}
			}
		}
	}
}

func (q *DelayingQueue[T]) insert(h *waitHeap[T], byItem map[T]*waiting[T], w waiting[T]) {
	if old, ok := byItem[w.item]; ok {
		if w.readyAt.Before(old.readyAt) {
			old.readyAt = w.readyAt
			heap.Fix(h, old.index)
		}
		q.leftWaitingRoom() // one wait per item: this one merged into it
		return
	}
	e := &waiting[T]{item: w.item, readyAt: w.readyAt}
	heap.Push(h, e)
	byItem[w.item] = e
}

// waiting is an item in the waiting room.
type waiting[T any] struct {
	item    T
	readyAt time.Time
	index   int // position in the heap, for heap.Fix
}

// waitHeap is a min-heap of waiting items by readyAt (container/heap).
type waitHeap[T any] []*waiting[T]

func (h waitHeap[T]) Len() int           { return len(h) }
func (h waitHeap[T]) Less(i, j int) bool { return h[i].readyAt.Before(h[j].readyAt) }
func (h waitHeap[T]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}

func (h *waitHeap[T]) Push(x any) {
	w := x.(*waiting[T])
	w.index = len(*h)
	*h = append(*h, w)
}

func (h *waitHeap[T]) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return w
}

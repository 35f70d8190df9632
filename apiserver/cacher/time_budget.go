package cacher

import (
	"sync"
	"time"
)

// The dispatcher's time budget, as in Kubernetes' storage/cacher
// time_budget.go: when a watcher's queue is full, the dispatcher may wait for
// it, but only out of a shared budget of at most 100 ms that refills at
// 50 ms per second. A watcher still full when the budget is spent is closed.
// So one stuck client costs every other watcher at most a short pause, and a
// steady stream of slow clients cannot hold the dispatcher back at all.
const (
	budgetRefillPerSecond = 50 * time.Millisecond
	budgetMax             = 100 * time.Millisecond
)

// timeBudget is the shared budget. It starts empty and fills with time.
type timeBudget struct {
	mu     sync.Mutex
	budget time.Duration
	last   time.Time
	now    func() time.Time
}

func newTimeBudget(now func() time.Time) *timeBudget {
	return &timeBudget{last: now(), now: now}
}

// takeAvailable hands out the whole budget accumulated so far.
func (t *timeBudget) takeAvailable() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if elapsed := now.Sub(t.last); elapsed > 0 {
		t.budget += time.Duration(elapsed.Seconds() * float64(budgetRefillPerSecond))
	}
	t.budget = min(t.budget, budgetMax)
	t.last = now
	b := t.budget
	t.budget = 0
	return b
}

// returnUnused gives back what a wait did not use.
func (t *timeBudget) returnUnused(unused time.Duration) {
	if unused <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.budget = min(t.budget+unused, budgetMax)
}

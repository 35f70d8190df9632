package handlers

import (
	"context"
	"runtime"
	"time"

	"listwatch/api"
)

// Big LISTs take turns to encode. Encoding a LIST of 50,000 objects keeps
// a core busy for tens of milliseconds, and Go's scheduler lets a busy
// goroutine run for 10 ms before it lets the next one have the core. With
// 64 such LISTs at once on 2 cores, every other request waited behind
// all of them in turn: a GET of one object took 0.3–0.5 s
// (docs/performance-limits.md).
// So a LIST of bigListItems objects or more waits for one of a few seats
// (one per CPU) before it encodes; the others wait in order, parked, and
// small requests find a core at once. The LISTs as a whole take as long as
// before (the CPUs were the limit), and each is answered sooner on average,
// since it no longer shares the CPUs with 63 others.
//
// kube-apiserver's API Priority and Fairness does this, and more: a LIST
// costs seats in proportion to the objects it will return (its work
// estimator, up to 10 seats), requests queue per priority level, and one
// that waits past its queue's wait limit gets 429.

// bigListItems is the size from which a LIST takes a seat.
const bigListItems = 1000

// maxListSeatWait bounds a LIST's wait for a seat: then it gets 429 with
// Retry-After, as kube-apiserver answers a request that waited its
// priority level's queue out (a quarter of the 60 s request timeout).
const maxListSeatWait = 15 * time.Second

// listSeats are the seats big LISTs encode in.
type listSeats struct {
	seats   chan struct{}
	maxWait time.Duration
}

// newListSeats makes one seat per CPU Go uses.
func newListSeats() *listSeats {
	return &listSeats{seats: make(chan struct{}, runtime.GOMAXPROCS(0)), maxWait: maxListSeatWait}
}

// take waits for a seat for a LIST of n items and returns its release; a
// small LIST needs none. It fails with the client's context error, or
// 429 once maxWait has passed.
func (s *listSeats) take(ctx context.Context, n int) (release func(), err error) {
	if n < bigListItems {
		return func() {}, nil
	}
	release = func() { <-s.seats }
	select {
	case s.seats <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(s.maxWait)
	defer t.Stop()
	select {
	case s.seats <- struct{}{}: // Go queues blocked senders in order: first come, first served
		return release, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, api.NewTooManyRequests("too many large lists in progress, please try again later", 1)
	}
}

package reflector

import (
	"sync"
	"time"

	"listwatch/internal/clock"
)

// backoffManager hands out the delays between attempts. It mirrors
// wait.Backoff.DelayWithReset as the Reflector uses it: exponential, capped,
// jittered, and forgiven after a quiet spell.
type backoffManager struct {
	cfg   Backoff
	clock clock.Clock
	rand  func() float64

	mu       sync.Mutex
	base     time.Duration // the next delay before jitter
	lastStep time.Time     // when a delay was last handed out; zero if never
}

func newBackoffManager(cfg Backoff, c clock.Clock, rand func() float64) *backoffManager {
	return &backoffManager{cfg: cfg, clock: c, rand: rand, base: cfg.Initial}
}

// next returns how long to wait now, and advances the backoff.
func (b *backoffManager) next() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	// A long quiet spell means the server is healthy again: the next
	// trouble starts over at the initial delay rather than at 30 s.
	// (client-go's reflector comment says "if we don't backoff for 2min,
	// assume API server is healthy and we reset the backoff".)
	if !b.lastStep.IsZero() && now.Sub(b.lastStep) > b.cfg.ResetAfter {
		b.base = b.cfg.Initial
	}
	b.lastStep = now
	d := b.base
	grown := time.Duration(float64(b.base) * b.cfg.Factor)
	if grown > b.cfg.Max || grown < b.base { // capped, or overflowed
		grown = b.cfg.Max
	}
	b.base = grown
	if b.cfg.Jitter > 0 {
		d += time.Duration(b.rand() * b.cfg.Jitter * float64(d))
	}
	return d
}

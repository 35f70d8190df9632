package clock

import "time"

// Clock tells the time and makes timers. Code that waits takes a Clock so
// that tests can substitute a Fake.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Since is Now().Sub(t).
	Since(t time.Time) time.Duration
	// After delivers the time on the returned channel once d has passed.
	// Prefer NewTimer where the wait may be abandoned, so it can be stopped.
	After(d time.Duration) <-chan time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
	// NewTicker returns a ticker that fires every d. d must be positive.
	NewTicker(d time.Duration) Ticker
	// AfterFunc calls f in its own goroutine once d has passed, as
	// time.AfterFunc; the returned Timer's C is nil. It is
	// k8s.io/utils/clock's WithDelayedExecution.AfterFunc.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a single-shot timer, as time.Timer.
type Timer interface {
	// C delivers the time when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it was active.
	Stop() bool
	// Reset re-arms the timer to fire after d; it reports whether it was
	// active.
	Reset(d time.Duration) bool
}

// Ticker fires repeatedly, as time.Ticker.
type Ticker interface {
	// C delivers the time at every tick. Ticks are dropped, not queued,
	// when the reader falls behind.
	C() <-chan time.Time
	// Stop turns the ticker off.
	Stop()
}

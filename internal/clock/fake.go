package clock

import (
	"context"
	"slices"
	"sync"
	"time"
)

// WaiterKind says what created a Waiter.
type WaiterKind string

// The kinds of waiter a Fake tracks.
const (
	KindAfter  WaiterKind = "after"
	KindTimer  WaiterKind = "timer"
	KindTicker WaiterKind = "ticker"
	// KindAfterFunc is a function waiting to be called (AfterFunc).
	KindAfterFunc WaiterKind = "afterfunc"
)

// Waiter is a snapshot of one pending timer, ticker or After on a Fake.
type Waiter struct {
	Kind WaiterKind
	// Duration is what the waiter asked for: After(d), NewTimer(d),
	// Reset(d) or the ticker's period.
	Duration time.Duration
	// Deadline is when it fires next.
	Deadline time.Time
	// Arming counts every NewTimer, After, AfterFunc, NewTicker and Reset on
	// this clock, so a test can tell a timer re-armed with the same duration
	// from the one it replaced (and so know the code under test has read
	// the time it armed from).
	Arming uint64
}

// Fake is a Clock that moves only when told to. Timers fire, in deadline
// order, when Step or SetTime moves the time to or past their deadline.
// It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*fakeWaiter
	armings uint64 // how many waiters were armed: Waiter.Arming
	// changed is closed and replaced whenever the set of waiters changes,
	// so BlockUntil-style calls wake up without polling.
	changed chan struct{}
}

var _ Clock = (*Fake)(nil)

type fakeWaiter struct {
	clock    *Fake
	kind     WaiterKind
	duration time.Duration
	deadline time.Time
	arming   uint64
	c        chan time.Time
	fn       func() // KindAfterFunc: called, in a goroutine, instead of sending on c
}

// NewFake returns a Fake clock reading t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// After returns a channel that receives the fake time once d has passed.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	return f.add(KindAfter, d).c
}

// NewTimer returns a timer that fires once the fake time passes d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	return &fakeTimer{w: f.add(KindTimer, d)}
}

// NewTicker returns a ticker firing every d of fake time. A non-positive d
// is raised to one nanosecond rather than panicking.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		d = time.Nanosecond
	}
	return &fakeTicker{w: f.add(KindTicker, d)}
}

// AfterFunc calls fn, in a goroutine of its own, once the fake time passes
// d. The returned Timer stops or re-arms it; its C is nil.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	return &fakeTimer{w: f.addFunc(d, fn)}
}

func (f *Fake) add(kind WaiterKind, d time.Duration) *fakeWaiter {
	return f.addWaiter(&fakeWaiter{clock: f, kind: kind, duration: d, c: make(chan time.Time, 1)})
}

func (f *Fake) addFunc(d time.Duration, fn func()) *fakeWaiter {
	return f.addWaiter(&fakeWaiter{clock: f, kind: KindAfterFunc, duration: d, fn: fn})
}

func (f *Fake) addWaiter(w *fakeWaiter) *fakeWaiter {
	slowArming()
	f.mu.Lock()
	defer f.mu.Unlock()
	w.deadline = f.now.Add(w.duration)
	f.armings++
	w.arming = f.armings
	if w.duration <= 0 && w.kind != KindTicker {
		// Like time.NewTimer(0): fires straight away.
		w.fire(f.now)
		return w
	}
	f.waiters = append(f.waiters, w)
	f.notifyLocked()
	return w
}

// remove takes w off the waiting list and reports whether it was there.
func (f *Fake) remove(w *fakeWaiter) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.removeLocked(w)
}

func (f *Fake) removeLocked(w *fakeWaiter) bool {
	i := slices.Index(f.waiters, w)
	if i < 0 {
		return false
	}
	f.waiters = slices.Delete(f.waiters, i, i+1)
	f.notifyLocked()
	return true
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Step moves the clock forward by d and fires every waiter now due.
func (f *Fake) Step(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now.Add(d))
}

// SetTime moves the clock to t and fires every waiter now due. Moving
// backwards fires nothing.
func (f *Fake) SetTime(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

func (f *Fake) setLocked(t time.Time) {
	f.now = t
	// Fire in deadline order, so a test stepping past several timers sees
	// them fire as the real clock would order them.
	slices.SortStableFunc(f.waiters, func(a, b *fakeWaiter) int { return a.deadline.Compare(b.deadline) })
	kept := f.waiters[:0]
	fired := false
	for _, w := range f.waiters {
		if w.deadline.After(t) {
			kept = append(kept, w)
			continue
		}
		fired = true
		w.fire(t)
		if w.kind == KindTicker {
			for !w.deadline.After(t) {
				w.deadline = w.deadline.Add(w.duration)
			}
			kept = append(kept, w)
		}
	}
	clear(f.waiters[len(kept):])
	f.waiters = kept
	if fired {
		f.notifyLocked()
	}
}

// Waiters returns a snapshot of the pending waiters, earliest deadline
// first.
func (f *Fake) Waiters() []Waiter {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snapshotLocked()
}

func (f *Fake) snapshotLocked() []Waiter {
	out := make([]Waiter, 0, len(f.waiters))
	for _, w := range f.waiters {
		out = append(out, Waiter{Kind: w.kind, Duration: w.duration, Deadline: w.deadline, Arming: w.arming})
	}
	slices.SortStableFunc(out, func(a, b Waiter) int { return a.Deadline.Compare(b.Deadline) })
	return out
}

// HasWaiters reports whether anything is waiting on the clock.
func (f *Fake) HasWaiters() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters) > 0
}

// WaitFor blocks until cond holds for the pending waiters, and returns that
// snapshot. It re-checks cond every time the set of waiters changes, so a
// test synchronises on "the code under test is now waiting for X" instead
// of sleeping. It returns ctx's error if ctx ends first.
func (f *Fake) WaitFor(ctx context.Context, cond func([]Waiter) bool) ([]Waiter, error) {
	for {
		f.mu.Lock()
		snap := f.snapshotLocked()
		changed := f.changed
		f.mu.Unlock()
		if cond(snap) {
			return snap, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return snap, ctx.Err()
		}
	}
}

// BlockUntilWaiters blocks until at least n waiters are pending.
func (f *Fake) BlockUntilWaiters(ctx context.Context, n int) error {
	_, err := f.WaitFor(ctx, func(ws []Waiter) bool { return len(ws) >= n })
	return err
}

// WaitForWaiter blocks until a waiter matching match is pending and
// returns it.
func (f *Fake) WaitForWaiter(ctx context.Context, match func(Waiter) bool) (Waiter, error) {
	var found Waiter
	_, err := f.WaitFor(ctx, func(ws []Waiter) bool {
		for _, w := range ws {
			if match(w) {
				found = w
				return true
			}
		}
		return false
	})
	return found, err
}

// fire delivers t, or calls an AfterFunc's function. Called with the
// clock's lock held, so the function runs in a goroutine of its own: it
// may well stop or re-arm timers on this clock.
func (w *fakeWaiter) fire(t time.Time) {
	if w.fn != nil {
		go w.fn()
		return
	}
	select {
	case w.c <- t:
	default: // a ticker whose reader is behind drops the tick
	}
}

type fakeTimer struct{ w *fakeWaiter }

func (t *fakeTimer) C() <-chan time.Time { return t.w.c }

func (t *fakeTimer) Stop() bool {
	slowArming()
	return t.w.clock.remove(t.w)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	slowArming()
	f := t.w.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	active := f.removeLocked(t.w)
	t.w.duration = d
	t.w.deadline = f.now.Add(d)
	f.armings++
	t.w.arming = f.armings
	if d <= 0 {
		t.w.fire(f.now)
		return active
	}
	f.waiters = append(f.waiters, t.w)
	f.notifyLocked()
	return active
}

type fakeTicker struct{ w *fakeWaiter }

func (t *fakeTicker) C() <-chan time.Time { return t.w.c }

func (t *fakeTicker) Stop() { t.w.clock.remove(t.w) }

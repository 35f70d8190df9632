package cacher

import (
	"runtime"
	"sync"
)

// Turns: how many watch writers are awake at once.
//
// When an event reaches 10,000 watchers, the dispatcher fills 10,000 queues
// in a millisecond or two. Writing them out takes much longer, one system
// call per connection. If every watcher's goroutine were woken at once,
// Go's scheduler would hold 10,000 runnable goroutines, and every other
// goroutine that becomes runnable (the handler of a POST or a /healthz, the
// dispatcher itself) would wait behind all of them. On a 2-core machine
// that was about a tenth of a second per request, on every request, for
// as long as the fan-out lasted (issue 15).
//
// So the dispatcher does not wake a watcher's goroutine itself. A watcher
// with frames asks for a turn. At most Turns' limit are awake at once (half
// the CPUs, at least one); the others wait in line, in order, parked. A
// writer gives its turn up as soon as it has taken its frames, before it
// writes them, and the turn goes to the first watcher in line. So the line
// moves as fast as the CPUs write, the scheduler's run queue stays a few
// goroutines long, and a client too slow to read never holds a turn. A
// watcher waiting in line keeps collecting frames and takes them all on its
// turn: the longer the line, the more frames each write carries, so a
// delivery costs less as the load rises.
//
// The CPUs not writing are left to everything else: handlers, the
// dispatcher, the garbage collector, and on a test machine the clients.
// With 10,000 watchers on 2 cores, one writer at a time delivered about
// 1.2 million events a second for about 1 µs of CPU each; a writer per
// core, 0.5 million for 2.4 µs; every watcher awake, as before, 0.35–0.5
// million for 2.5–3.2 µs (docs/performance-limits.md).
//
// Kubernetes has no such line: every cacheWatcher has a goroutine that
// wakes when its channel gets an event (cache_watcher.go), and Go's
// scheduler is the line.

// Turns is the line of watchers waiting to write. One is shared by all the
// watch caches of a server, since their watchers share its CPUs.
type Turns struct {
	mu    sync.Mutex
	limit int
	awake int
	// line[head:] is the line, oldest first. A watcher that stopped
	// waiting leaves its place behind, to be skipped when it comes up.
	line []place
	head int
	// urgent go before the line: watchers whose full queues the
	// dispatcher waits for (expedite).
	urgent  []place
	waiting int // watchers in turnWaiting
}

// place is a watcher's place in line. ticket tells a place from the
// watcher's later ones: only its latest place counts.
type place struct {
	w      *CacheWatcher
	ticket uint64
}

// current reports whether p is the place of a watcher still waiting.
func (p place) current() bool { return p.w.turn == turnWaiting && p.w.ticket == p.ticket }

// NewTurns lets at most n watchers write at once; n < 1 means half the
// CPUs Go uses, at least one.
func NewTurns(n int) *Turns {
	if n < 1 {
		n = max(1, runtime.GOMAXPROCS(0)/2)
	}
	return &Turns{limit: n}
}

// A watcher's place with the Turns, guarded by Turns.mu.
type turnState uint8

const (
	turnNone    turnState = iota // neither in line nor awake
	turnWaiting                  // in line
	turnHeld                     // holds a turn, until it has taken its frames
	turnGone                     // no longer reads: never gets a turn
)

// ask is called by a watcher's writer that found frames queued. It returns
// true if the watcher holds a turn, given now or earlier; otherwise the
// watcher is in line, and its writer is woken (CacheWatcher.signal) when
// its turn comes.
func (t *Turns) ask(w *CacheWatcher) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch w.turn {
	case turnHeld:
		return true
	case turnWaiting, turnGone:
		return false
	}
	if t.awake < t.limit {
		t.awake++
		w.turn = turnHeld
		return true
	}
	w.turn = turnWaiting
	w.ticket++
	t.waiting++
	t.line = append(t.line, place{w, w.ticket})
	return false
}

// offer is ask for a watcher whose writer waits in Next with nothing
// queued, called by the dispatcher after queueing the first frame: the
// writer is woken at once if there is a turn free.
func (t *Turns) offer(w *CacheWatcher) {
	if t.ask(w) {
		w.signal()
	}
}

// pass gives w's turn, if it holds one, to the next watcher: w's writer
// has taken its frames and is about to write them.
func (t *Turns) pass(w *CacheWatcher) {
	t.mu.Lock()
	var next *CacheWatcher
	if w.turn == turnHeld {
		w.turn = turnNone
		t.awake--
		next = t.nextLocked()
	}
	t.mu.Unlock()
	if next != nil {
		next.signal()
	}
}

// stepOut takes w out of line, or gives up its turn, because its writer
// stopped waiting (its context ended); it asks again if it comes back.
func (t *Turns) stepOut(w *CacheWatcher) { t.out(w, false) }

// leave takes w out for good: its writer will not read again, or (an ended
// watcher) reads its last frames without a turn.
func (t *Turns) leave(w *CacheWatcher) { t.out(w, true) }

// out is stepOut and leave. A turn w holds goes to the next in line.
func (t *Turns) out(w *CacheWatcher, forGood bool) {
	t.mu.Lock()
	var next *CacheWatcher
	switch w.turn {
	case turnHeld:
		t.awake--
		next = t.nextLocked()
	case turnWaiting:
		t.waiting--
	}
	switch {
	case forGood:
		w.turn = turnGone
	case w.turn != turnGone:
		w.turn = turnNone
	}
	t.mu.Unlock()
	if next != nil {
		next.signal()
	}
}

// expedite moves w, if it waits in line, to the front: the dispatcher
// waits for its full queue to drain, and every other watcher waits with
// the dispatcher. Its old place stays in the line and is skipped if w is
// not waiting when it comes up.
func (t *Turns) expedite(w *CacheWatcher) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w.turn == turnWaiting {
		t.urgent = append(t.urgent, place{w, w.ticket})
	}
}

// nextLocked gives a turn to the first watcher still waiting, urgent ones
// first, and returns it (nil if none waits).
func (t *Turns) nextLocked() *CacheWatcher {
	for len(t.urgent) > 0 {
		p := t.urgent[0]
		t.urgent[0] = place{}
		t.urgent = t.urgent[1:]
		if p.current() {
			t.grantLocked(p.w)
			return p.w
		}
	}
	t.urgent = nil
	for t.head < len(t.line) {
		p := t.line[t.head]
		t.line[t.head] = place{}
		t.head++
		if p.current() {
			t.grantLocked(p.w)
			t.compactLocked()
			return p.w
		}
	}
	t.compactLocked()
	return nil
}

func (t *Turns) grantLocked(w *CacheWatcher) {
	w.turn = turnHeld
	t.waiting--
	t.awake++
}

// compactLocked reuses the line's array once its first half is spent.
func (t *Turns) compactLocked() {
	switch {
	case t.head == len(t.line):
		t.line, t.head = t.line[:0], 0
	case t.head > 64 && t.head > len(t.line)/2:
		n := copy(t.line, t.line[t.head:])
		clear(t.line[n:])
		t.line, t.head = t.line[:n], 0
	}
}

// contended reports whether watchers wait in line.
func (t *Turns) contended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.waiting > 0
}

// TurnsStats is a snapshot of the line, for the debug view.
type TurnsStats struct {
	// Limit is how many watchers may write at once; Awake hold a turn now;
	// Waiting wait in line.
	Limit   int `json:"limit"`
	Awake   int `json:"awake"`
	Waiting int `json:"waiting"`
}

// Stats returns the line as it is now.
func (t *Turns) Stats() TurnsStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return TurnsStats{Limit: t.limit, Awake: t.awake, Waiting: t.waiting}
}

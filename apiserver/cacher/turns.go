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
// as long as the fan-out lasted (docs/performance-limits.md, "Where the
// time went").
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
// wakes when its input channel gets an event (cache_watcher.go,
// cacheWatcher.process), and Go's scheduler is the line.
//
// The watch cache meets the line in one place: each CacheWatcher has a
// seat, and calls it where Kubernetes' cacheWatcher would simply send on
// or receive from its channel (the seat's methods below Turns').
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
	s      *seat
	ticket uint64
}

// current reports whether p is the place of a watcher still waiting.
func (p place) current() bool { return p.s.state == turnWaiting && p.s.ticket == p.ticket }

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
// watcher is in line, and its writer is woken (seat.signal) when its
// turn comes.
func (t *Turns) ask(s *seat) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch s.state {
	case turnHeld:
		return true
	case turnWaiting, turnGone:
		return false
	}
	if t.awake < t.limit {
		t.awake++
		s.state = turnHeld
		return true
	}
	s.state = turnWaiting
	s.ticket++
	t.waiting++
	t.line = append(t.line, place{s, s.ticket})
	return false
}

// offer is ask for a watcher whose writer waits in Next with nothing
// queued, called by the dispatcher after queueing the first frame: the
// writer is woken at once if there is a turn free.
func (t *Turns) offer(s *seat) {
	if t.ask(s) {
		s.signal()
	}
}

// pass gives s's turn, if it holds one, to the next watcher: its writer
// has taken its frames and is about to write them.
func (t *Turns) pass(s *seat) {
	t.mu.Lock()
	var next *seat
	if s.state == turnHeld {
		s.state = turnNone
		t.awake--
		next = t.nextLocked()
	}
	t.mu.Unlock()
	if next != nil {
		next.signal()
	}
}

// stepOut takes s out of line, or gives up its turn, because its writer
// stopped waiting (its context ended); it asks again if it comes back.
func (t *Turns) stepOut(s *seat) { t.out(s, false) }

// leave takes s out for good: its writer will not read again, or (an ended
// watcher) reads its last frames without a turn.
func (t *Turns) leave(s *seat) { t.out(s, true) }

// out is stepOut and leave. A turn s holds goes to the next in line.
func (t *Turns) out(s *seat, forGood bool) {
	t.mu.Lock()
	var next *seat
	switch s.state {
	case turnHeld:
		t.awake--
		next = t.nextLocked()
	case turnWaiting:
		t.waiting--
	}
	switch {
	case forGood:
		s.state = turnGone
	case s.state != turnGone:
		s.state = turnNone
	}
	t.mu.Unlock()
	if next != nil {
		next.signal()
	}
}

// expedite moves s, if it waits in line, to the front: the dispatcher
// waits for its full queue to drain, and every other watcher waits with
// the dispatcher. Its old place stays in the line and is skipped if s is
// not waiting when it comes up.
func (t *Turns) expedite(s *seat) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s.state == turnWaiting {
		t.urgent = append(t.urgent, place{s, s.ticket})
	}
}

// nextLocked gives a turn to the first watcher still waiting, urgent ones
// first, and returns it (nil if none waits).
func (t *Turns) nextLocked() *seat {
	for len(t.urgent) > 0 {
		p := t.urgent[0]
		t.urgent[0] = place{}
		t.urgent = t.urgent[1:]
		if p.current() {
			t.grantLocked(p.s)
			return p.s
		}
	}
	t.urgent = nil
	for t.head < len(t.line) {
		p := t.line[t.head]
		t.line[t.head] = place{}
		t.head++
		if p.current() {
			t.grantLocked(p.s)
			t.compactLocked()
			return p.s
		}
	}
	t.compactLocked()
	return nil
}

func (t *Turns) grantLocked(s *seat) {
	s.state = turnHeld
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

// seat is one watcher's place with the Turns, and the calls its writer
// (Next) and the dispatcher (push) make where Kubernetes' cacheWatcher
// would send on or receive from its input channel.
type seat struct {
	turns *Turns
	// wake is the watcher's wake-up channel (CacheWatcher.wake): the line
	// signals it when the watcher's turn comes.
	wake chan struct{}
	// idle: the writer waits in Next with nothing queued, so the
	// dispatcher asks for its turn when it queues the first frame. A
	// writer busy elsewhere (writing) asks for itself when it comes back.
	// Guarded by the watcher's mu.
	idle bool
	// state is the watcher's place with the Turns, and ticket the number
	// of its latest place in line; both guarded by Turns.mu.
	state  turnState
	ticket uint64
}

// mayTakeLocked is asked by a writer that found frames queued: it may take
// them now if it holds a turn (given now or earlier); otherwise it is in
// line and is woken on its turn. An ended watcher takes its last frames
// without a turn and never takes one again: its writer may block on a
// slow client, and the line must not wait for it. The caller holds the
// watcher's mu.
func (s *seat) mayTakeLocked(ended bool) bool {
	s.idle = false
	if ended {
		s.turns.leave(s)
		return true
	}
	return s.turns.ask(s)
}

// nothingQueuedLocked is told by a writer that found no frame queued. A
// watcher still open waits idle: a turn it holds now (there should be
// none) goes on, or the whole line would wait for this watch, and the
// dispatcher asks for a turn on its behalf with the first frame
// (firstFrameLocked). An ended one leaves the line for good. The caller
// holds the watcher's mu.
func (s *seat) nothingQueuedLocked(ended bool) {
	s.idle = !ended
	if ended {
		s.turns.leave(s)
		return
	}
	s.turns.pass(s)
}

// firstFrameLocked is told by the dispatcher that it queued a frame in an
// empty queue: if the writer waits idle in Next, the dispatcher asks for
// its turn on its behalf. Under the watcher's mu, so that the writer
// cannot step out meanwhile.
func (s *seat) firstFrameLocked() {
	if s.idle {
		s.idle = false
		s.turns.offer(s)
	}
}

// taken is told by a writer that has taken its frames and is about to
// write them: its turn goes to the next in line.
func (s *seat) taken() { s.turns.pass(s) }

// stepOutLocked gives up the writer's place because its context ended; a
// later Next asks again. The caller holds the watcher's mu.
func (s *seat) stepOutLocked() {
	s.idle = false
	s.turns.stepOut(s)
}

// leave takes the watcher out of the line for good: it is stopped.
func (s *seat) leave() { s.turns.leave(s) }

// expedite brings the watcher forward in line: the dispatcher waits for
// its full queue.
func (s *seat) expedite() { s.turns.expedite(s) }

// contended reports whether writers wait in line: the writer then flushes
// what it has rather than wait for frames that need a turn.
func (s *seat) contended() bool { return s.turns.contended() }

// signal wakes the watcher's writer, if it waits in Next.
func (s *seat) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

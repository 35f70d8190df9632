package chaos

import (
	"errors"
	"fmt"
	"time"

	"listwatch/narrate"
	"listwatch/store"
)

// DefaultConvergenceTimeout is Config.ConvergenceTimeout's default: long
// enough that only a run that will never converge reaches it.
const DefaultConvergenceTimeout = 3 * time.Minute

// Config describes one chaos run. The zero value of every field takes the
// default shown in its comment; Seed 0 is a valid seed like any other.
type Config struct {
	// Seed fixes every random choice: which writer touches which key with
	// which operation and value, and the whole fault schedule (what, when,
	// for how long, against which informer). Timing still varies from run
	// to run, so the interleaving does too; the seed is what to quote when
	// a run fails.
	Seed uint64
	// Duration is how long the writers write and the faults fire
	// (default 10 s). Convergence is checked afterwards.
	Duration time.Duration
	// Writers is the number of concurrent writers (default 4). Each owns
	// its share of the keys, so it always knows whether a key exists and
	// every write it makes is a valid create, update or delete.
	Writers int
	// Keys is the number of ConfigMap names written, spread over the
	// namespaces (default 300).
	Keys int
	// Namespaces is how many namespaces the keys live in (default 3).
	Namespaces int
	// Informers is the number of informers watching (default 5). They
	// differ by index: queue kind, watch-list or list-then-watch,
	// namespace scope, page size, transport and who picks the watch
	// timeout (see informerVariant); six cover every queue with both ways
	// of fetching the initial state.
	Informers int
	// WriteInterval is each writer's pause between two writes (default
	// 2 ms); it keeps the load steady instead of as fast as the CPU allows.
	WriteInterval time.Duration

	// Faults are the rates at which each fault fires; nil means
	// DefaultFaultRates (a zero FaultRates turns every fault off).
	Faults *FaultRates

	// BookmarkInterval is the server's periodic bookmark interval
	// (default 500 ms).
	BookmarkInterval time.Duration
	// IdleWatchTimeout is the clients' half-open detection (default
	// BookmarkInterval + 1.5 s): a watch that receives no byte for that
	// long is presumed dead and re-opened. It must exceed the bookmark
	// interval, or a quiet healthy watch would be cut.
	IdleWatchTimeout time.Duration
	// ServerWatchTimeout is the apiserver's MinRequestTimeout (default
	// 3 s): a watch that names no timeoutSeconds lasts 1-2× this, unless
	// the watch-timeout fault shortens it.
	ServerWatchTimeout time.Duration
	// HistorySize is the watch cache's ring, in events (default 500). It is
	// small on purpose: a watcher that was away (stalled, too slow) for a
	// second or two comes back to a resourceVersion the ring no longer
	// holds and gets 410 Expired, so the re-list path runs often.
	HistorySize int
	// WatcherBuffer is the server's per-watcher queue in frames (default
	// 32): small, so a watcher that stops reading is closed as too slow
	// quickly.
	WatcherBuffer int
	// CompactionInterval is how often the store's history is compacted in
	// the background (default 2 s), whatever the faults do: the stand-in
	// for etcd's compactor, which kube-apiserver runs every 5 minutes
	// (--etcd-compaction-interval). Without it a client that keeps
	// reading the store at one old exact revision (a paged list) is never
	// told that revision is gone. Negative turns it off.
	CompactionInterval time.Duration
	// ConvergenceTimeout bounds the wait, after the writers stop, for every
	// informer and handler to reach the server's final state (default
	// DefaultConvergenceTimeout). It is a safety bound, not a guess at how
	// long convergence takes: the wait ends as soon as every informer has
	// the final state, which a healthy run reaches in a few seconds even
	// under -race on two busy cores; only an informer that lost its way
	// outlasts it.
	ConvergenceTimeout time.Duration

	// Store is the store the apiserver serves from: nil for a new in-memory
	// store (the apiserver's default). The nested module listwatch/etcd
	// passes its etcd store to run the same checker on etcd; the store's
	// owner closes it after Run.
	Store store.Interface

	// Tracer narrates what the run does (each fault, each phase), tagged
	// "chaos"; nil is silent. It is not handed to the server or the
	// informers, whose narration of a run this busy would be millions of
	// lines.
	Tracer *narrate.Tracer
	// ServerTracer, if set, is handed to the apiserver (and through it to
	// the store and the watch caches): every request, watch and fault, as
	// the server sees it. Very verbose; use a narrate filter.
	ServerTracer *narrate.Tracer
	// ClientTracer, if set, is handed to every informer and its client:
	// each list, watch, event and notification. Very verbose too.
	ClientTracer *narrate.Tracer
	// Logf, if set, receives a few progress lines (the seed first).
	Logf func(format string, args ...any)
}

// FaultRates says how often each fault fires, in injections per second; 0
// turns a fault off. Every fault with a positive rate fires at least once
// in a run, at a seeded random time, and then about every 1/rate seconds
// (±50%).
type FaultRates struct {
	// WatchTimeout shortens the server's default watch timeout to about a
	// second for a few seconds (SetWatchTimeout).
	WatchTimeout float64
	// Kill drops every open watch connection abruptly, with a TCP reset
	// (KillWatchConnections).
	Kill float64
	// Stall makes every open watch stop writing but keep its connection:
	// half-open; only the clients' idle timeout notices (StallWatches).
	Stall float64
	// Compact compacts the store's history now (CompactNow): exact and
	// paged lists at older revisions, and their continue tokens, get 410.
	Compact float64
	// SlowWatcher makes one informer stop reading its watch while a burst
	// of large objects is written, until the server closes it as too slow.
	SlowWatcher float64
	// TooManyRequests makes the resource answer 429 for about a second
	// (FailResource), to writers and informers alike.
	TooManyRequests float64
	// Forbidden makes the resource answer 403 for about a second.
	Forbidden float64
	// RequestDelay makes every non-watch request wait 50-300 ms for a
	// second or two (SetRequestDelay).
	RequestDelay float64
	// SlowHandler makes one informer's second handler take 1-5 ms per
	// notification for a few seconds, so its backlog grows.
	SlowHandler float64
}

// DefaultFaultRates fire each fault a few times in a 10 s run.
var DefaultFaultRates = FaultRates{
	WatchTimeout:    0.2,
	Kill:            0.3,
	Stall:           0.2,
	Compact:         0.3,
	SlowWatcher:     0.2,
	TooManyRequests: 0.2,
	Forbidden:       0.2,
	RequestDelay:    0.2,
	SlowHandler:     0.2,
}

// rate returns the rate of kind k.
func (r FaultRates) rate(k FaultKind) float64 {
	switch k {
	case FaultWatchTimeout:
		return r.WatchTimeout
	case FaultKill:
		return r.Kill
	case FaultStall:
		return r.Stall
	case FaultCompact:
		return r.Compact
	case FaultSlowWatcher:
		return r.SlowWatcher
	case FaultTooManyRequests:
		return r.TooManyRequests
	case FaultForbidden:
		return r.Forbidden
	case FaultRequestDelay:
		return r.RequestDelay
	case FaultSlowHandler:
		return r.SlowHandler
	}
	return 0
}

// Rate returns the rate of kind k, in injections per second.
func (r FaultRates) Rate(k FaultKind) float64 { return r.rate(k) }

// SetRate sets the rate of kind k (for flags).
func (r *FaultRates) SetRate(k FaultKind, perSecond float64) {
	switch k {
	case FaultWatchTimeout:
		r.WatchTimeout = perSecond
	case FaultKill:
		r.Kill = perSecond
	case FaultStall:
		r.Stall = perSecond
	case FaultCompact:
		r.Compact = perSecond
	case FaultSlowWatcher:
		r.SlowWatcher = perSecond
	case FaultTooManyRequests:
		r.TooManyRequests = perSecond
	case FaultForbidden:
		r.Forbidden = perSecond
	case FaultRequestDelay:
		r.RequestDelay = perSecond
	case FaultSlowHandler:
		r.SlowHandler = perSecond
	}
}

// withDefaults fills in the zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	def(&c.Duration, 10*time.Second)
	defInt(&c.Writers, 4)
	defInt(&c.Keys, 300)
	defInt(&c.Namespaces, 3)
	defInt(&c.Informers, 5)
	def(&c.WriteInterval, 2*time.Millisecond)
	if c.Faults == nil {
		r := DefaultFaultRates
		c.Faults = &r
	}
	def(&c.BookmarkInterval, 500*time.Millisecond)
	def(&c.IdleWatchTimeout, c.BookmarkInterval+1500*time.Millisecond)
	def(&c.ServerWatchTimeout, 3*time.Second)
	defInt(&c.HistorySize, 500)
	defInt(&c.WatcherBuffer, 32)
	def(&c.CompactionInterval, 2*time.Second)
	def(&c.ConvergenceTimeout, DefaultConvergenceTimeout)

	var errs []error
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Duration", c.Duration}, {"WriteInterval", c.WriteInterval}, {"BookmarkInterval", c.BookmarkInterval},
		{"IdleWatchTimeout", c.IdleWatchTimeout}, {"ServerWatchTimeout", c.ServerWatchTimeout}, {"ConvergenceTimeout", c.ConvergenceTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("%s %v is negative", d.name, d.v))
		}
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"Writers", c.Writers}, {"Keys", c.Keys}, {"Namespaces", c.Namespaces}, {"Informers", c.Informers},
		{"HistorySize", c.HistorySize}, {"WatcherBuffer", c.WatcherBuffer}} {
		if n.v < 0 {
			errs = append(errs, fmt.Errorf("%s %d is negative", n.name, n.v))
		}
	}
	if c.Keys < c.Writers {
		errs = append(errs, fmt.Errorf("every writer needs a key of its own: %d Keys for %d Writers", c.Keys, c.Writers))
	}
	if c.IdleWatchTimeout <= c.BookmarkInterval {
		errs = append(errs, fmt.Errorf("IdleWatchTimeout %v must exceed BookmarkInterval %v, or quiet healthy watches are cut", c.IdleWatchTimeout, c.BookmarkInterval))
	}
	for _, k := range FaultKinds() {
		if r := c.Faults.rate(k); r < 0 {
			errs = append(errs, fmt.Errorf("fault %s: negative rate %v", k, r))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("chaos: invalid Config: %w", err)
	}
	return c, nil
}

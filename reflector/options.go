package reflector

import (
	"math"
	"time"

	"listwatch/internal/clock"
	"listwatch/narrate"
)

// The defaults are client-go's (tools/cache/reflector.go), so that a
// listwatch informer loads a server exactly as a Kubernetes controller does.
const (
	// DefaultMinWatchTimeout and DefaultMaxWatchTimeout bound the
	// timeoutSeconds a watch asks for. It is random in between, so that
	// thousands of clients started together do not all re-watch at the
	// same second.
	DefaultMinWatchTimeout = 5 * time.Minute
	DefaultMaxWatchTimeout = 10 * time.Minute
	// DefaultPageSize is the limit of a paged list (client-go's pager).
	DefaultPageSize = 500
)

// InitialListMode is how a Reflector fetches the state it then watches.
type InitialListMode string

const (
	// WatchList streams the initial state over a watch (KEP-3157):
	// sendInitialEvents=true&resourceVersionMatch=NotOlderThan, from
	// resourceVersion "" (a consistent snapshot of the latest state) or
	// the last one seen, with allowWatchBookmarks=true. The server sends
	// an ADDED event per object and a BOOKMARK annotated
	// k8s.io/initial-events-end; the same stream then carries on as the
	// watch. It falls back to ListThenWatch exactly when client-go does
	// (see Reflector.watchList). client-go's default since 1.35 (feature
	// WatchListClient, beta, on).
	WatchList InitialListMode = "WatchList"
	// ListThenWatch lists (in pages of 500 when the watch cache cannot
	// answer), hands the list to the Store, then watches from the list's
	// resourceVersion: client-go's behaviour before 1.35, and what the
	// source articles describe.
	ListThenWatch InitialListMode = "ListThenWatch"
)

// Options configures a Reflector. The zero value is client-go's behaviour.
type Options struct {
	// Name appears in narration and errors; defaults to "reflector".
	Name string
	// ResyncPeriod, when positive, makes the Reflector call Store.Resync
	// this often while it watches (if ShouldResync agrees).
	ResyncPeriod time.Duration
	// ShouldResync is asked at every resync tick; nil means always yes. The
	// informer uses it to resync only when some handler is due for one.
	ShouldResync func() bool
	// MinWatchTimeout and MaxWatchTimeout bound the watch's timeoutSeconds,
	// drawn at random in [Min, Max). Zero means the defaults (300 s, 600 s).
	// Unlike client-go, shorter values are honoured: a workshop wants to
	// see a watch end and be re-opened without waiting five minutes.
	MinWatchTimeout time.Duration
	MaxWatchTimeout time.Duration
	// PageSize is the limit of list requests. Zero means client-go's rule:
	// pages of 500 for lists at resourceVersion "" or "0", and no paging
	// for lists at a specific resourceVersion (so the watch cache can serve
	// them) unless the first list came back paged. A positive value forces
	// that page size on every list; a negative one turns paging off.
	PageSize int64
	// InitialList picks how the initial state (and the state after a
	// 410) is fetched: WatchList (the default, client-go's since
	// Kubernetes 1.35) or ListThenWatch (client-go's before).
	InitialList InitialListMode
	// LabelSelector and FieldSelector, if set, are sent with every list and
	// watch.
	LabelSelector string
	FieldSelector string
	// Backoff is the delay between attempts; zero fields take client-go's
	// defaults.
	Backoff Backoff
	// Clock defaults to the real clock; tests pass a clock.Fake.
	Clock clock.Clock
	// Tracer narrates what the Reflector does; nil is silent.
	Tracer *narrate.Tracer
}

// Backoff is an exponential backoff with jitter and a reset, as client-go's
// wait.Backoff + DelayWithReset used by the Reflector. Each delay is the
// current base plus up to Jitter times as much again, so with the defaults
// the waits are in [0.8 s, 1.6 s), [1.6 s, 3.2 s), ... up to [30 s, 60 s).
type Backoff struct {
	// Initial is the first base delay (800 ms).
	Initial time.Duration
	// Factor multiplies the base after each delay (2).
	Factor float64
	// Jitter adds up to Jitter×base at random (1.0); negative means none.
	Jitter float64
	// Max caps the base (30 s).
	Max time.Duration
	// ResetAfter returns the base to Initial once this long has passed
	// without a delay being needed (2 min): the server is assumed healthy
	// again.
	ResetAfter time.Duration
}

// DefaultBackoff is client-go's reflector backoff.
var DefaultBackoff = Backoff{
	Initial:    800 * time.Millisecond,
	Factor:     2,
	Jitter:     1,
	Max:        30 * time.Second,
	ResetAfter: 2 * time.Minute,
}

func (b Backoff) withDefaults() Backoff {
	d := DefaultBackoff
	if b.Initial > 0 {
		d.Initial = b.Initial
	}
	if b.Factor > 0 {
		d.Factor = b.Factor
	}
	if b.Jitter != 0 {
		d.Jitter = max(b.Jitter, 0)
	}
	if b.Max > 0 {
		d.Max = b.Max
	}
	if b.ResetAfter > 0 {
		d.ResetAfter = b.ResetAfter
	}
	if d.Max < d.Initial {
		d.Max = d.Initial
	}
	if math.IsInf(d.Factor, 0) || math.IsNaN(d.Factor) || d.Factor < 1 {
		d.Factor = DefaultBackoff.Factor
	}
	if math.IsInf(d.Jitter, 0) || math.IsNaN(d.Jitter) {
		d.Jitter = DefaultBackoff.Jitter
	}
	return d
}

func (o Options) withDefaults() Options {
	if o.Name == "" {
		o.Name = "reflector"
	}
	if o.MinWatchTimeout <= 0 {
		o.MinWatchTimeout = DefaultMinWatchTimeout
	}
	if o.MaxWatchTimeout <= 0 {
		// client-go draws from [min, 2×min).
		o.MaxWatchTimeout = 2 * o.MinWatchTimeout
	}
	if o.MaxWatchTimeout < o.MinWatchTimeout {
		o.MaxWatchTimeout = o.MinWatchTimeout
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.InitialList == "" {
		o.InitialList = WatchList
	}
	o.Backoff = o.Backoff.withDefaults()
	return o
}

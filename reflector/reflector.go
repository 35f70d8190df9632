package reflector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/internal/clock"
	"listwatch/narrate"
)

// Reflector keeps a Store in step with one resource on the server: it
// lists, hands the list to the Store with Replace, then watches from the
// list's resourceVersion and hands every event on, re-watching and
// re-listing as the server requires. It is client-go's
// tools/cache/reflector.go Reflector.
type Reflector struct {
	name   string
	prefix string // "name: " for narration, or "" when unnamed
	lw     ListerWatcher
	store  Store
	opts   Options
	clock  clock.Clock
	tr     *narrate.Tracer
	// rand draws in [0, 1) for jitter and watch timeouts; tests replace it.
	rand    func() float64
	backoff *backoffManager

	mu sync.RWMutex
	// lastSyncRV is the resourceVersion the Store is known to be
	// consistent with: the last list's, or the last event's.
	lastSyncRV string
	// lastSyncRVUnavailable is set when asking for lastSyncRV answered 410
	// or "too large": the next list then asks for "" (the latest).
	lastSyncRVUnavailable bool
	// paginatedResult records that the first list (at "0") came back in
	// pages, i.e. the server has no watch cache: keep paging then.
	paginatedResult bool
	errorHandler    func(r *Reflector, err error)
}

// New returns a Reflector that mirrors lw into store. Call Run to start it.
func New(lw ListerWatcher, store Store, opts Options) *Reflector {
	opts = opts.withDefaults()
	r := &Reflector{
		name:  opts.Name,
		lw:    lw,
		store: store,
		opts:  opts,
		clock: opts.Clock,
		tr:    opts.Tracer,
		rand:  rand.Float64,
	}
	if opts.Name != "reflector" {
		r.prefix = opts.Name + ": "
	}
	r.backoff = newBackoffManager(opts.Backoff, r.clock, func() float64 { return r.rand() })
	return r
}

// Name is the Reflector's name, for error messages and handlers.
func (r *Reflector) Name() string { return r.name }

// SetWatchErrorHandler installs h, called with every error the Reflector
// meets: a failed list, a watch that could not be opened, an ERROR event,
// a Store that refused an object. The Reflector recovers by itself (backs
// off, re-watches or re-lists); the handler is how a program sees that it
// had to, e.g. a 403 that would otherwise be retried forever in silence.
// It must return quickly. client-go calls its handler only for errors that
// end ListAndWatch; this one is told about all of them.
func (r *Reflector) SetWatchErrorHandler(h func(r *Reflector, err error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errorHandler = h
}

// LastSyncResourceVersion is the resourceVersion the Store was last brought
// up to: the list's, then each event's and bookmark's.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.lastSyncRV
}

func (r *Reflector) setLastSyncResourceVersion(rv string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncRV = rv
}

func (r *Reflector) setLastSyncRVUnavailable(unavailable bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSyncRVUnavailable = unavailable
}

// relistResourceVersion is what the next list asks for: "0" the first time
// (any state will do, so the server's watch cache can answer cheaply), the
// last synced resourceVersion afterwards (not older than what we have seen,
// so the cache never goes back in time), and "" (the latest, read from
// storage) once that answered 410 or "too large".
func (r *Reflector) relistResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	switch {
	case r.lastSyncRVUnavailable:
		return ""
	case r.lastSyncRV == "":
		return "0"
	default:
		return r.lastSyncRV
	}
}

// rewatchResourceVersion is where a streaming initial list starts.
func (r *Reflector) rewatchResourceVersion() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.lastSyncRVUnavailable {
		return ""
	}
	return r.lastSyncRV
}

// Run lists and watches until ctx is done, backing off between attempts.
// It returns once ctx is done and every goroutine it started has ended.
func (r *Reflector) Run(ctx context.Context) {
	r.tr.Printf(narrate.Reflector, "%sstarting", r.prefix)
	defer r.tr.Printf(narrate.Reflector, "%sstopped", r.prefix)
	for {
		err := r.ListAndWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			r.reportError(err)
		}
		// Whatever ended ListAndWatch (an error, a 410, a watch that
		// would not stay open), wait before listing again, as client-go's
		// sliding backoff loop does: a server in trouble must not be
		// hammered with full lists.
		d := r.backoff.next()
		r.tr.Printf(narrate.Reflector, "%sbackoff %v, then re-list", r.prefix, d.Round(time.Millisecond))
		if !r.sleep(ctx, d) {
			return
		}
	}
}

// ListAndWatch does one round: stream the initial state (WatchList) or
// list it (ListThenWatch, or WatchList's fallback), hand it to the Store,
// then watch until something requires a re-list. It returns nil when ctx
// is done. Like client-go, every round tries watch-list first again: a
// fallback is not remembered.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	if r.lw == nil || r.store == nil {
		return errors.New("reflector: New was given a nil ListerWatcher or Store")
	}
	useWatchList := false
	switch r.opts.InitialList {
	case WatchList:
		useWatchList = !watchListUnsupported(r.lw)
	case ListThenWatch:
	default:
		return fmt.Errorf("reflector %s: unknown InitialList mode %q (want %q or %q)", r.name, r.opts.InitialList, WatchList, ListThenWatch)
	}
	var w client.Watcher
	if useWatchList {
		var err error
		w, err = r.watchList(ctx)
		if ctx.Err() != nil {
			if w != nil {
				w.Stop() // streamed, then stopped before watching: not ours to leak
			}
			return nil
		}
		if err != nil {
			r.tr.Printf(narrate.Reflector, "%swatch-list failed (%v), falling back to list+watch", r.prefix, err)
			useWatchList = false
			w = nil
		}
	}
	if !useWatchList {
		if err := r.list(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return r.watchWithResync(ctx, w)
}

// reportError narrates err and hands it to the error handler, if any.
func (r *Reflector) reportError(err error) {
	r.tr.Printf(narrate.Reflector, "%serror: %v", r.prefix, err)
	r.mu.RLock()
	h := r.errorHandler
	r.mu.RUnlock()
	if h != nil {
		h(r, err)
	}
}

// sleep waits d on the Reflector's clock; false means ctx ended first.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) bool {
	t := r.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// baseOptions carries the selectors every request sends.
func (r *Reflector) baseOptions() api.ListOptions {
	return api.ListOptions{LabelSelector: r.opts.LabelSelector, FieldSelector: r.opts.FieldSelector}
}

// watchTimeoutSeconds draws the watch's timeoutSeconds in [min, max).
func (r *Reflector) watchTimeoutSeconds() int64 {
	lo, hi := r.opts.MinWatchTimeout.Seconds(), r.opts.MaxWatchTimeout.Seconds()
	return max(int64(lo+r.rand()*(hi-lo)), 1)
}

// plural is "1 item", "2 items".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

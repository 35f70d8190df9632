package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/internal/clock"
	"listwatch/narrate"
)

// WatcherFactory opens watches. A *ResourceClient is one; so is the
// reflector's ListerWatcher. RetryWatcher calls it once per attempt.
type WatcherFactory interface {
	Watch(ctx context.Context, opts api.ListOptions) (Watcher, error)
}

// WatchFunc adapts a function to WatcherFactory.
type WatchFunc func(ctx context.Context, opts api.ListOptions) (Watcher, error)

// Watch calls f.
func (f WatchFunc) Watch(ctx context.Context, opts api.ListOptions) (Watcher, error) {
	return f(ctx, opts)
}

// DefaultMinRestartDelay is how soon after the start of one watch attempt
// the next may start: client-go's one second.
const DefaultMinRestartDelay = time.Second

// RetryWatcherOptions tune a RetryWatcher. The zero value is client-go's
// behaviour.
type RetryWatcherOptions struct {
	// ListOptions are sent with every attempt (selectors, timeoutSeconds).
	// Its ResourceVersion, AllowWatchBookmarks and Watch are set by the
	// RetryWatcher.
	ListOptions api.ListOptions
	// MinRestartDelay is the least time from the start of one attempt to
	// the start of the next (DefaultMinRestartDelay if zero). It keeps a
	// server that ends every watch at once from being hammered, while a
	// watch that ran for half an hour is renewed immediately. Tests make
	// it small.
	MinRestartDelay time.Duration
	// Tracer narrates every re-watch; nil is silent.
	Tracer *narrate.Tracer
	// Clock measures the delays between attempts; nil is the real clock.
	// Tests pass a fake one, so that they can check a delay without
	// waiting for it or timing it.
	Clock clock.Clock
}

// RetryWatcher keeps one logical watch alive across any number of server
// streams, and never delivers an event twice or skips one. It mirrors
// client-go's tools/watch.RetryWatcher (client-go/tools/watch/retrywatcher.go),
// the answer to the second article (cited in docs/articles.md).
//
// How. Every event carries the resourceVersion at which it happened, and a
// watch started at resourceVersion N sends exactly the changes after N. So
// the RetryWatcher remembers the resourceVersion of the last event it
// forwarded, and when a stream ends (the server's timeout, a dropped
// connection, a probable EOF) it watches again from there. It asks for
// BOOKMARKs, which carry no change but a newer resourceVersion, so that on
// a quiet collection its resourceVersion still moves forward and is less
// likely to fall out of the server's window; bookmarks move it but are not
// forwarded.
//
// What stops it (after forwarding the reason as an ERROR event):
//   - an ERROR 410 (Expired/Gone): the server no longer has the history
//     from our resourceVersion, so continuity cannot be promised; the
//     caller must list again (that is what a Reflector does);
//   - a 401 or 403: retrying will not give us credentials;
//   - an event without a resourceVersion, or of an unknown type: we could
//     not resume after it without risking a gap.
//
// What it retries: a closed stream at once (but at most once per
// MinRestartDelay from the previous attempt's start), an ERROR 500 or 504
// after the Status's retryAfterSeconds, and anything else it is not sure
// about, since giving up is the caller's call (cancel the context).
type RetryWatcher struct {
	factory WatcherFactory
	opts    RetryWatcherOptions
	tr      *narrate.Tracer

	// lastRV is only touched by the receive goroutine.
	lastRV string

	result   chan api.Event
	done     chan struct{}
	cancel   context.CancelFunc
	stopOnce sync.Once
}

// NewRetryWatcher starts watching from initialRV, the resourceVersion of a
// list or of an event already handled, and keeps watching until ctx is
// cancelled, Stop is called, or it meets something it cannot retry.
//
// initialRV must be a real resourceVersion. "" and "0" are refused: to a
// watch they mean "start from whatever you have now" (the server first
// sends synthetic ADDED events for the current state), and a watch started
// from "now" cannot be resumed without a gap or duplicates: we would not
// know from where. List first, then watch from the list's resourceVersion.
func NewRetryWatcher(ctx context.Context, initialRV string, factory WatcherFactory, opts RetryWatcherOptions) (*RetryWatcher, error) {
	switch initialRV {
	case "", "0":
		return nil, fmt.Errorf("client: RetryWatcher cannot start from resourceVersion %q: it means \"from the current state\", "+
			"which cannot be resumed without a gap; list first and watch from the list's resourceVersion", initialRV)
	}
	if factory == nil {
		return nil, errors.New("client: RetryWatcher needs a WatcherFactory")
	}
	if opts.MinRestartDelay <= 0 {
		opts.MinRestartDelay = DefaultMinRestartDelay
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	ctx, cancel := context.WithCancel(ctx)
	rw := &RetryWatcher{
		factory: factory,
		opts:    opts,
		tr:      opts.Tracer,
		lastRV:  initialRV,
		result:  make(chan api.Event),
		done:    make(chan struct{}),
		cancel:  cancel,
	}
	go rw.receive(ctx)
	return rw, nil
}

// ResultChan delivers ADDED, MODIFIED and DELETED events, and the ERROR
// that stopped the watcher, if one did. It is closed when the watcher stops.
func (rw *RetryWatcher) ResultChan() <-chan api.Event { return rw.result }

// Stop ends the watcher. Idempotent; safe from any goroutine. Done tells
// when it has finished.
func (rw *RetryWatcher) Stop() { rw.stopOnce.Do(rw.cancel) }

// Done is closed once the watcher has stopped and ResultChan is closed.
func (rw *RetryWatcher) Done() <-chan struct{} { return rw.done }

func (rw *RetryWatcher) receive(ctx context.Context) {
	defer close(rw.done)
	defer close(rw.result)
	defer rw.Stop()
	for attempt := 1; ; attempt++ {
		start := rw.opts.Clock.Now()
		stop, retryAfter, why := rw.attempt(ctx)
		if ctx.Err() != nil {
			rw.tr.Printf(narrate.RetryWatcher, "stopped at rv=%s: Stop was called or its context ended", rw.lastRV)
			return
		}
		if stop {
			rw.tr.Printf(narrate.RetryWatcher, "stopped at rv=%s: %s", rw.lastRV, why)
			return
		}
		now := rw.opts.Clock.Now()
		if wait := nextAttempt(start, now, rw.opts.MinRestartDelay, retryAfter).Sub(now); wait > 0 {
			t := rw.opts.Clock.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				rw.tr.Printf(narrate.RetryWatcher, "stopped at rv=%s: Stop was called or its context ended", rw.lastRV)
				return
			case <-t.C():
			}
		}
		rw.tr.Printf(narrate.RetryWatcher, "re-watch #%d from rv=%s (%s)", attempt, rw.lastRV, why)
	}
}

// nextAttempt is when the next attempt may start: not before
// minDelay after the last one started (so a stream that fails at once is
// not retried in a hot loop, while a long healthy one is renewed at once,
// the "non-sliding" period of client-go's wait.NonSlidingUntil), and not
// before retryAfter after it ended (a server asking for a pause).
func nextAttempt(start, end time.Time, minDelay, retryAfter time.Duration) time.Time {
	next := start.Add(minDelay)
	if byServer := end.Add(retryAfter); byServer.After(next) {
		next = byServer
	}
	return next
}

// attempt runs one watch from lastRV until it ends. It reports whether the
// RetryWatcher must stop, how long the server asked us to wait before the
// next attempt, and why the attempt ended (for the narration).
func (rw *RetryWatcher) attempt(ctx context.Context) (stop bool, retryAfter time.Duration, why string) {
	opts := rw.opts.ListOptions
	opts.Watch = true
	opts.ResourceVersion = rw.lastRV
	opts.AllowWatchBookmarks = true
	w, err := rw.factory.Watch(ctx, opts)
	if err != nil {
		return rw.watchFailed(ctx, err)
	}
	if w == nil {
		return false, 0, "the factory returned no watcher"
	}
	defer w.Stop()
	ch := w.ResultChan()
	for {
		var ev api.Event
		var ok bool
		select {
		case <-ctx.Done():
			return true, 0, "stopped"
		case ev, ok = <-ch:
		}
		if !ok {
			return false, 0, "stream closed"
		}
		switch ev.Type {
		case api.Added, api.Modified, api.Deleted, api.Bookmark:
			if ev.Object == nil || ev.Object.Metadata.ResourceVersion == "" {
				// Forwarding it and carrying on could skip history: we
				// would not know where to resume.
				rw.send(ctx, api.Event{Type: api.Error, Status: api.NewInternalError(
					fmt.Errorf("retryWatcher: %s event without a resourceVersion", ev.Type))})
				return true, 0, fmt.Sprintf("%s event without a resourceVersion", ev.Type)
			}
			if ev.Type != api.Bookmark && !rw.send(ctx, ev) {
				return true, 0, "stopped"
			}
			// Only now, once the consumer has it, has rw seen the event.
			rw.lastRV = ev.Object.Metadata.ResourceVersion
		case api.Error:
			return rw.streamError(ctx, ev)
		default:
			rw.send(ctx, api.Event{Type: api.Error, Status: api.NewInternalError(
				fmt.Errorf("retryWatcher: unknown event type %q", ev.Type))})
			return true, 0, fmt.Sprintf("unknown event type %q", ev.Type)
		}
	}
}

// streamError handles an ERROR event from the server.
func (rw *RetryWatcher) streamError(ctx context.Context, ev api.Event) (bool, time.Duration, string) {
	s := ev.Status
	if s == nil {
		return false, 0, "ERROR event without a Status"
	}
	var delay time.Duration
	if s.Details != nil {
		delay = time.Duration(s.Details.RetryAfterSeconds) * time.Second
	}
	why := fmt.Sprintf("ERROR %d %s: %s", s.Code, s.Reason, s.Message)
	switch s.Code {
	case http.StatusGone, http.StatusUnauthorized, http.StatusForbidden:
		// 410: the history from lastRV is gone; only a new list helps.
		// 401/403: retrying will not give us the right to watch.
		rw.send(ctx, ev)
		return true, 0, why
	default:
		// 500 and 504 are transient by definition; anything else we do
		// not know is retried too: stopping is the caller's decision.
		return false, delay, why
	}
}

// watchFailed handles a Watch call that returned an error instead of a
// stream.
func (rw *RetryWatcher) watchFailed(ctx context.Context, err error) (bool, time.Duration, string) {
	why := fmt.Sprintf("watch failed: %v", err)
	if ctx.Err() != nil {
		return true, 0, "stopped"
	}
	s, ok := api.StatusOf(err)
	if !ok {
		// Connection refused, reset, a timeout: the server may be
		// restarting. Try again.
		return false, 0, why
	}
	switch {
	case api.IsUnauthorized(err), api.IsForbidden(err), s.Code == http.StatusGone:
		// client-go retries a 410 here, to get it again a second later
		// forever; like an in-stream 410 it cannot get better, so stop.
		rw.send(ctx, api.Event{Type: api.Error, Status: s})
		return true, 0, why
	}
	delay, _ := api.RetryAfterSeconds(err)
	return false, time.Duration(delay) * time.Second, why
}

// send hands ev to the consumer, or gives up when the watcher is stopped.
func (rw *RetryWatcher) send(ctx context.Context, ev api.Event) bool {
	if ctx.Err() != nil {
		return false // stopped: a select below could still pick the send
	}
	select {
	case rw.result <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

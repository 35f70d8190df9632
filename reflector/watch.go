package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// watchWithResync watches (see watch) while a resync timer runs beside it.
func (r *Reflector) watchWithResync(ctx context.Context, w client.Watcher) error {
	resyncErr := make(chan error, 1)
	resyncCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { r.resyncLoop(resyncCtx, resyncErr) })
	defer func() {
		cancel()
		wg.Wait()
	}()
	return r.watch(ctx, w, resyncErr)
}

// watch opens watches one after the other, from the last resourceVersion
// seen, until something requires a re-list (it then returns an error) or
// ctx is done (it returns nil). If w is not nil it is an already open watch
// to consume first (the stream of a watch-list). Each turn has three steps:
// open a watch (openWatch), feed its events to the store (handleWatch),
// and decide what the way it ended means (watchEnded).
func (r *Reflector) watch(ctx context.Context, w client.Watcher, resyncErr <-chan error) error {
	defer func() {
		if w != nil {
			w.Stop()
		}
	}()
	for ctx.Err() == nil {
		start := r.clock.Now()
		propagateFromStart := true
		if w == nil {
			var err error
			if w, propagateFromStart, err = r.openWatch(ctx); err != nil {
				return err
			}
			if w == nil {
				continue // backed off, or ctx is done: the loop checks
			}
		}
		events, _, err := r.handleWatch(ctx, start, w, r.store, func(rv string, pastInitialEvents bool) {
			if propagateFromStart || pastInitialEvents {
				r.setLastSyncResourceVersion(rv)
			}
		}, false, resyncErr)
		w = nil // handleWatch stopped it
		if again, err := r.watchEnded(ctx, events, err); !again {
			return err
		}
	}
	return nil
}

// openWatch opens a watch from the last resourceVersion seen, with
// bookmarks and the Reflector's timeout. propagateFromStart is false for a
// watch from "" or "0": it starts with synthetic ADDED events in no
// particular order, whose resourceVersions are not a resume point until
// some other event shows the initial burst is over. A watch the server
// cannot open for now (it is down or overloaded) is backed off and
// reported as no watcher and no error, so the caller tries again from the
// same place, without a costly re-list; any other failure is returned and
// means a re-list.
func (r *Reflector) openWatch(ctx context.Context) (w client.Watcher, propagateFromStart bool, err error) {
	fromRV := r.LastSyncResourceVersion()
	timeout := r.watchTimeoutSeconds()
	opts := r.baseOptions()
	opts.ResourceVersion = fromRV
	opts.TimeoutSeconds = &timeout
	opts.AllowWatchBookmarks = true
	w, err = r.lw.Watch(ctx, opts)
	if err == nil && w == nil {
		err = ErrNoWatcher
	}
	switch {
	case err == nil:
		r.tr.Printf(narrate.Reflector, "%swatch opened from rv %s (timeoutSeconds=%d, bookmarks on)", r.prefix, fromRV, timeout)
		return w, fromRV != "" && fromRV != "0", nil
	case ctx.Err() != nil:
		return nil, false, nil
	case isWatchErrorRetriable(err):
		// What we hold is still valid: wait and watch again.
		r.reportError(fmt.Errorf("%s: watch from resourceVersion %q: %w", r.name, fromRV, err))
		d := r.backoff.next()
		r.tr.Printf(narrate.Reflector, "%sbackoff %v, then re-watch from rv %s (no re-list)", r.prefix, d.Round(time.Millisecond), fromRV)
		r.sleep(ctx, d)
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("%s: watch from resourceVersion %q: %w", r.name, fromRV, err)
}

// watchEnded decides what the end of a watch that handled events events
// means: watch again from where it stopped (again), stop (ctx done), or
// re-list (the error returned).
func (r *Reflector) watchEnded(ctx context.Context, events int, err error) (again bool, _ error) {
	switch {
	case err == nil:
		// The watch ended with no error: the server's timeoutSeconds
		// ran out, or it was restarted politely, or the connection
		// dropped (the StreamWatcher takes a reset for an end of
		// stream, as client-go does, so the two look alike here).
		// This is the everyday case the first article's hand-written
		// watch loop gets wrong, and the reason an informer never
		// "goes quiet after 30 minutes":
		// a closed ResultChan is not an error and not a reason to
		// re-list. We simply open a new watch from the last
		// resourceVersion we saw (events and BOOKMARKs keep it fresh),
		// and the server replays whatever happened in between.
		r.tr.Printf(narrate.Reflector, "%swatch ended with no error after %s; re-watch from rv %s without re-listing",
			r.prefix, plural(events, "event"), r.LastSyncResourceVersion())
		return true, nil
	case errors.Is(err, errStopRequested):
		return false, nil
	case api.IsTooManyRequests(err):
		r.reportError(fmt.Errorf("%s: watch: %w", r.name, err))
		d := r.backoff.next()
		r.tr.Printf(narrate.Reflector, "%swatch closed: 429 too many requests; backoff %v, then re-watch from rv %s (no re-list)",
			r.prefix, d.Round(time.Millisecond), r.LastSyncResourceVersion())
		return r.sleep(ctx, d), nil
	case isExpiredError(err):
		// The resourceVersion we were watching from has been
		// compacted: events are lost, only a re-list can recover. It
		// first asks for that same resourceVersion (not older than
		// what we saw), which the watch cache can usually serve.
		r.tr.Printf(narrate.Reflector, "%swatch closed: %v (410); re-list", r.prefix, err)
		return false, fmt.Errorf("%s: watch: %w", r.name, err)
	}
	r.tr.Printf(narrate.Reflector, "%swatch closed: %v; re-list", r.prefix, err)
	return false, fmt.Errorf("%s: watch: %w", r.name, err)
}

// handleWatch feeds w's events into store until the stream ends, an ERROR
// event arrives, errc reports an error or ctx is done. setRV is told each
// event's resourceVersion and whether the stream is past its initial ADDED
// events. With exitOnInitialEventsEnd it returns as soon as the BOOKMARK
// that ends a watch-list's initial events arrives, leaving w open;
// otherwise it always stops w. It returns the number of events handled and
// whether that bookmark was seen. A clean end of stream returns a nil
// error.
func (r *Reflector) handleWatch(ctx context.Context, start time.Time, w client.Watcher, store Store,
	setRV func(rv string, pastInitialEvents bool), exitOnInitialEventsEnd bool, errc <-chan error,
) (events int, initialEventsEnd bool, err error) {
	stopWatcher := true
	defer func() {
		if stopWatcher {
			w.Stop()
		}
	}()
	pastInitialEvents := false
	results := w.ResultChan()
	for {
		select {
		case <-ctx.Done():
			return events, initialEventsEnd, errStopRequested
		case err := <-errc:
			return events, initialEventsEnd, err
		case ev, ok := <-results:
			if !ok {
				if events == 0 && r.clock.Since(start) < time.Second {
					return events, initialEventsEnd, &VeryShortWatchError{Name: r.name}
				}
				return events, initialEventsEnd, nil
			}
			if ev.Type == api.Error {
				return events, initialEventsEnd, r.errorEvent(ev)
			}
			past, end, handled := r.deliver(store, ev)
			if !handled {
				continue
			}
			pastInitialEvents = pastInitialEvents || past
			initialEventsEnd = initialEventsEnd || end
			if rv := ev.Object.Metadata.ResourceVersion; rv != "" {
				setRV(rv, pastInitialEvents)
			}
			events++
			if exitOnInitialEventsEnd && initialEventsEnd {
				stopWatcher = false
				return events, initialEventsEnd, nil
			}
		}
	}
}

// errorEvent is the error an ERROR event carries: its Status (a 410
// Expired, say), which ends the watch.
func (r *Reflector) errorEvent(ev api.Event) error {
	if ev.Status == nil {
		return errors.New("watch ERROR event without a status")
	}
	r.tr.Printf(narrate.Reflector, "%sevent ERROR %d %s: %s", r.prefix, ev.Status.Code, ev.Status.Reason, ev.Status.Message)
	return ev.Status
}

// deliver hands one watch event's object to store. It reports whether the
// event shows the stream past its initial ADDED events (anything but an
// ADDED does), whether it is the BOOKMARK that ends a watch-list's initial
// events, and, in handled, false for an event it skipped (no object, or a
// type it does not know). A store that fails is reported, not fatal: the
// next re-list repairs it.
func (r *Reflector) deliver(store Store, ev api.Event) (pastInitialEvents, initialEventsEnd, handled bool) {
	obj := ev.Object
	if obj == nil {
		r.reportError(fmt.Errorf("%s: %s event without an object, skipped", r.name, ev.Type))
		return false, false, false
	}
	rv := obj.Metadata.ResourceVersion
	if r.tr.Enabled() {
		if ev.Type == api.Bookmark {
			r.tr.Printf(narrate.Reflector, "%sevent BOOKMARK rv=%s", r.prefix, rv)
		} else {
			r.tr.Printf(narrate.Reflector, "%sevent %s %s rv=%s", r.prefix, ev.Type, obj.Key(), rv)
		}
	}
	var err error
	switch ev.Type {
	case api.Added:
		err = store.Add(obj)
	case api.Modified:
		pastInitialEvents = true
		err = store.Update(obj)
	case api.Deleted:
		pastInitialEvents = true
		err = store.Delete(obj)
	case api.Bookmark:
		// Nothing changed; the server says "you are up to date to
		// rv". Remembering it makes the next watch start here.
		pastInitialEvents = true
		initialEventsEnd = obj.Metadata.Annotations[api.InitialEventsEndAnnotation] == "true"
		if bs, ok := store.(BookmarkStore); ok {
			err = bs.Bookmark(rv)
		}
	default:
		r.reportError(fmt.Errorf("%s: unknown watch event type %q, skipped", r.name, ev.Type))
		return false, false, false
	}
	if err != nil {
		r.reportError(fmt.Errorf("%s: storing %s %s: %w", r.name, ev.Type, obj.Key(), err))
	}
	return pastInitialEvents, initialEventsEnd, true
}

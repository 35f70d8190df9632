package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// WatchListUnsupported is implemented by a ListerWatcher that knows its
// server cannot stream the initial state (client-go's
// watchlist.DoesClientNotSupportWatchListSemantics): a Reflector in
// WatchList mode then lists instead, without trying.
type WatchListUnsupported interface {
	IsWatchListSemanticsUnSupported() bool
}

func watchListUnsupported(lw ListerWatcher) bool {
	u, ok := lw.(WatchListUnsupported)
	return ok && u.IsWatchListSemanticsUnSupported()
}

// watchList fetches the initial state with one streaming watch instead of
// a list (KEP-3157 "watch-list", client-go's Reflector.watchList): the
// server sends an ADDED event for every object, then a BOOKMARK annotated
// k8s.io/initial-events-end whose resourceVersion the state is consistent
// with. The objects are gathered apart from the Store, handed over with one
// Replace, and the same stream then carries on as the ordinary watch.
//
// It returns the still-open watch, or (nil, nil) when ctx is done. Failures
// are handled as client-go does:
//   - the watch cannot connect, or answers 429 (at the start or as an
//     ERROR event): back off and stream again;
//   - 410 Expired or 504 "too large resource version": stream again at
//     once from resourceVersion "" (the latest state);
//   - the stream ends cleanly before the bookmark: stream again at once
//     (unless it was a very short watch, below);
//   - anything else, including a watch that closed within a second without
//     an event (VeryShortWatchError) and a server that refuses
//     sendInitialEvents: return the error, and the caller falls back to
//     list+watch for this round.
func (r *Reflector) watchList(ctx context.Context) (client.Watcher, error) {
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		w, retry, err := r.watchListOnce(ctx)
		if w != nil || (err == nil && !retry) {
			return w, nil
		}
		if !retry {
			return nil, err
		}
		if err == nil {
			continue // ended before the bookmark: try again
		}
		switch {
		case isWatchErrorRetriable(err):
			r.reportError(err)
			d := r.backoff.next()
			r.tr.Printf(narrate.Reflector, "%swatch-list: %v; backoff %v, then stream again", r.prefix, err, d.Round(time.Millisecond))
			if !r.sleep(ctx, d) {
				return nil, nil
			}
		case isExpiredError(err) || isTooLargeResourceVersionError(err):
			// The resourceVersion we asked for is gone or not reached
			// yet: ask for a consistent snapshot of the latest state.
			r.setLastSyncRVUnavailable(true)
			r.tr.Printf(narrate.Reflector, "%swatch-list: %v; stream again from rv \"\" (latest)", r.prefix, err)
		}
	}
}

// watchListOnce makes one watch-list attempt. It returns the open watch on
// success; otherwise whether watchList should try again, and why.
func (r *Reflector) watchListOnce(ctx context.Context) (w client.Watcher, retry bool, err error) {
	timeout := r.watchTimeoutSeconds()
	sendInitialEvents := true
	opts := r.baseOptions()
	// "" with NotOlderThan: a consistent snapshot of the latest state.
	// A known resourceVersion: a snapshot at least that fresh.
	opts.ResourceVersion = r.rewatchResourceVersion()
	opts.ResourceVersionMatch = api.ResourceVersionMatchNotOlderThan
	opts.SendInitialEvents = &sendInitialEvents
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = &timeout
	start := r.clock.Now()
	w, err = r.lw.Watch(ctx, opts)
	if err == nil && w == nil {
		err = ErrNoWatcher
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, nil
		}
		err = fmt.Errorf("%s: watch-list from resourceVersion %q: %w", r.name, opts.ResourceVersion, err)
		return nil, retriableWatchListError(err), err
	}
	r.tr.Printf(narrate.Reflector, "%swatch-list opened from rv %q (sendInitialEvents, timeoutSeconds=%d)", r.prefix, opts.ResourceVersion, timeout)

	initial := newGatherStore()
	var rv string
	_, done, err := r.handleWatch(ctx, start, w, initial, func(eventRV string, pastInitialEvents bool) {
		// The synthetic ADDED events come in no resourceVersion order;
		// only the closing BOOKMARK (or a later event) says where we are.
		if pastInitialEvents {
			rv = eventRV
		}
	}, true, nil)
	switch {
	case errors.Is(err, errStopRequested):
		return nil, false, nil // handleWatch stopped w
	case err != nil:
		err = fmt.Errorf("%s: watch-list: %w", r.name, err)
		return nil, retriableWatchListError(err), err
	case !done:
		// A clean end before the bookmark; handleWatch stopped w.
		r.tr.Printf(narrate.Reflector, "%swatch-list: %v; stream again", r.prefix, ErrInitialEventsIncomplete)
		return nil, true, nil
	}
	items := initial.list()
	r.tr.Printf(narrate.Reflector, "%sstreamed %s at rv %s (initial-events-end bookmark)", r.prefix, plural(len(items), "item"), rv)
	if err := r.store.Replace(items, rv); err != nil {
		w.Stop()
		return nil, false, fmt.Errorf("%s: replacing the store with the watch-list at resourceVersion %s: %w", r.name, rv, err)
	}
	r.setLastSyncRVUnavailable(false)
	r.setLastSyncResourceVersion(rv)
	return w, false, nil
}

// retriableWatchListError is client-go's isErrorRetriableWithSideEffectsFn
// without the side effects: the errors after which a watch-list is tried
// again rather than given up for a list.
func retriableWatchListError(err error) bool {
	return isWatchErrorRetriable(err) || isExpiredError(err) || isTooLargeResourceVersionError(err)
}

// gatherStore collects a watch-list's initial events, keyed like the
// informer's cache and kept in arrival order.
type gatherStore struct {
	order []string
	objs  map[string]*api.Object
}

func newGatherStore() *gatherStore { return &gatherStore{objs: map[string]*api.Object{}} }

func (g *gatherStore) Add(obj *api.Object) error {
	k := obj.Key()
	if _, ok := g.objs[k]; !ok {
		g.order = append(g.order, k)
	}
	g.objs[k] = obj
	return nil
}

func (g *gatherStore) Update(obj *api.Object) error { return g.Add(obj) }

func (g *gatherStore) Delete(obj *api.Object) error {
	delete(g.objs, obj.Key())
	return nil
}

func (g *gatherStore) Replace([]*api.Object, string) error {
	return errors.New("reflector: Replace during a watch-list")
}

func (g *gatherStore) Resync() error { return nil }

func (g *gatherStore) list() []*api.Object {
	out := make([]*api.Object, 0, len(g.objs))
	for _, k := range g.order {
		if o, ok := g.objs[k]; ok {
			out = append(out, o)
			delete(g.objs, k) // a key deleted and re-added appears once
		}
	}
	return out
}

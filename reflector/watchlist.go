package reflector

import (
	"context"
	"errors"
	"fmt"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// watchList fetches the initial state with one streaming watch instead of
// a list (KEP-3157 "watch-list", client-go's Reflector.watchList): the
// server sends an ADDED event for every object, then a BOOKMARK annotated
// k8s.io/initial-events-end whose resourceVersion the state is consistent
// with. The objects are gathered apart from the Store, handed over with one
// Replace, and the same stream then carries on as the ordinary watch.
//
// It returns the still-open watch. On any error the caller falls back to
// list+watch.
func (r *Reflector) watchList(ctx context.Context) (client.Watcher, error) {
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
	w, err := r.lw.Watch(ctx, opts)
	if err == nil && w == nil {
		err = ErrNoWatcher
	}
	if err != nil {
		return nil, fmt.Errorf("%s: watch-list from resourceVersion %q: %w", r.name, opts.ResourceVersion, err)
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
	if errors.Is(err, errStopRequested) {
		return nil, nil // handleWatch stopped w
	}
	if err == nil && !done {
		err = ErrInitialEventsIncomplete
	}
	if err != nil {
		if done { // handleWatch leaves w open only when done
			w.Stop()
		}
		return nil, fmt.Errorf("%s: watch-list: %w", r.name, err)
	}
	items := initial.list()
	r.tr.Printf(narrate.Reflector, "%sstreamed %s at rv %s (initial-events-end bookmark)", r.prefix, plural(len(items), "item"), rv)
	if err := r.store.Replace(items, rv); err != nil {
		w.Stop()
		return nil, fmt.Errorf("%s: replacing the store with the watch-list at resourceVersion %s: %w", r.name, rv, err)
	}
	r.setLastSyncRVUnavailable(false)
	r.setLastSyncResourceVersion(rv)
	return w, nil
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

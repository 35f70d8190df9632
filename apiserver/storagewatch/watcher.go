package storagewatch

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/store"
)

// Why a Watcher ended, as Next returns it. Either way the client sees a
// clean end of the stream and watches again.
var (
	// ErrStatusSent: the watch sent one in-stream ERROR event (410 for a
	// compacted resourceVersion, 504 for one ahead of the store with
	// sendInitialEvents) and ended.
	ErrStatusSent = errors.New("store watch ended after an in-stream ERROR event")
	// ErrEnded: the store ended the watch (the store closed, or this
	// watch fell behind it).
	ErrEnded = errors.New("store watch ended")
)

// maxBatch bounds the initial ADDED frames one Next hands out, so a large
// collection is written in several writes rather than held at once.
const maxBatch = 256

// Config says what one Watcher watches.
type Config struct {
	// Store is the store the resource lives in.
	Store store.Interface
	// Prefix is the store prefix the watch covers: the resource's, or one
	// namespace's of it.
	Prefix string
	// Kind and APIVersion stamp BOOKMARK objects ({"kind":"Event",...}).
	Kind, APIVersion string
	// ID numbers the watch in narration and the debug view.
	ID int64
	// Stopping ends the watch, cleanly, when it is done: the apiserver
	// stopping. (A watch cache's watches end when the cache stops; these
	// have no cache.) nil never ends it.
	Stopping context.Context
}

// Watcher is one client's watch of the store: Kubernetes' etcd3 watchChan.
// It has no goroutine of its own: the HTTP writer's goroutine reads the
// store watch in Next.
type Watcher struct {
	cfg  Config
	opts cacher.WatchOptions

	// What the watch starts with, in order: the current objects as ADDED
	// events (initial), then the initial-events-end BOOKMARK at
	// endBookmarkRev (if > 0). errFrame, if set, is all it sends.
	initial        []*api.Object
	endBookmarkRev int64
	errFrame       []byte

	sw store.Watcher // nil when the watch is only errFrame
	// release stops Config.Stopping from ending the watch; cancel ends
	// the store watch's context.
	release  func() bool
	cancel   context.CancelFunc
	stopOnce sync.Once
}

// Start opens a watch of the store as kube-apiserver's etcd3 watcher
// starts one (watcher.Watch, watchChan.startWatching). An error is the
// request's; a failure the client is told in-stream is the Watcher's one
// ERROR frame.
func Start(ctx context.Context, cfg Config, opts cacher.WatchOptions) (*Watcher, error) {
	w := &Watcher{cfg: cfg, opts: opts}
	ctx, w.cancel = context.WithCancel(ctx)
	w.release = func() bool { return false }
	if cfg.Stopping != nil {
		w.release = context.AfterFunc(cfg.Stopping, w.cancel)
	}
	sw, err := w.start(ctx)
	if err != nil {
		w.Stop()
		return nil, err
	}
	w.sw = sw
	return w, nil
}

// start reads what the watch starts with and opens the store watch after
// it; a failure told in-stream leaves it nil.
func (w *Watcher) start(ctx context.Context) (store.Watcher, error) {
	cfg, opts := w.cfg, w.opts
	rv := int64(0)
	if opts.RVSet {
		rv = opts.ResourceVersion
	}
	send := opts.SendInitialEvents
	// areInitialEventsRequired: none asked for and no resourceVersion (the
	// legacy watch from "0"), or sendInitialEvents=true.
	initial := (send == nil && rv == 0) || (send != nil && *send)
	from := rv
	switch {
	case rv == 0 && !initial:
		// sendInitialEvents=false from no particular point: the changes
		// from now on (getStartWatchResourceVersion).
		cur, err := cfg.Store.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		from = cur
	case rv > 0 && initial:
		cur, err := cfg.Store.CurrentRevision(ctx)
		if err != nil {
			return nil, err
		}
		if rv > cur {
			// wait.Jitter(1*time.Second, 3), in whole seconds.
			w.fail(api.NewTooLargeResourceVersion(uint64(rv), uint64(cur), 1+rand.IntN(3)))
			return nil, nil
		}
	}
	if initial {
		// watchChan.sync: the current objects, and the revision they were
		// read at, which the watch goes on from.
		page, err := cfg.Store.List(ctx, cfg.Prefix, store.ListOptions{})
		if err != nil {
			return nil, err
		}
		w.initial, from = page.Items, page.Revision
		if send != nil && *send && opts.AllowBookmarks {
			w.endBookmarkRev = from
		}
	}
	sw, err := cfg.Store.Watch(ctx, cfg.Prefix, from)
	if errors.Is(err, store.ErrCompacted) {
		w.fail(tooOld())
		return nil, nil
	}
	return sw, err
}

// tooOld is etcd's compaction error as the watch reports it
// (interpretWatchError).
func tooOld() *api.Status {
	return api.NewResourceExpired("The resourceVersion for the provided watch is too old.")
}

// fail makes w a watch that sends st in-stream and ends.
func (w *Watcher) fail(st *api.Status) {
	w.initial, w.endBookmarkRev = nil, 0
	ev := api.Event{Type: api.Error, Status: st}
	w.errFrame = append(ev.AppendJSON(nil), '\n')
}

// ID numbers the watch.
func (w *Watcher) ID() int64 { return w.cfg.ID }

// Next appends the frames ready to buf: the initial ones first, then, once
// at least one change is there, every change the store watch has
// delivered. It blocks until there is one, the watch ends (its last
// frames, then ErrStatusSent or ErrEnded) or ctx is done.
func (w *Watcher) Next(ctx context.Context, buf [][]byte) ([][]byte, error) {
	if w.sw == nil { // the watch is one in-stream ERROR
		if w.errFrame != nil {
			buf = append(buf, w.errFrame)
			w.errFrame = nil
		}
		return buf, ErrStatusSent
	}
	if len(w.initial) > 0 || w.endBookmarkRev > 0 {
		return w.nextInitial(buf), nil
	}
	for {
		select {
		case ev, ok := <-w.sw.Events():
			if !ok {
				return w.ended(buf)
			}
			buf = w.appendFrame(buf, ev)
			// Whatever else has arrived goes in the same write.
			for len(w.sw.Events()) > 0 {
				if ev, ok = <-w.sw.Events(); !ok {
					return w.ended(buf)
				}
				buf = w.appendFrame(buf, ev)
			}
			if len(buf) > 0 {
				return buf, nil
			}
		case <-ctx.Done():
			return buf, ctx.Err()
		}
	}
}

// nextInitial hands out the next batch of initial ADDED frames, and the
// initial-events-end BOOKMARK after the last.
func (w *Watcher) nextInitial(buf [][]byte) [][]byte {
	n := 0
	for len(w.initial) > 0 && n < maxBatch {
		obj := w.initial[0]
		w.initial[0] = nil
		w.initial = w.initial[1:]
		if w.opts.Matches(obj) {
			buf = append(buf, frame(api.Added, obj))
			n++
		}
	}
	if len(w.initial) == 0 && w.endBookmarkRev > 0 {
		bm := &api.Object{Kind: w.cfg.Kind, APIVersion: w.cfg.APIVersion, Metadata: api.ObjectMeta{
			ResourceVersion: strconv.FormatInt(w.endBookmarkRev, 10),
			Annotations:     map[string]string{api.InitialEventsEndAnnotation: "true"}}}
		buf = append(buf, frame(api.Bookmark, bm))
		w.endBookmarkRev = 0
	}
	return buf
}

// ended is the end of the store watch: a compaction it could not get past
// is a 410 in-stream, anything else a clean end.
func (w *Watcher) ended(buf [][]byte) ([][]byte, error) {
	if errors.Is(w.sw.Err(), store.ErrCompacted) {
		w.fail(tooOld())
		buf = append(buf, w.errFrame)
		w.errFrame = nil
		return buf, ErrStatusSent
	}
	return buf, ErrEnded
}

// appendFrame appends the frame one change is for this watch, if any
// (watchChan.transform): a change to an object that matches the selectors
// before and after is itself; one that starts matching is ADDED; one that
// stops matching is DELETED with the previous state, stamped with the
// change's revision.
func (w *Watcher) appendFrame(buf [][]byte, ev store.Event) [][]byte {
	switch {
	case ev.IsProgress():
		// Never asked for (there are no bookmarks here); skipped.
	case ev.Type == api.Added || ev.Type == api.Deleted:
		if w.opts.Matches(ev.Object) {
			buf = append(buf, frame(ev.Type, ev.Object))
		}
	case w.opts.MatchesEverything():
		buf = append(buf, frame(api.Modified, ev.Object))
	default:
		now, before := w.opts.Matches(ev.Object), w.opts.Matches(ev.PrevObject)
		switch {
		case now && before:
			buf = append(buf, frame(api.Modified, ev.Object))
		case now:
			buf = append(buf, frame(api.Added, ev.Object))
		case before:
			prev := *ev.PrevObject // shallow: only the resourceVersion changes
			prev.Metadata.ResourceVersion = strconv.FormatInt(ev.Revision, 10)
			buf = append(buf, frame(api.Deleted, &prev))
		}
	}
	return buf
}

// frame encodes one watch event, {"type":T,"object":...}\n.
func frame(typ api.EventType, obj *api.Object) []byte {
	ev := api.Event{Type: typ, Object: obj}
	return append(ev.AppendJSON(nil), '\n')
}

// Pending reports whether Next would return frames at once.
func (w *Watcher) Pending() bool {
	return w.errFrame != nil || len(w.initial) > 0 || w.endBookmarkRev > 0 ||
		(w.sw != nil && len(w.sw.Events()) > 0)
}

// Sent does nothing: a store watch keeps no counts. (The watch cache's
// count is what /metrics and the debug view show.)
func (w *Watcher) Sent(int) {}

// Stop ends the store watch; idempotent.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		w.release()
		w.cancel()
		if w.sw != nil {
			w.sw.Stop()
		}
	})
}

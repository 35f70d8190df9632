package etcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// watcher is one etcd watch translated into store events. A goroutine reads
// the etcd client's channel and forwards each change, blocking while the
// reader is behind: etcd and its client buffer meanwhile, and an etcd watch
// that falls too far behind is ended by etcd itself (then Err says why).
type watcher struct {
	s      *Store
	prefix string
	ctx    context.Context // the etcd watch's; RequestProgress must use it
	cancel context.CancelFunc
	ch     chan store.Event
	done   chan struct{}
	// stopCtx unregisters the callback that stops the watch with the
	// caller's context.
	stopCtx func() bool

	errMu sync.Mutex
	err   error
}

// Watch opens one etcd watch of the prefix from fromRevision+1, with the
// previous key-value of every change (for DELETED objects and PrevObject)
// and progress notifications, which become progress events (Type
// api.Bookmark) for the watch cache.
//
// etcd reports a compacted start revision on the watch stream, after the
// watch is created; to answer it here, as the in-memory store does, Watch
// first reads the prefix at fromRevision (count only), which fails at once
// if that revision is compacted.
func (s *Store) Watch(ctx context.Context, prefix string, fromRevision int64) (store.Watcher, error) {
	if fromRevision < 0 {
		return nil, invalid("negative revision %d", fromRevision)
	}
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	k := s.key(prefix)
	if fromRevision > 0 {
		_, err := s.cli.Get(ctx, k, clientv3.WithRev(fromRevision), clientv3.WithCountOnly())
		if err != nil && !isFutureRev(err) { // a future revision is fine: the watch waits
			return nil, s.mapErr(ctx, err, fromRevision)
		}
	}
	w := &watcher{
		s:      s,
		prefix: prefix,
		ch:     make(chan store.Event),
		done:   make(chan struct{}),
	}
	// The watch lives in the store's context (so Close ends it) and ends
	// with the caller's too.
	w.ctx, w.cancel = context.WithCancel(s.ctx)
	w.stopCtx = context.AfterFunc(ctx, w.cancel)
	ech := s.cli.Watch(w.ctx, k, clientv3.WithPrefix(), clientv3.WithRev(fromRevision+1),
		clientv3.WithPrevKV(), clientv3.WithProgressNotify())
	s.wg.Add(1)
	go w.run(ech)
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "etcd watch %s from rev %d", prefix, fromRevision)
	}
	return w, nil
}

// run forwards etcd's responses until the watch ends.
func (w *watcher) run(ech clientv3.WatchChan) {
	defer w.s.wg.Done()
	err := w.forward(ech)
	w.cancel()
	w.stopCtx()
	// Drain what the client still sends so its goroutines can exit.
	for range ech {
	}
	switch {
	case w.s.closed.Load():
		err = store.ErrClosed
	case errors.Is(err, context.Canceled):
		err = nil // stopped by Stop or the caller's context
	}
	w.errMu.Lock()
	w.err = err
	w.errMu.Unlock()
	close(w.ch)
	close(w.done)
	if err != nil && w.s.tr.Enabled() {
		w.s.tr.Printf(narrate.Store, "etcd watch %s ended: %v", w.prefix, err)
	}
}

// forward translates and sends responses; it returns why it stopped.
func (w *watcher) forward(ech clientv3.WatchChan) error {
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case resp, ok = <-ech:
		case <-w.ctx.Done():
			return w.ctx.Err()
		}
		if !ok {
			if err := w.ctx.Err(); err != nil {
				return err
			}
			return errors.New("etcd watch channel closed")
		}
		if resp.CompactRevision != 0 {
			w.s.noteCompacted(resp.CompactRevision)
			return fmt.Errorf("etcd watch %s: %w", w.prefix,
				&store.CompactedError{Requested: resp.Header.Revision, Compacted: resp.CompactRevision})
		}
		if err := resp.Err(); err != nil {
			return fmt.Errorf("etcd watch %s: %w", w.prefix, err)
		}
		if resp.IsProgressNotify() {
			if !w.send(store.Event{Type: api.Bookmark, Revision: resp.Header.Revision}) {
				return w.ctx.Err()
			}
			continue
		}
		for _, e := range resp.Events {
			ev, err := w.translate(e)
			if err != nil {
				return err
			}
			if !w.send(ev) {
				return w.ctx.Err()
			}
		}
	}
}

// translate turns one etcd event into a store event, as the etcd3 watcher's
// parseEvent and transform do.
func (w *watcher) translate(e *clientv3.Event) (store.Event, error) {
	key := strings.TrimPrefix(string(e.Kv.Key), w.s.opts.Prefix)
	rev := e.Kv.ModRevision
	ev := store.Event{Key: key, Revision: rev}
	if e.PrevKv != nil {
		prev, err := decode(key, e.PrevKv.Value, e.PrevKv.ModRevision)
		if err != nil {
			return ev, err
		}
		ev.PrevObject = prev
	}
	switch {
	case e.Type == clientv3.EventTypeDelete:
		if ev.PrevObject == nil {
			return ev, fmt.Errorf("etcd: delete of %s at revision %d without its previous value", key, rev)
		}
		ev.Type = api.Deleted
		// The last state, stamped with the deletion's revision.
		tomb := *ev.PrevObject
		tomb.Metadata.ResourceVersion = formatRevision(rev)
		ev.Object = &tomb
		return ev, nil
	case e.IsCreate():
		ev.Type = api.Added
		ev.PrevObject = nil
	default:
		ev.Type = api.Modified
	}
	obj, err := decode(key, e.Kv.Value, rev)
	if err != nil {
		return ev, err
	}
	ev.Object = obj
	return ev, nil
}

func (w *watcher) send(ev store.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-w.ctx.Done():
		return false
	}
}

// Events delivers the changes and progress events; closed when the watch
// ends.
func (w *watcher) Events() <-chan store.Event { return w.ch }

// Err says why Events was closed; nil after Stop or the caller's context.
func (w *watcher) Err() error {
	w.errMu.Lock()
	defer w.errMu.Unlock()
	return w.err
}

// Stop ends the watch and waits until Events is closed.
func (w *watcher) Stop() {
	w.cancel()
	<-w.done
}

// RequestProgress asks etcd for a progress notification (clientv3
// RequestProgress). etcd answers on the gRPC stream of the watch's context,
// to every watch on that stream, once they are all synced with its current
// revision; until then it may not answer, and the caller asks again.
func (w *watcher) RequestProgress(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-w.done:
		return nil // ended: nothing to report progress on
	default:
	}
	if err := w.s.cli.RequestProgress(w.ctx); err != nil {
		if w.ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("etcd: progress request: %w", err)
	}
	return nil
}

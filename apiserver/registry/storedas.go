package registry

import (
	"context"
	"sync"

	"listwatch/api"
	"listwatch/store"
)

// StoredAs makes a resource another API version of a collection stored in
// the shape of another resource: its objects are converted on the way into
// the store and on the way out, so an object written through either API
// is read through both. kube-apiserver does this for every resource served
// in several versions, and for Events across two groups: the storage
// factory makes events.k8s.io Events cohabit with core Events
// (AddCohabitatingResources in pkg/kubeapiserver/default_storage_factory_builder.go),
// both are kept in etcd as core/v1 Events under /registry/events/, and the
// codec converts each request's version to and from the stored one
// (pkg/apis/events/v1/conversion.go).
type StoredAs struct {
	// ToStorage converts an object of the served version to the stored
	// one; FromStorage converts back. Neither changes its argument.
	ToStorage, FromStorage func(*api.Object) *api.Object
}

// Storage is the store as this resource sees it: st itself, or for a
// resource StoredAs another, st with every object converted to and from
// the stored version.
func (r *Resource) Storage(st store.Interface) store.Interface {
	if r.StoredAs == nil {
		return st
	}
	return convertingStore{Interface: st, conv: r.StoredAs}
}

// convertingStore converts objects to the stored version on the way in and
// back on the way out; what it does not override (revisions, compaction)
// is the store's.
type convertingStore struct {
	store.Interface
	conv *StoredAs
}

// from converts a stored object; nil stays nil.
func (s convertingStore) from(o *api.Object) *api.Object {
	if o == nil {
		return nil
	}
	return s.conv.FromStorage(o)
}

func (s convertingStore) Create(ctx context.Context, key string, obj *api.Object) (*api.Object, error) {
	out, err := s.Interface.Create(ctx, key, s.conv.ToStorage(obj))
	return s.from(out), err
}

func (s convertingStore) Get(ctx context.Context, key string) (*api.Object, error) {
	out, err := s.Interface.Get(ctx, key)
	return s.from(out), err
}

// List filters the converted objects, as a field selector names the
// served version's fields.
func (s convertingStore) List(ctx context.Context, prefix string, opts store.ListOptions) (*store.ListResult, error) {
	if f := opts.Filter; f != nil {
		opts.Filter = func(o *api.Object) bool { return f(s.conv.FromStorage(o)) }
	}
	page, err := s.Interface.List(ctx, prefix, opts)
	if err != nil {
		return nil, err
	}
	out := *page
	out.Items = make([]*api.Object, len(page.Items))
	for i, o := range page.Items {
		out.Items[i] = s.conv.FromStorage(o)
	}
	return &out, nil
}

func (s convertingStore) Update(ctx context.Context, key string, obj *api.Object, pre store.Preconditions) (*api.Object, error) {
	out, err := s.Interface.Update(ctx, key, s.conv.ToStorage(obj), pre)
	return s.from(out), err
}

func (s convertingStore) GuaranteedUpdate(ctx context.Context, key string, tryUpdate func(*api.Object) (*api.Object, error)) (*api.Object, error) {
	out, err := s.Interface.GuaranteedUpdate(ctx, key, func(cur *api.Object) (*api.Object, error) {
		next, err := tryUpdate(s.conv.FromStorage(cur))
		if err != nil || next == nil {
			return next, err
		}
		return s.conv.ToStorage(next), nil
	})
	return s.from(out), err
}

func (s convertingStore) Delete(ctx context.Context, key string, pre store.Preconditions) (*api.Object, error) {
	out, err := s.Interface.Delete(ctx, key, pre)
	return s.from(out), err
}

// Watch converts each event's objects, in a goroutine of the watch's own
// that ends with it.
func (s convertingStore) Watch(ctx context.Context, prefix string, fromRevision int64) (store.Watcher, error) {
	w, err := s.Interface.Watch(ctx, prefix, fromRevision)
	if err != nil {
		return nil, err
	}
	cw := &convertingWatcher{Watcher: w, events: make(chan store.Event, cap(w.Events())), stopped: make(chan struct{}), done: make(chan struct{})}
	go cw.run(s)
	return cw, nil
}

// convertingWatcher is a store watch whose events carry converted objects.
type convertingWatcher struct {
	store.Watcher
	events   chan store.Event
	stopped  chan struct{} // closed by Stop
	stopOnce sync.Once
	done     chan struct{} // closed when run has returned and events is closed
}

func (w *convertingWatcher) run(s convertingStore) {
	defer close(w.done)
	defer close(w.events)
	for ev := range w.Watcher.Events() {
		ev.Object, ev.PrevObject = s.from(ev.Object), s.from(ev.PrevObject)
		select {
		case w.events <- ev:
		case <-w.stopped:
			return
		}
	}
}

func (w *convertingWatcher) Events() <-chan store.Event { return w.events }

// Stop ends the watch; when it returns, Events is closed.
func (w *convertingWatcher) Stop() {
	w.stopOnce.Do(func() { close(w.stopped) })
	w.Watcher.Stop()
	<-w.done
}

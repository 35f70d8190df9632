package informer

import (
	"errors"
	"fmt"

	"listwatch/api"
	"listwatch/fifo"
)

// This file is the seam between the Reflector and the queue: the Store the
// Reflector writes to (reflector.Store) is the informer's queue behind a
// thin wrapper. In client-go the Reflector writes to the DeltaFIFO or
// RealFIFO directly, and the transform runs inside the queue
// (newQueueFIFO in tools/cache/controller.go hands it over as the queue's
// Transformer); our queues take no transform, so the informer applies it
// on the way in.

// queueFeeder is the Store the Reflector writes to: the queue, with the
// transform applied first and the informer told when the queue has synced.
type queueFeeder struct {
	s *SharedIndexInformer
	q fifo.Queue
}

func (f *queueFeeder) Add(obj *api.Object) error {
	o, err := f.s.transform(obj)
	return errors.Join(err, f.q.Add(o))
}

func (f *queueFeeder) Update(obj *api.Object) error {
	o, err := f.s.transform(obj)
	return errors.Join(err, f.q.Update(o))
}

func (f *queueFeeder) Delete(obj *api.Object) error {
	o, err := f.s.transform(obj)
	return errors.Join(err, f.q.Delete(o))
}

func (f *queueFeeder) Replace(list []*api.Object, rv string) error {
	var errs []error
	out := list
	if f.s.opts.Transform != nil {
		out = make([]*api.Object, len(list))
		for i, obj := range list {
			var err error
			out[i], err = f.s.transform(obj)
			errs = append(errs, err)
		}
	}
	errs = append(errs, f.q.Replace(out, rv))
	// An empty first list syncs the queue with nothing to pop.
	f.s.checkSynced(f.q)
	return errors.Join(errs...)
}

func (f *queueFeeder) Resync() error { return f.q.Resync() }

// Bookmark passes a BOOKMARK's resourceVersion to a queue that takes them
// (an atomic RealFIFO), as client-go's ReflectorBookmarkStore.
func (f *queueFeeder) Bookmark(resourceVersion string) error {
	if b, ok := f.q.(interface{ Bookmark(string) error }); ok {
		return b.Bookmark(resourceVersion)
	}
	return nil
}

// transform applies Options.Transform. If it fails, the object goes on as
// received (nothing is lost) and the error is returned, so the Reflector
// reports it.
func (s *SharedIndexInformer) transform(obj *api.Object) (*api.Object, error) {
	if s.opts.Transform == nil || obj == nil {
		return obj, nil
	}
	key := obj.Key()
	out, err := s.opts.Transform(obj)
	if err != nil {
		return obj, fmt.Errorf("informer %s: transform of %s failed, kept as received: %w", s.name, key, err)
	}
	if out == nil {
		return obj, fmt.Errorf("informer %s: transform of %s returned nil, kept as received", s.name, key)
	}
	return out, nil
}

package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"listwatch/api"
	"listwatch/narrate"
)

// Create stores a new object (ErrAlreadyExists if the key exists), setting
// uid, creationTimestamp and resourceVersion. It stores a deep copy of obj
// and returns that copy, which is shared from then on: read-only.
func (s *Store) Create(ctx context.Context, key string, obj *api.Object) (*api.Object, error) {
	if err := CheckWrite(key, obj); err != nil {
		return nil, err
	}
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	// Copy and stamp outside the lock: only the revision needs it.
	c := obj.DeepCopy()
	c.Metadata.UID = NewUID()
	c.Metadata.CreationTimestamp = s.opts.Now().UTC().Truncate(time.Second)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if _, ok := s.objs[key]; ok {
		return nil, alreadyExists(key)
	}
	rev := s.rev.Load() + 1
	c.Metadata.ResourceVersion = formatRevision(rev)
	s.objs[key] = entry{obj: c, modRev: rev}
	s.keys.insert(key)
	s.commitLocked(Event{Type: api.Added, Key: key, Revision: rev, Object: c})
	return c, nil
}

// Get returns the current object at key (ErrNotFound). The object is shared:
// read-only.
func (s *Store) Get(ctx context.Context, key string) (*api.Object, error) {
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	e, ok := s.objs[key]
	s.mu.RUnlock()
	if !ok {
		return nil, notFound(key)
	}
	return e.obj, nil
}

// Update replaces the object at key (ErrNotFound; ErrConflict if a
// precondition fails). uid and creationTimestamp are kept from the stored
// object whatever obj says, and obj's own resourceVersion is ignored: pass
// it in pre to guard the write. Update always makes a new revision, even if
// nothing changed; GuaranteedUpdate skips such no-op writes as Kubernetes
// does.
func (s *Store) Update(ctx context.Context, key string, obj *api.Object, pre Preconditions) (*api.Object, error) {
	if err := CheckWrite(key, obj); err != nil {
		return nil, err
	}
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	return s.update(key, obj.DeepCopy(), pre, false)
}

// GuaranteedUpdate reads the current object, calls tryUpdate on a copy, and
// writes the result if nothing changed meanwhile, retrying on conflict. An
// error from tryUpdate aborts and is returned as-is.
//
// tryUpdate runs without any store lock held, so it may take its time or even
// call the store; it may change and return the copy it was given (the store
// then owns it) or return a new object. If the result equals the current
// object, apart from resourceVersion, nothing is written and the current
// object is returned with its old resourceVersion: like the etcd3 store, a
// no-op update makes no revision and no watch event. This mirrors
// k8s.io/apiserver/pkg/storage/etcd3 store.GuaranteedUpdate.
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, tryUpdate func(current *api.Object) (*api.Object, error)) (*api.Object, error) {
	if key == "" {
		return nil, invalid("empty key")
	}
	if tryUpdate == nil {
		return nil, invalid("nil tryUpdate for %s", key)
	}
	for {
		if err := s.ctxErr(ctx); err != nil {
			return nil, err
		}
		s.mu.RLock()
		e, ok := s.objs[key]
		s.mu.RUnlock()
		if !ok {
			return nil, notFound(key)
		}
		in := e.obj.DeepCopy()
		out, err := tryUpdate(in)
		if err != nil {
			return nil, err
		}
		if out == nil {
			return nil, invalid("tryUpdate returned no object for %s", key)
		}
		if out != in {
			// A result we did not hand out may still be referenced, and
			// changed, by the caller: copy it on the way in like any write.
			out = out.DeepCopy()
		}
		stored, err := s.update(key, out, Preconditions{ResourceVersion: e.modRev}, true)
		if errors.Is(err, ErrConflict) {
			continue // someone wrote in between: read again and retry
		}
		return stored, err
	}
}

// update commits c, which the store owns, over the current object at key.
func (s *Store) update(key string, c *api.Object, pre Preconditions, skipNoop bool) (*api.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	e, ok := s.objs[key]
	if !ok {
		return nil, notFound(key)
	}
	if err := pre.Check(key, e.obj, e.modRev); err != nil {
		return nil, err
	}
	c.Metadata.UID = e.obj.Metadata.UID
	c.Metadata.CreationTimestamp = e.obj.Metadata.CreationTimestamp
	c.Metadata.ResourceVersion = e.obj.Metadata.ResourceVersion
	if skipNoop && sameObject(c, e.obj) {
		return e.obj, nil
	}
	rev := s.rev.Load() + 1
	c.Metadata.ResourceVersion = formatRevision(rev)
	s.objs[key] = entry{obj: c, modRev: rev}
	s.commitLocked(Event{Type: api.Modified, Key: key, Revision: rev, Object: c, PrevObject: e.obj})
	return c, nil
}

// Delete removes the object at key and returns its last state, with the
// resourceVersion of its last write (ErrNotFound; ErrConflict if a
// precondition fails). The watch event carries the same state stamped with
// the deletion's revision instead.
func (s *Store) Delete(ctx context.Context, key string, pre Preconditions) (*api.Object, error) {
	if key == "" {
		return nil, invalid("empty key")
	}
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	e, ok := s.objs[key]
	if !ok {
		return nil, notFound(key)
	}
	if err := pre.Check(key, e.obj, e.modRev); err != nil {
		return nil, err
	}
	rev := s.rev.Load() + 1
	delete(s.objs, key)
	s.keys.delete(key)
	// A shallow copy is enough: the two share read-only maps and fields and
	// differ only in resourceVersion, as etcd3's watcher sets it.
	tomb := *e.obj
	tomb.Metadata.ResourceVersion = formatRevision(rev)
	s.commitLocked(Event{Type: api.Deleted, Key: key, Revision: rev, Object: &tomb, PrevObject: e.obj})
	return e.obj, nil
}

// commitLocked makes ev's revision the current one: it narrates the commit,
// appends ev to the history (compacting the oldest event if the history is
// full), hands ev to every live watcher and only then publishes the new
// revision, so whoever reads Revision() == N knows every live watcher has
// been given every event up to N. Called with mu held for writing, after the
// state change itself.
func (s *Store) commitLocked(ev Event) {
	if s.tr.Enabled() {
		s.tr.Printf(narrate.Store, "rev %d %s %s", ev.Revision, ev.Type, ev.Key)
	}
	if dropped := s.hist.append(ev); dropped != 0 {
		s.compacted = dropped
	}
	s.dispatchLocked(ev)
	s.rev.Store(ev.Revision)
}

// CheckWrite rejects input that would store an unreachable object (an
// empty key, a nil object) with an error wrapping ErrInvalid. Every store
// checks a write with it before doing anything.
func CheckWrite(key string, obj *api.Object) error {
	if key == "" {
		return invalid("empty key")
	}
	if obj == nil {
		return invalid("nil object for %s", key)
	}
	return nil
}

// formatRevision is the resourceVersion of a revision: its decimal string.
// A resourceVersion is opaque to clients, but to the server it is nothing
// more than the revision at which the object was last written.
func formatRevision(rev int64) string { return strconv.FormatInt(rev, 10) }

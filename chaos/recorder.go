package chaos

import (
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/fifo"
)

// noteKind is the kind of a notification a handler received.
type noteKind uint8

const (
	noteAdd noteKind = iota + 1
	noteUpdate
	noteDelete
	// noteTombstone is an OnDelete with a DeletedFinalStateUnknown: the
	// deletion was only noticed at a re-list.
	noteTombstone
)

func (k noteKind) String() string {
	switch k {
	case noteAdd:
		return "add"
	case noteUpdate:
		return "update"
	case noteDelete:
		return "delete"
	case noteTombstone:
		return "tombstone"
	}
	return "?"
}

// note is one notification, reduced to what the checker needs.
type note struct {
	kind noteKind
	// rv is the resourceVersion of the object handed over (the new one for
	// an update, the last known state for a tombstone; -1 if none).
	rv int64
	// oldRV is an update's old object's resourceVersion.
	oldRV int64
}

// recorder is a handler that writes down every notification, per key, and
// keeps the view of the world the notifications add up to. It can be made
// slow: each notification then takes a while.
type recorder struct {
	delay atomic.Int64 // nanoseconds per notification; 0 is fast

	mu     sync.Mutex
	notes  map[string][]note
	view   map[string]int64 // key → resourceVersion, as the notifications say
	counts [noteTombstone + 1]int64
}

func newRecorder() *recorder {
	return &recorder{notes: map[string][]note{}, view: map[string]int64{}}
}

// setDelay makes each notification take d (0: as fast as possible).
func (r *recorder) setDelay(d time.Duration) { r.delay.Store(int64(d)) }

func (r *recorder) sleep() {
	if d := time.Duration(r.delay.Load()); d > 0 {
		time.Sleep(d) // the handler is slow on purpose; the informer must not care
	}
}

func (r *recorder) add(key string, n note) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes[key] = append(r.notes[key], n)
	r.counts[n.kind]++
	switch n.kind {
	case noteAdd, noteUpdate:
		r.view[key] = n.rv
	case noteDelete, noteTombstone:
		delete(r.view, key)
	}
}

// OnAdd records an add.
func (r *recorder) OnAdd(obj *api.Object, _ bool) {
	r.sleep()
	r.add(obj.Key(), note{kind: noteAdd, rv: revisionOf(obj)})
}

// OnUpdate records an update.
func (r *recorder) OnUpdate(oldObj, newObj *api.Object) {
	r.sleep()
	r.add(newObj.Key(), note{kind: noteUpdate, rv: revisionOf(newObj), oldRV: revisionOf(oldObj)})
}

// OnDelete records a delete, or a tombstone.
func (r *recorder) OnDelete(obj any) {
	r.sleep()
	switch o := obj.(type) {
	case *api.Object:
		r.add(o.Key(), note{kind: noteDelete, rv: revisionOf(o)})
	case fifo.DeletedFinalStateUnknown:
		r.add(o.Key, note{kind: noteTombstone, rv: revisionOf(o.Obj)})
	case *fifo.DeletedFinalStateUnknown:
		r.add(o.Key, note{kind: noteTombstone, rv: revisionOf(o.Obj)})
	}
}

// viewCopy returns the recorder's current view.
func (r *recorder) viewCopy() map[string]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int64, len(r.view))
	for k, v := range r.view {
		out[k] = v
	}
	return out
}

// notesCopy returns every key's notifications so far.
func (r *recorder) notesCopy() map[string][]note {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string][]note, len(r.notes))
	for k, v := range r.notes {
		out[k] = append([]note(nil), v...)
	}
	return out
}

// total is the number of notifications of each kind.
func (r *recorder) total() (adds, updates, deletes, tombstones int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[noteAdd], r.counts[noteUpdate], r.counts[noteDelete], r.counts[noteTombstone]
}

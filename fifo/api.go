package fifo

// CONTRACT FILE: the queue API the reflector and informer are written
// against. The implementation may move these declarations into files named
// after their concepts, but must keep every name and signature.

import (
	"context"
	"errors"

	"listwatch/api"
	"listwatch/narrate"
)

// ErrClosed is returned by Pop once the queue is closed (or its ctx is done).
var ErrClosed = errors.New("fifo: queue closed")

// DeltaType says what happened to an object.
type DeltaType string

// The delta types, as client-go's tools/cache.
const (
	Added   DeltaType = "Added"
	Updated DeltaType = "Updated"
	Deleted DeltaType = "Deleted"
	// Replaced is emitted for every object of a re-list (Replace).
	Replaced DeltaType = "Replaced"
	// Sync is emitted by a periodic resync: no change, just a reminder.
	Sync DeltaType = "Sync"
)

// Delta is one change. Object is an *api.Object, or, for a Deleted delta
// whose final state was missed while disconnected, a DeletedFinalStateUnknown.
type Delta struct {
	Type   DeltaType
	Object any
}

// Deltas is the list of changes queued for one key, oldest first.
type Deltas []Delta

// Oldest returns the first delta, or nil.
func (d Deltas) Oldest() *Delta { return nil }

// Newest returns the last delta, or nil.
func (d Deltas) Newest() *Delta { return nil }

// DeletedFinalStateUnknown is a tombstone: the object was deleted while we
// were not watching, so we only know its last state we had seen.
type DeletedFinalStateUnknown struct {
	Key string
	Obj *api.Object
}

// KeyOf returns the "namespace/name" key of an *api.Object or a tombstone.
func KeyOf(obj any) (string, error) { return "", nil }

// KnownObjects is what the queue may consult to know which keys the
// consumer's cache holds (the informer's Indexer), so Replace can emit
// tombstones for keys the new list no longer has.
type KnownObjects interface {
	ListKeys() []string
	GetByKey(key string) (*api.Object, bool)
}

// Options configures a queue.
type Options struct {
	KnownObjects KnownObjects // may be nil
	Tracer       *narrate.Tracer
}

// Queue is what the Reflector writes to and the informer pops from. Both
// DeltaFIFO and RealFIFO implement it.
type Queue interface {
	Add(obj *api.Object) error
	Update(obj *api.Object) error
	Delete(obj *api.Object) error
	// Replace is a re-list: Replaced deltas for every listed object and
	// tombstones for known keys the list no longer has.
	Replace(list []*api.Object, resourceVersion string) error
	// Resync queues Sync deltas for known keys with nothing queued.
	Resync() error
	// Pop blocks until an item is ready, then calls process with its deltas
	// while no other Pop runs. isInInitialList is true while the items from
	// the first Replace are being popped. Returns ErrClosed after Close or
	// ctx.Err() when ctx is done. An error from process is returned.
	Pop(ctx context.Context, process func(deltas Deltas, isInInitialList bool) error) error
	// HasSynced is true once the first Replace's items have all been popped.
	HasSynced() bool
	// Len is the number of keys (DeltaFIFO) or deltas (RealFIFO) queued.
	Len() int
	// Close unblocks Pop.
	Close()
}

// NewDeltaFIFO returns the classic keyed queue that merges deltas per key.
func NewDeltaFIFO(opts Options) *DeltaFIFO { return nil }

// DeltaFIFO is client-go's tools/cache/delta_fifo.go.
type DeltaFIFO struct{ _ [0]func() }

// NewRealFIFO returns the in-order queue client-go's informers use since 1.33.
func NewRealFIFO(opts Options) *RealFIFO { return nil }

// RealFIFO is client-go's tools/cache/the_real_fifo.go.
type RealFIFO struct{ _ [0]func() }

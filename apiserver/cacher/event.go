package cacher

import (
	"sync"
	"sync/atomic"

	"listwatch/api"
	"listwatch/store"
)

// event is one change as the watch cache keeps it: the store's event plus
// the watch frames encoded from it. The cache's current state is made of
// events too (the last one that touched each key), so the synthetic ADDED
// frames of a watch from resourceVersion 0 are shared and encoded once just
// like live ones.
type event struct {
	typ api.EventType // Added, Modified or Deleted
	key string
	rev int64
	// obj is the new state; for Deleted it is the last state stamped with
	// the deletion's revision, as the store delivers it.
	obj *api.Object
	// prev is the state before the change; nil for Added.
	prev *api.Object
	// size is what the event is charged against the ring's byte budget:
	// twice its object, for the object and the frame encoded from it.
	// appendedBefore is the ring's running total before it (history).
	size, appendedBefore int64

	// frames are built lazily, at most once per kind, and then shared by
	// every watcher that gets this kind of frame for this event (frames.go).
	mu     sync.Mutex
	frames [numFrameKinds]atomic.Pointer[[]byte]
}

func newEvent(ev store.Event) *event {
	return &event{typ: ev.Type, key: ev.Key, rev: ev.Revision, obj: ev.Object, prev: ev.PrevObject,
		size: ringCost(ev)}
}

// ringCost is what a store event costs in the ring: twice its object, for
// the object and the frame encoded from it; nothing for a progress event,
// which only moves the revision.
func ringCost(ev store.Event) int64 {
	if ev.IsProgress() {
		return 0
	}
	return 2 * ev.Object.Size()
}

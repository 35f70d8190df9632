package fifo

import (
	"listwatch/api"
	"listwatch/narrate"
)

// DeletedFinalStateUnknown is a tombstone: the object was deleted while we
// were not watching, so we only know its last state we had seen.
//
// A queue creates one on Replace for every key it knows of that the new
// list no longer has. Obj is the newest version the queue or the consumer's
// cache held, and may be stale; it is nil when the consumer listed the key
// but could no longer return the object. Consumers must be ready to find a
// tombstone where they expect an *api.Object in a Deleted delta.
type DeletedFinalStateUnknown struct {
	Key string
	Obj *api.Object
}

// tombstoneFor builds the tombstone for key from the newest thing known about
// it. A tombstone of a tombstone would hide the object one level deeper than
// consumers look, so an existing tombstone is unwrapped.
func tombstoneFor(key string, last any) DeletedFinalStateUnknown {
	switch o := last.(type) {
	case *api.Object:
		return DeletedFinalStateUnknown{Key: key, Obj: o}
	case DeletedFinalStateUnknown:
		return DeletedFinalStateUnknown{Key: key, Obj: o.Obj}
	}
	return DeletedFinalStateUnknown{Key: key}
}

// tombstoneLocked queues, with the queue's own queueLocked, a Deleted delta
// carrying ts, and narrates why: key was queued or cached (where) at the
// resourceVersion ts holds, but the re-list at rv lacks it. DeltaFIFO's and
// the plain RealFIFO's Replace both use it.
func (c *core) tombstoneLocked(queueLocked func(key string, d Delta), key string, ts DeletedFinalStateUnknown, rv, where string) {
	if c.tr.Enabled() {
		c.tr.Printf(narrate.Queue, "tombstone %s: %s at rv %s but missing from the relist at rv %s",
			key, where, resourceVersionOf(ts), rv)
	}
	queueLocked(key, Delta{Type: Deleted, Object: ts})
}

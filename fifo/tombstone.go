package fifo

import "listwatch/api"

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

// resourceVersionOf is the resourceVersion a delta's object carries, for
// narration ("?" for a tombstone without an object).
func resourceVersionOf(obj any) string {
	switch o := obj.(type) {
	case *api.Object:
		if o != nil {
			return o.Metadata.ResourceVersion
		}
	case DeletedFinalStateUnknown:
		if o.Obj != nil {
			return o.Obj.Metadata.ResourceVersion
		}
	}
	return "?"
}

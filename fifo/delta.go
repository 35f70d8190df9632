package fifo

import "listwatch/api"

// DeltaType says what happened to an object.
type DeltaType string

// The eight delta types, as client-go's tools/cache (delta_fifo.go) names
// them. The first five carry one object; the last three, which only an
// atomic RealFIFO queues (see Options.Atomic), carry a ReplacedAllInfo, a
// SyncAllInfo or a BookmarkInfo.
const (
	// Added: the watch reported a new object.
	Added DeltaType = "Added"
	// Updated: the watch reported a new version of an object.
	Updated DeltaType = "Updated"
	// Deleted: the watch reported a deletion, or a re-list no longer had
	// the object (then the Object is a DeletedFinalStateUnknown).
	Deleted DeltaType = "Deleted"
	// Replaced is emitted for every object of a re-list (Replace). It says
	// "this is the object as the server has it now"; it may or may not
	// differ from what the consumer has cached.
	Replaced DeltaType = "Replaced"
	// Sync is emitted by a periodic resync: no change, just a reminder.
	Sync DeltaType = "Sync"
	// ReplacedAll is a whole re-list as one delta (Object is a
	// ReplacedAllInfo). The consumer, not the queue, works out which cached
	// objects the list lacks and turns them into tombstones when it pops it.
	ReplacedAll DeltaType = "ReplacedAll"
	// SyncAll is a whole periodic resync as one delta (Object is a
	// SyncAllInfo): the consumer re-delivers every object it has cached.
	SyncAll DeltaType = "SyncAll"
	// Bookmark carries a resourceVersion the watch reached without any
	// change (Object is a BookmarkInfo), so the consumer's cache can say
	// how fresh it is.
	Bookmark DeltaType = "Bookmark"
)

// ReplacedAllInfo is the Object of a ReplacedAll delta: the listed objects,
// in list order, and the resourceVersion the list is consistent with.
type ReplacedAllInfo struct {
	ResourceVersion string
	Objects         []*api.Object
}

// SyncAllInfo is the Object of a SyncAll delta. It carries nothing: the
// consumer's cache is what gets re-delivered.
type SyncAllInfo struct{}

// BookmarkInfo is the Object of a Bookmark delta.
type BookmarkInfo struct {
	ResourceVersion string
}

// Delta is one change. Object is an *api.Object, or, for a Deleted delta
// whose final state was missed while disconnected, a DeletedFinalStateUnknown.
type Delta struct {
	Type   DeltaType
	Object any
}

// Deltas is the list of changes queued for one key, oldest first.
type Deltas []Delta

// Oldest returns the first delta, or nil.
func (d Deltas) Oldest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns the last delta, or nil.
func (d Deltas) Newest() *Delta {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

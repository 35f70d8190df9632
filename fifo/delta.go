package fifo

import "strings"

// DeltaType says what happened to an object.
type DeltaType string

// The delta types, as client-go's tools/cache names them.
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

// types renders the delta types as "[Added Updated]" for narration.
func (d Deltas) types() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range d {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.describe())
	}
	b.WriteByte(']')
	return b.String()
}

// describe is the delta's type, marked when it carries a tombstone.
func (d Delta) describe() string {
	if _, ok := d.Object.(DeletedFinalStateUnknown); ok {
		return string(d.Type) + "(tombstone)"
	}
	return string(d.Type)
}

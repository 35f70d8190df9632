package fifo

import (
	"fmt"
	"strings"

	"listwatch/api"
)

// The queues' narration (the narrate.Queue lines): how a delta, a list of
// deltas, a count and a key are written. Nothing here changes what a
// queue does.

// plural renders "1 delta", "2 deltas".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// initialNote marks narration of items from the initial list.
func initialNote(initial bool) string {
	if initial {
		return "initial list, "
	}
	return ""
}

// keySuffix is " namespace/name" for a delta about one object, "" for one
// about many (ReplacedAll, SyncAll, Bookmark).
func keySuffix(d Delta) string {
	if key, err := KeyOf(d.Object); err == nil {
		return " " + key
	}
	return ""
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

// describe is the delta's type, marked when it carries a tombstone or
// stands for many objects.
func (d Delta) describe() string {
	switch o := d.Object.(type) {
	case DeletedFinalStateUnknown:
		return string(d.Type) + "(tombstone)"
	case ReplacedAllInfo:
		return fmt.Sprintf("%s(%s at rv %s)", d.Type, plural(len(o.Objects), "object"), o.ResourceVersion)
	case BookmarkInfo:
		return fmt.Sprintf("%s(rv %s)", d.Type, o.ResourceVersion)
	}
	return string(d.Type)
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

package informer

import (
	"fmt"

	"listwatch/api"
	"listwatch/fifo"
)

type notificationKind uint8

const (
	addNotification notificationKind = iota + 1
	updateNotification
	deleteNotification
)

// notification is one call to make on a handler. It is a plain value, not
// an interface, so that buffering millions of them costs no allocation
// each (client-go boxes three struct types in interface{}).
type notification struct {
	kind            notificationKind
	isInInitialList bool
	oldObj          *api.Object // updates
	newObj          *api.Object // adds and updates
	deleted         any         // deletes: *api.Object or fifo.DeletedFinalStateUnknown
}

// describe is "ADD ns/a rv=5" for narration.
func (n notification) describe() string {
	switch n.kind {
	case addNotification:
		s := fmt.Sprintf("ADD %s rv=%s", n.newObj.Key(), n.newObj.Metadata.ResourceVersion)
		if n.isInInitialList {
			s += " (initial list)"
		}
		return s
	case updateNotification:
		if n.oldObj.Metadata.ResourceVersion == n.newObj.Metadata.ResourceVersion {
			return fmt.Sprintf("RESYNC %s rv=%s", n.newObj.Key(), n.newObj.Metadata.ResourceVersion)
		}
		return fmt.Sprintf("UPDATE %s rv=%s→%s", n.newObj.Key(), n.oldObj.Metadata.ResourceVersion, n.newObj.Metadata.ResourceVersion)
	case deleteNotification:
		key, _ := fifo.KeyOf(n.deleted)
		if _, ok := n.deleted.(fifo.DeletedFinalStateUnknown); ok {
			return "DELETE " + key + " (tombstone)"
		}
		return "DELETE " + key
	}
	return "?"
}

package store

import (
	"fmt"

	"listwatch/api"
)

// Preconditions guard Update and Delete. Zero fields are not checked.
type Preconditions struct {
	ResourceVersion int64
	UID             string
}

// Check compares the preconditions with the stored object, whose
// modification revision is modRev. It mirrors the optimistic concurrency of
// Kubernetes: a writer names the version it read, and loses if someone wrote
// in between.
func (p Preconditions) Check(key string, cur *api.Object, modRev int64) error {
	if p.ResourceVersion != 0 && p.ResourceVersion != modRev {
		return fmt.Errorf("%w: %s: resourceVersion is %d, precondition wants %d",
			ErrConflict, key, modRev, p.ResourceVersion)
	}
	if p.UID != "" && p.UID != cur.Metadata.UID {
		return fmt.Errorf("%w: %s: uid is %s, precondition wants %s",
			ErrConflict, key, cur.Metadata.UID, p.UID)
	}
	return nil
}

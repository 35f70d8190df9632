package patch

import (
	"encoding/json"
	"time"
)

// Every write that is not an apply is recorded in managedFields too, as
// operation Update under the manager the request names (?fieldManager,
// else the first word of its User-Agent: "kubectl-edit", "e2e.test"):
// the fields it added or changed become that manager's and are taken from
// whoever owned them (an update always forces), and the fields it removed
// are nobody's any more (FieldManager.Update in
// k8s.io/apimachinery pkg/util/managedfields/internal/fieldmanager.go,
// managedfieldsupdater.go; Updater.Update in structured-merge-diff). So a
// later apply that sets such a field to another value conflicts with the
// updater, and an applier that stops applying a field an updater changed
// leaves it in place.

// UpdateRequest is one write that is not an apply.
type UpdateRequest struct {
	// Manager is ?fieldManager, or the User-Agent's first word.
	Manager string
	// APIVersion is the version written through.
	APIVersion  string
	Subresource string
	Now         time.Time
	Schema      *Schema
}

// RecordUpdate returns the managedFields of next, the object a write of
// live is about to store (both JSON), or nil when there are none to
// record. The entries are next's own when the client sent some (a client
// may edit managedFields; [{}] resets them), else live's.
//
// Ours differs from kube-apiserver 1.37.2 in one place, on purpose: it
// records nothing until an object's first apply. kube-apiserver records
// from creation (DefaultTrackOnCreateProbability is 1 in fieldmanager.go,
// so every created object carries a manager such as "kubectl-create"
// with operation Update); its skipNonAppliedManager
// (internal/skipnonapplied.go) does what ours does only when an object
// has no managedFields at all. Ours leaves them out so that objects that
// are never applied read as the chapters show them, without a
// managedFields block in every example.
func RecordUpdate(live, next []byte, req UpdateRequest) (json.RawMessage, error) {
	liveV, err := decodeJSON(live)
	if err != nil {
		return nil, err
	}
	nextV, err := decodeJSON(next)
	if err != nil {
		return nil, err
	}
	liveObj, _ := liveV.(map[string]any)
	nextObj, _ := nextV.(map[string]any)
	entries, err := managedEntries(nextObj)
	if err != nil || len(entries) == 0 || req.Subresource != "" {
		// Through a subresource managedFields cannot be written: the
		// live object's hold.
		entries, err = managedEntries(liveObj)
	}
	if err != nil || isReset(entries) || len(entries) == 0 {
		// Unreadable managedFields are dropped, as the real server
		// drops them (emptyManagedFieldsOnErr).
		return nil, nil
	}
	withoutManaged(liveObj)
	withoutManaged(nextObj)
	cmp := compareObjects(liveObj, nextObj, req.Schema)
	self := managerID{manager: req.Manager, operation: opUpdate, apiVersion: req.APIVersion, subresource: req.Subresource}
	// "current-operation" is never a manager's name: every entry,
	// the updater's own earlier one too, loses what this write takes.
	entries, _ = takeChanged(entries, managerID{manager: "current-operation"}, cmp, true)
	changed := cmp.modified.union(cmp.added).difference(cmp.removed)
	if len(changed) > 0 {
		i := find(entries, self)
		if i < 0 {
			entries = append(entries, managedEntry{Manager: req.Manager, Operation: opUpdate,
				APIVersion: req.APIVersion, Subresource: req.Subresource, fields: fieldSet{}})
			i = len(entries) - 1
		}
		entries[i].fields = entries[i].fields.union(changed)
		entries[i].FieldsV1 = nil
		entries[i].Time = req.Now.UTC().Format(time.RFC3339)
	}
	return encodeEntries(entries)
}

// isReset reports whether the client asked to clear managedFields: a
// list holding one empty entry (isResetManagedFields).
func isReset(entries []managedEntry) bool {
	return len(entries) == 1 && entries[0].Manager == "" && entries[0].Operation == "" && len(entries[0].fields) == 0
}

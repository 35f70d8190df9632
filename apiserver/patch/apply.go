package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"listwatch/api"
)

// Server-side apply (application/apply-patch+yaml), as k8s.io/apiserver's
// fieldmanager and sigs.k8s.io/structured-merge-diff do it.
//
// The client sends the fields it wants to own (its "applied
// configuration") and names itself with ?fieldManager. The server records,
// per manager, the set of fields it owns in metadata.managedFields
// (managers.go; fieldsType FieldsV1: {"f:data":{"f:a":{}}}, fieldset.go).
// An apply (Updater.Apply, merge/update.go):
//
//  1. claims the fields of its configuration (tofieldset.go);
//  2. merges the configuration into the live object (applymerge.go):
//     objects member by member, lists by what the kind's schema says
//     (schema.go: a Pod's containers by name, ports by port and
//     protocol; other lists replaced whole);
//  3. removes the fields the manager applied last time and no longer
//     does, unless another manager owns them too;
//  4. compares the result with the live object (compare.go): a field it
//     adds or changes that another manager owns, applier or updater, is a
//     conflict (409, one FieldManagerConflict cause per field), unless
//     ?force=true, which takes the field from that manager;
//  5. creates the object if it does not exist (201).
//
// Writes that are not applies (create, update, the other patches) are
// recorded too, as operation Update, by RecordUpdate (update.go).
//
// What differs from the real server: a request whose list elements
// cannot be named (a key missing) treats that list as atomic instead of
// failing; the real server caps the Update entries at ten
// (capmanagers.go) and ours does not; and ours starts recording at an
// object's first apply (update.go says why).

// ApplyPatchType is server-side apply's Content-Type.
const ApplyPatchType = "application/apply-patch+yaml"

// ApplyRequest is one apply.
type ApplyRequest struct {
	// Manager is ?fieldManager (required: the caller answers 422 without).
	Manager string
	// APIVersion is the resource's, recorded in the managedFields entry.
	APIVersion string
	// Subresource is the subresource applied to ("status"), if any.
	Subresource string
	Force       bool
	Now         time.Time
	// Schema is the kind's (nil: every list atomic).
	Schema *Schema
	// Ignored are the top-level fields the endpoint keeps whatever the
	// configuration says (a strategy's GetResetFields): status when
	// applying to an object with a status subresource, everything but
	// status when applying to /status. They are neither merged nor owned.
	Ignored []string
}

// Apply applies the configuration applied (JSON, from ParseApplied) to the
// live object's JSON (nil: there is none) and returns the new object's
// JSON with its managedFields, or a 409 Conflict Status.
func Apply(live, applied []byte, req ApplyRequest) ([]byte, error) {
	if live == nil {
		live = []byte("{}")
	}
	cfg, err := decodeJSON(applied)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	cfgObj := cfg.(map[string]any)
	switch md := cfgObj["metadata"].(type) {
	case map[string]any:
		delete(md, "managedFields") // ownership is the server's to record
	case nil:
	default:
		return nil, api.NewBadRequest(fmt.Sprintf("metadata must be an object, not %T", md))
	}
	for _, name := range req.Ignored {
		delete(cfgObj, name)
	}
	liveV, err := decodeJSON(live)
	if err != nil {
		return nil, err
	}
	liveObj, _ := liveV.(map[string]any)
	entries, err := managedEntries(liveObj)
	if err != nil {
		return nil, err
	}
	self := managerID{manager: req.Manager, operation: opApply, subresource: req.Subresource}
	want := ownedFields(cfgObj, req.Schema)
	merged, _ := mergeApplied(liveObj, cfgObj, req.Schema.rootNode()).(map[string]any)
	var last fieldSet
	var others []fieldSet
	for i := range entries {
		if entries[i].id() == self {
			last = entries[i].fields
		} else {
			others = append(others, entries[i].fields)
		}
	}
	prune(merged, last, want, others)
	withoutManaged(liveObj)
	withoutManaged(merged)
	entries, conflicts := takeChanged(entries, self, compareObjects(liveObj, merged, req.Schema), req.Force)
	if len(conflicts) > 0 {
		return nil, conflictError(conflicts)
	}
	entries = recordApplier(entries, self, want, req, !sameValue(liveObj, merged))
	if len(entries) > 0 {
		mf, err := encodeEntries(entries)
		if err != nil {
			return nil, err
		}
		setManaged(merged, mf)
	}
	return json.Marshal(merged)
}

// recordApplier puts the applier's entry in: what it applied, and when,
// if the object changed (managedFieldsUpdater.Apply leaves the time of a
// no-op apply alone); or takes it out if it now owns nothing.
func recordApplier(entries []managedEntry, self managerID, want fieldSet, req ApplyRequest, changed bool) []managedEntry {
	mine := managedEntry{Manager: req.Manager, Operation: opApply, APIVersion: req.APIVersion,
		Subresource: req.Subresource, fields: want}
	i := find(entries, self)
	if i >= 0 {
		mine.Time = entries[i].Time
	}
	if changed {
		mine.Time = req.Now.UTC().Format(time.RFC3339)
	}
	switch {
	case len(want) == 0 && i >= 0:
		// A manager that owns nothing has no entry (Updater.update).
		return append(entries[:i:i], entries[i+1:]...)
	case len(want) == 0:
	case i >= 0:
		entries[i] = mine
	default:
		entries = append(entries, mine)
	}
	return entries
}

// withoutManaged removes metadata.managedFields from an object.
func withoutManaged(obj map[string]any) {
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
}

// setManaged writes metadata.managedFields.
func setManaged(obj map[string]any, mf json.RawMessage) {
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["managedFields"] = mf
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

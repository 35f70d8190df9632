package patch

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"listwatch/api"
)

// metadata.managedFields: who owns which fields. One entry per manager
// and operation (meta/v1 ManagedFieldsEntry): an applier's entry
// (operation Apply) holds what it applied last, an updater's (operation
// Update, one per API version it wrote through) what its writes changed.
// k8s.io/apimachinery pkg/util/managedfields/internal (managedfields.go,
// conflict.go) reads, writes and orders them; structured-merge-diff's
// Updater.update (merge/update.go) moves fields between them.

// managedEntry is one metadata.managedFields entry, its members in the
// real server's order.
type managedEntry struct {
	Manager     string          `json:"manager,omitempty"`
	Operation   string          `json:"operation,omitempty"`
	APIVersion  string          `json:"apiVersion,omitempty"`
	Time        string          `json:"time,omitempty"`
	FieldsType  string          `json:"fieldsType,omitempty"`
	FieldsV1    json.RawMessage `json:"fieldsV1,omitempty"`
	Subresource string          `json:"subresource,omitempty"`
	fields      fieldSet
}

// The operations of an entry.
const (
	opApply  = "Apply"
	opUpdate = "Update"
)

// managerID is what makes two entries the same manager
// (BuildManagerIdentifier): an applier is one entry whatever version it
// applies, an updater one per version.
type managerID struct {
	manager, operation, apiVersion, subresource string
}

func (e *managedEntry) id() managerID {
	id := managerID{manager: e.Manager, operation: e.Operation, apiVersion: e.APIVersion, subresource: e.Subresource}
	if e.Operation == opApply {
		id.apiVersion = ""
	}
	return id
}

// describe names a manager in a conflict (printManager): "kubectl", or
// "kubectl-edit" using apps/v1 for an updater.
func (e *managedEntry) describe() string {
	s := fmt.Sprintf("%q", e.Manager)
	if e.Subresource != "" {
		s += fmt.Sprintf(" with subresource %q", e.Subresource)
	}
	if e.Operation == opUpdate {
		s += " using " + e.APIVersion
	}
	return s
}

// managedEntries reads an object's managedFields.
func managedEntries(obj map[string]any) ([]managedEntry, error) {
	md, _ := obj["metadata"].(map[string]any)
	raw, ok := md["managedFields"]
	if !ok || raw == nil {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var entries []managedEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		return nil, api.NewInternalError(fmt.Errorf("stored managedFields: %w", err))
	}
	for i := range entries {
		entries[i].fields = fromFieldsV1(entries[i].FieldsV1)
	}
	return entries, nil
}

// find is the index of the entry of id, or -1.
func find(entries []managedEntry, id managerID) int {
	for i := range entries {
		if entries[i].id() == id {
			return i
		}
	}
	return -1
}

// conflict is one field another manager owns and a write would change.
type conflict struct {
	manager string
	field   path
}

// takeChanged is Updater.update: every manager but self loses the fields
// the write removed; the fields it added or modified are conflicts with
// the managers that own them, unless force, which takes them away from
// those managers (an update always forces). Managers left with nothing
// are dropped.
func takeChanged(entries []managedEntry, self managerID, cmp comparison, force bool) ([]managedEntry, []conflict) {
	changed := cmp.modified.union(cmp.added)
	var conflicts []conflict
	taken := make([]fieldSet, len(entries))
	for i := range entries {
		if entries[i].id() == self {
			continue
		}
		taken[i] = entries[i].fields.intersection(changed)
		for _, p := range taken[i].paths() {
			conflicts = append(conflicts, conflict{manager: entries[i].describe(), field: p})
		}
	}
	if !force && len(conflicts) > 0 {
		return entries, conflicts
	}
	var out []managedEntry
	for i, e := range entries {
		if e.id() != self {
			e.fields = e.fields.difference(taken[i]).difference(cmp.removed)
			e.FieldsV1 = nil
			if len(e.fields) == 0 {
				continue
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// sortEntries orders entries as sortEncodedManagedFields does: appliers
// before updaters, then by time, manager, apiVersion and subresource.
func sortEntries(entries []managedEntry) {
	sort.SliceStable(entries, func(i, j int) bool {
		p, q := entries[i], entries[j]
		switch {
		case p.Operation != q.Operation:
			return p.Operation < q.Operation
		case p.Time != q.Time:
			return p.Time < q.Time // RFC 3339 in UTC: text order is time order
		case p.Manager != q.Manager:
			return p.Manager < q.Manager
		case p.APIVersion != q.APIVersion:
			return p.APIVersion < q.APIVersion
		}
		return p.Subresource < q.Subresource
	})
}

// encodeEntries is the managedFields value of entries, sorted.
func encodeEntries(entries []managedEntry) (json.RawMessage, error) {
	sortEntries(entries)
	for i := range entries {
		if entries[i].FieldsV1 == nil {
			entries[i].FieldsV1 = entries[i].fields.fieldsV1()
		}
		entries[i].FieldsType = "FieldsV1"
	}
	return json.Marshal(entries)
}

// conflictError is the 409 of an apply (errors.NewApplyConflict): "Apply
// failed with 1 conflict: conflict with "kubectl": .data.a".
func conflictError(conflicts []conflict) error {
	sort.SliceStable(conflicts, func(i, j int) bool { return conflicts[i].manager < conflicts[j].manager })
	causes := make([]api.StatusCause, len(conflicts))
	for i, c := range conflicts {
		causes[i] = api.StatusCause{Type: "FieldManagerConflict", Field: c.field.String(), Message: "conflict with " + c.manager}
	}
	var detail string
	if len(conflicts) == 1 {
		detail = causes[0].Message + ": " + causes[0].Field
	} else {
		var lines []string
		for i, c := range conflicts {
			if i == 0 || conflicts[i-1].manager != c.manager {
				lines = append(lines, "conflicts with "+c.manager+":")
			}
			lines = append(lines, "- "+causes[i].Field)
		}
		detail = strings.Join(lines, "\n")
	}
	plural := ""
	if len(conflicts) > 1 {
		plural = "s"
	}
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure, Code: 409, Reason: api.ReasonConflict,
		Message: fmt.Sprintf("Apply failed with %d conflict%s: %s", len(conflicts), plural, detail),
		Details: &api.StatusDetails{Causes: causes}}
}

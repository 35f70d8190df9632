package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"listwatch/api"
)

// Server-side apply (application/apply-patch+yaml), a documented subset of
// k8s.io/apiserver's fieldmanager and sigs.k8s.io/structured-merge-diff.
//
// The client sends the fields it wants to own (its "applied
// configuration") and names itself with ?fieldManager. The server records,
// per manager, the set of fields it owns in metadata.managedFields
// (fieldsType FieldsV1: {"f:data":{"f:a":{}}}). An apply:
//
//   - conflicts (409, one FieldManagerConflict cause per field) when it
//     sets a field another applier owns to a different value, unless
//     ?force=true, which moves the field to the new manager;
//   - sets every field of the configuration, objects merged member by
//     member;
//   - removes the fields the manager applied last time and no longer
//     does, unless another manager owns them too;
//   - creates the object if it does not exist (201).
//
// What differs from the real server: every list is atomic (replaced
// whole, owned as one field; the real one merges lists of containers,
// ports, ... by their keys), only appliers own fields (the real one also
// tracks every Update, under the manager named by ?fieldManager or the
// User-Agent, so an apply can conflict with a kubectl scale or edit), and
// the objects' nested members come out in alphabetical order.

// ApplyPatchType is server-side apply's Content-Type.
const ApplyPatchType = "application/apply-patch+yaml"

// ApplyRequest is one apply.
type ApplyRequest struct {
	// Manager is ?fieldManager (required: the caller answers 422 without).
	Manager string
	// APIVersion is the resource's, recorded in the managedFields entry.
	APIVersion string
	Force      bool
	Now        time.Time
}

// ParseApplied reads an applied configuration: YAML (of which JSON is a
// subset, and kubectl apply --server-side sends JSON) into a JSON object.
func ParseApplied(body []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(body, &v); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, api.NewBadRequest("error decoding YAML: the applied configuration must be an object")
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	return js, nil
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
	liveV, err := decodeJSON(live)
	if err != nil {
		return nil, err
	}
	liveObj, _ := liveV.(map[string]any)
	entries, err := managedEntries(liveObj)
	if err != nil {
		return nil, err
	}
	want := ownedFields(cfgObj)

	others, conflicts := conflictsWithOthers(entries, req, want, liveObj, cfgObj)
	if len(conflicts) > 0 {
		return nil, applyConflict(conflicts)
	}
	patchDoc, err := json.Marshal(applyPatch(cfgObj, entries, req, want, others))
	if err != nil {
		return nil, err
	}
	merged, err := applyMergePatch(live, patchDoc, false)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}

	out := recordOwnership(entries, req, want, others)
	obj, err := setManagedFields(merged, out)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	return obj, nil
}

// conflictsWithOthers compares what the configuration sets (want) with what the
// other appliers own: a field they own whose value would change is a
// conflict, or, with Force, is taken from them. It returns what each other
// applier owns afterwards, and the conflicts.
func conflictsWithOthers(entries []managedEntry, req ApplyRequest, want fieldSet, liveObj, cfgObj map[string]any) (map[string]fieldSet, []api.StatusCause) {
	var conflicts []api.StatusCause
	others := map[string]fieldSet{}
	for _, e := range entries {
		if e.Manager == req.Manager || e.Operation != "Apply" {
			continue
		}
		theirs := e.fields
		for _, p := range want.leaves(nil) {
			if !theirs.overlaps(p) || sameValue(at(liveObj, p), at(cfgObj, p)) {
				continue
			}
			if req.Force {
				theirs.remove(p)
				continue
			}
			path := "." + strings.Join(p, ".")
			conflicts = append(conflicts, api.StatusCause{Type: "FieldManagerConflict", Field: path,
				Message: fmt.Sprintf("conflict with %q", e.Manager)})
		}
		others[e.Manager] = theirs
	}
	return others, conflicts
}

// applyPatch is the merge patch that makes it so: the configuration, plus
// null for what this manager gave up and nobody else holds.
func applyPatch(cfgObj map[string]any, entries []managedEntry, req ApplyRequest, want fieldSet, others map[string]fieldSet) map[string]any {
	patchObj := cloneMap(cfgObj)
	for _, e := range entries {
		if e.Manager != req.Manager || e.Operation != "Apply" {
			continue
		}
		for _, p := range e.fields.leaves(nil) {
			if want.overlaps(p) || ownedByAny(others, p) {
				continue
			}
			setNull(patchObj, p)
		}
	}
	return patchObj
}

// recordOwnership is the object's managedFields after the apply: this
// manager's entry replaced (or appended), the others' trimmed by force,
// emptied ones dropped.
func recordOwnership(entries []managedEntry, req ApplyRequest, want fieldSet, others map[string]fieldSet) []managedEntry {
	mine := managedEntry{Manager: req.Manager, Operation: "Apply", APIVersion: req.APIVersion,
		Time: req.Now.UTC().Format(time.RFC3339), FieldsType: "FieldsV1", fields: want}
	var out []managedEntry
	placed := false
	for _, e := range entries {
		switch {
		case e.Manager == req.Manager && e.Operation == "Apply":
			out, placed = append(out, mine), true
		case e.Operation == "Apply" && others[e.Manager] != nil && len(others[e.Manager]) == 0:
			// force took everything it owned
		default:
			out = append(out, e)
		}
	}
	if !placed {
		out = append(out, mine)
	}
	return out
}

// applyConflict is the 409 of an apply (errors.NewApplyConflict): "Apply
// failed with 1 conflict: conflict with "kubectl": .data.a".
func applyConflict(causes []api.StatusCause) error {
	byManager := map[string][]string{}
	var managers []string
	for _, c := range causes {
		m := strings.TrimSuffix(strings.TrimPrefix(c.Message, `conflict with "`), `"`)
		if _, ok := byManager[m]; !ok {
			managers = append(managers, m)
		}
		byManager[m] = append(byManager[m], c.Field)
	}
	var detail string
	if len(causes) == 1 {
		detail = causes[0].Message + ": " + causes[0].Field
	} else {
		sort.Strings(managers)
		var lines []string
		for _, m := range managers {
			lines = append(lines, fmt.Sprintf("conflicts with %q:", m))
			for _, f := range byManager[m] {
				lines = append(lines, "- "+f)
			}
		}
		detail = strings.Join(lines, "\n")
	}
	plural := ""
	if len(causes) > 1 {
		plural = "s"
	}
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure, Code: 409, Reason: api.ReasonConflict,
		Message: fmt.Sprintf("Apply failed with %d conflict%s: %s", len(causes), plural, detail),
		Details: &api.StatusDetails{Causes: causes}}
}

// fieldSet is a set of field paths as a tree; a member with no children is
// an owned leaf.
type fieldSet map[string]fieldSet

// ownedFields is the set an applied configuration claims: every member
// down to scalars, lists and empty objects; of metadata only labels,
// annotations (key by key), finalizers and ownerReferences; never
// apiVersion or kind (the real server's choice too).
func ownedFields(obj map[string]any) fieldSet {
	fs := fieldSet{}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			md, _ := v.(map[string]any)
			meta := fieldSet{}
			for mk, mv := range md {
				switch mk {
				case "labels", "annotations":
					if m, ok := mv.(map[string]any); ok && len(m) > 0 {
						meta[mk] = valueFields(m)
					}
				case "finalizers", "ownerReferences":
					meta[mk] = nil
				}
			}
			if len(meta) > 0 {
				fs[k] = meta
			}
		default:
			fs[k] = valueFields(v)
		}
	}
	return fs
}

// valueFields: an object with members is their fields; anything else is a
// leaf.
func valueFields(v any) fieldSet {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	fs := fieldSet{}
	for k, e := range m {
		fs[k] = valueFields(e)
	}
	return fs
}

// leaves lists the owned paths, sorted.
func (fs fieldSet) leaves(prefix []string) [][]string {
	var out [][]string
	keys := make([]string, 0, len(fs))
	for k := range fs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := append(slices.Clone(prefix), k)
		if len(fs[k]) == 0 {
			out = append(out, p)
			continue
		}
		out = append(out, fs[k].leaves(p)...)
	}
	return out
}

// overlaps reports whether the set owns p, something inside p, or
// something p is inside of.
func (fs fieldSet) overlaps(p []string) bool {
	cur := fs
	for _, k := range p {
		next, ok := cur[k]
		if !ok {
			return false
		}
		if len(next) == 0 {
			return true // owns a leaf at or above p
		}
		cur = next
	}
	return true // owns something inside p
}

// remove drops p (and whatever is inside it) from the set, and the
// parents it leaves empty.
func (fs fieldSet) remove(p []string) {
	if len(p) == 0 {
		return
	}
	child, ok := fs[p[0]]
	if !ok {
		return
	}
	if len(p) == 1 || len(child) == 0 {
		delete(fs, p[0])
		return
	}
	child.remove(p[1:])
	if len(child) == 0 {
		delete(fs, p[0])
	}
}

func ownedByAny(sets map[string]fieldSet, p []string) bool {
	for _, s := range sets {
		if s.overlaps(p) {
			return true
		}
	}
	return false
}

// at is the value at path p, or nil.
func at(obj map[string]any, p []string) any {
	var cur any = obj
	for _, k := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func sameValue(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// setNull puts null at p in a merge patch, unless the patch sets p or a
// parent of it to something that is not an object.
func setNull(obj map[string]any, p []string) {
	cur := obj
	for i, k := range p {
		if i == len(p)-1 {
			if _, set := cur[k]; !set {
				cur[k] = nil
			}
			return
		}
		next, ok := cur[k]
		if !ok {
			m := map[string]any{}
			cur[k] = m
			cur = m
			continue
		}
		m, isObj := next.(map[string]any)
		if !isObj {
			return
		}
		cur = m
	}
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			out[k] = cloneMap(sub)
			continue
		}
		out[k] = v
	}
	return out
}

// managedEntry is one metadata.managedFields entry (meta/v1
// ManagedFieldsEntry), its members in the real server's order.
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

// managedEntries reads the live object's managedFields.
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

// fromFieldsV1 reads the "f:<name>" members of a FieldsV1 tree; list
// element keys ("k:", "v:", "i:") and "." are read as owning their parent
// whole, lists being atomic here.
func fromFieldsV1(raw json.RawMessage) fieldSet {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	fs := fieldSet{}
	for k, v := range m {
		if name, ok := strings.CutPrefix(k, "f:"); ok {
			fs[name] = fromFieldsV1(v)
		}
	}
	if len(fs) == 0 {
		return nil
	}
	return fs
}

// toFieldsV1 writes a set as FieldsV1, members sorted.
func toFieldsV1(fs fieldSet) json.RawMessage {
	keys := make([]string, 0, len(fs))
	for k := range fs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal("f:" + k)
		b.Write(key)
		b.WriteByte(':')
		b.Write(toFieldsV1(fs[k]))
	}
	b.WriteByte('}')
	return b.Bytes()
}

// setManagedFields writes entries into obj's metadata.managedFields.
func setManagedFields(obj []byte, entries []managedEntry) ([]byte, error) {
	for i := range entries {
		if entries[i].fields != nil || entries[i].FieldsV1 == nil {
			entries[i].FieldsV1 = toFieldsV1(entries[i].fields)
		}
	}
	mf, err := json.Marshal(entries)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(obj, &top); err != nil {
		return nil, err
	}
	md := map[string]json.RawMessage{}
	if raw, ok := top["metadata"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &md); err != nil {
			return nil, err
		}
	}
	md["managedFields"] = mf
	if top["metadata"], err = json.Marshal(md); err != nil {
		return nil, err
	}
	return json.Marshal(top)
}

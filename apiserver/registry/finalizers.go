package registry

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"listwatch/api"
)

// Graceful deletion and finalizers, as registry/generic/registry/store.go
// (Delete, updateForGracefulDeletionAndFinalizers, ShouldDeleteDuringUpdate)
// and registry/rest/delete.go (BeforeDelete) decide them:
//
//   - An object with no finalizers, of a kind without graceful deletion,
//     is deleted at once: one DELETED event.
//   - An object with finalizers is only marked: deletionTimestamp = now,
//     deletionGracePeriodSeconds = 0, one MODIFIED event
//     (finalizer-delete-configmap-200.json). It stays until a write removes
//     the last finalizer; that write deletes it instead of storing it, and
//     watchers see DELETED with the last stored state
//     (watch-finalizer-configmap.jsonl).
//   - The first mark raises metadata.generation by one, on kinds that
//     have one (Pods in 1.37, Deployments, custom resources).
//   - A Pod is deleted gracefully: deletionTimestamp = now + the grace
//     period (DeleteOptions.gracePeriodSeconds, else the Pod's
//     terminationGracePeriodSeconds, else 30), MODIFIED; the kubelet then
//     deletes it with grace 0. An unscheduled Pod (no spec.nodeName) or one
//     that has finished gets grace 0: marked, MODIFIED, then deleted at
//     once, DELETED (watch-pod-delete-unscheduled.jsonl). A second delete
//     may only shorten a pending grace period.

// DeletePlan is what a DELETE does to the current object.
type DeletePlan struct {
	// Now: delete at once, nothing to mark.
	Now bool
	// Mark is the object to write first (deletionTimestamp and grace
	// period set), or nil when the stored one already says it all.
	Mark *api.Object
	// ThenDelete: after marking, delete (grace 0 and no finalizers).
	ThenDelete bool
}

// defaultPodGracePeriod is terminationGracePeriodSeconds' default.
const defaultPodGracePeriod = 30

// PlanDelete decides what deleting cur as req asks does, the garbage
// collector's finalizers included (gcfinalizers.go).
func (r *Resource) PlanDelete(cur *api.Object, req DeleteRequest, now time.Time) DeletePlan {
	if r.Group == "" && r.Kind == "Pod" {
		return r.planPodDelete(cur, req, now)
	}
	finalizers, changed := r.gcFinalizers(Finalizers(cur), req)
	if len(finalizers) == 0 {
		return DeletePlan{Now: true}
	}
	if cur.Metadata.DeletionTimestamp != nil {
		if !changed {
			return DeletePlan{} // already marked; the finalizers decide
		}
		// Marked already: only the garbage collector's finalizers change
		// (markAsDeleting keeps an earlier deletionTimestamp).
		next := cur.DeepCopy()
		setFinalizers(next, finalizers)
		return DeletePlan{Mark: next}
	}
	next := markDeleted(cur, now, 0)
	if changed {
		setFinalizers(next, finalizers)
	}
	return DeletePlan{Mark: next}
}

// planPodDelete is PlanDelete for a Pod, deleted gracefully. A pending
// grace period that the request does not shorten leaves everything as it
// is, finalizers too (BeforeDelete's gracefulPending).
func (r *Resource) planPodDelete(cur *api.Object, req DeleteRequest, now time.Time) DeletePlan {
	period := podGracePeriod(cur, req.Grace)
	if cur.Metadata.DeletionTimestamp != nil {
		if pending, ok := GracePeriod(cur); ok && (req.Grace == nil || period >= pending) {
			if pending > 0 {
				return DeletePlan{}
			}
			finalizers, changed := r.gcFinalizers(Finalizers(cur), req)
			if len(finalizers) == 0 {
				return DeletePlan{Now: true}
			}
			if !changed {
				return DeletePlan{}
			}
			next := cur.DeepCopy()
			setFinalizers(next, finalizers)
			return DeletePlan{Mark: next}
		}
	}
	finalizers, changed := r.gcFinalizers(Finalizers(cur), req)
	next := markDeleted(cur, now, period)
	if changed {
		setFinalizers(next, finalizers)
	}
	return DeletePlan{Mark: next, ThenDelete: period == 0 && len(finalizers) == 0}
}

// podGracePeriod is a Pod's grace period for this delete (pod strategy's
// CheckGracefulDelete).
func podGracePeriod(pod *api.Object, grace *int64) int64 {
	var spec struct {
		NodeName                      string `json:"nodeName"`
		TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
	}
	var status struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(pod.Get("spec"), &spec)     // typed on the way in; absent is zero
	_ = json.Unmarshal(pod.Get("status"), &status) // likewise
	period := int64(defaultPodGracePeriod)
	switch {
	case grace != nil:
		period = max(*grace, 0)
	case spec.TerminationGracePeriodSeconds != nil:
		period = max(*spec.TerminationGracePeriodSeconds, 0)
	}
	if spec.NodeName == "" || status.Phase == "Failed" || status.Phase == "Succeeded" {
		period = 0 // nothing runs it, or nothing runs any more
	}
	return period
}

// markDeleted returns cur with deletionTimestamp now + grace seconds and
// deletionGracePeriodSeconds grace. The first time an object that has a
// generation is marked, its generation goes up by one: its controllers must
// see that it is being deleted (rest/delete.go BeforeDelete for graceful
// deletion, registry/store.go markAsDeleting for finalizers).
func markDeleted(cur *api.Object, now time.Time, grace int64) *api.Object {
	next := cur.DeepCopy()
	if cur.Metadata.DeletionTimestamp == nil && next.Metadata.Generation > 0 {
		next.Metadata.Generation++
	}
	at := now.Add(time.Duration(grace) * time.Second).UTC().Truncate(time.Second)
	next.Metadata.DeletionTimestamp = &at
	setMetaExtra(next, "deletionGracePeriodSeconds", strconv.AppendInt(nil, grace, 10))
	return next
}

// ShouldDeleteDuringUpdate says a write of next must delete the object
// instead of storing it: it is being deleted, its last finalizer is gone,
// and no grace period is left to wait out.
//
// A namespace also waits for its spec.finalizers, which only the namespace
// controller removes (ShouldDeleteNamespaceDuringUpdate in
// pkg/registry/core/namespace/storage/storage.go).
func (r *Resource) ShouldDeleteDuringUpdate(next *api.Object) bool {
	if next.Metadata.DeletionTimestamp == nil || len(Finalizers(next)) > 0 {
		return false
	}
	if r.IsNamespaces() && len(SpecFinalizers(next)) > 0 {
		return false
	}
	grace, ok := GracePeriod(next)
	return !ok || grace == 0
}

// CheckFinalizerUpdate refuses new finalizers on an object being deleted
// (ValidateObjectMetaUpdate's rule): nothing could ever remove them in
// time. It returns the 422 Invalid Status, or nil.
func (r *Resource) CheckFinalizerUpdate(next, cur *api.Object) error {
	if cur.Metadata.DeletionTimestamp == nil {
		return nil
	}
	old := Finalizers(cur)
	var added []string
	for _, f := range Finalizers(next) {
		if !slices.Contains(old, f) {
			added = append(added, f)
		}
	}
	if len(added) == 0 {
		return nil
	}
	return api.NewInvalid(r.GroupKind(), next.Metadata.Name, []api.StatusCause{api.FieldForbidden("metadata.finalizers",
		"no new finalizers can be added if the object is being deleted, found new finalizers "+goStringSlice(added))})
}

// goStringSlice prints a []string as Go's %#v does.
func goStringSlice(s []string) string {
	out := "[]string{"
	for i, e := range s {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(e)
	}
	return out + "}"
}

// Finalizers returns metadata.finalizers (typed on the way in, so it is a
// list of strings or absent).
func Finalizers(obj *api.Object) []string {
	var out []string
	if raw := metaExtra(obj, "finalizers"); raw != nil {
		_ = json.Unmarshal(raw, &out)
	}
	return out
}

// GracePeriod returns metadata.deletionGracePeriodSeconds, if set.
func GracePeriod(obj *api.Object) (int64, bool) {
	raw := metaExtra(obj, "deletionGracePeriodSeconds")
	if raw == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return n, err == nil
}

// CarryDeletion copies what a client may not change about a deletion
// (deletionTimestamp, deletionGracePeriodSeconds) from the stored object
// cur to its replacement next.
func CarryDeletion(next, cur *api.Object) {
	next.Metadata.DeletionTimestamp = cur.Metadata.DeletionTimestamp
	if raw := metaExtra(cur, "deletionGracePeriodSeconds"); raw != nil {
		setMetaExtra(next, "deletionGracePeriodSeconds", raw)
	} else {
		removeMetaExtra(next, "deletionGracePeriodSeconds")
	}
}

func metaExtra(obj *api.Object, name string) json.RawMessage {
	for _, f := range obj.Metadata.Extra {
		if f.Name == name && string(f.Value) != "null" {
			return f.Value
		}
	}
	return nil
}

func setMetaExtra(obj *api.Object, name string, value json.RawMessage) {
	for i := range obj.Metadata.Extra {
		if obj.Metadata.Extra[i].Name == name {
			obj.Metadata.Extra[i].Value = value
			return
		}
	}
	obj.Metadata.Extra = append(obj.Metadata.Extra, api.Field{Name: name, Value: value})
}

func removeMetaExtra(obj *api.Object, name string) {
	obj.Metadata.Extra = slices.DeleteFunc(obj.Metadata.Extra, func(f api.Field) bool { return f.Name == name })
}

package handlers

import (
	"context"
	"errors"
	"strconv"
	"time"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/store"
)

// Deleting through finalizers and grace periods (registry/finalizers.go
// decides; this file does it against the store). A DELETE may write twice:
// first the mark (deletionTimestamp, MODIFIED), then, with nothing left to
// wait for, the deletion itself (DELETED), each guarded by the revision it
// read, so a concurrent writer makes it start over rather than lose a write.
//
// propagationPolicy (and the deprecated orphanDependents) decide which of
// the garbage collector's finalizers the mark carries
// (registry/gcfinalizers.go): Orphan adds "orphan", Foreground
// "foregroundDeletion", and the garbage collector of cmd/controller-manager
// (or kube-controller-manager's) does what each says, then removes it.
// Background adds neither: the owner goes at once, its dependents after.

// maxDeleteAttempts bounds the start-overs after concurrent writes.
const maxDeleteAttempts = 16

// errDeleteInstead is what a guaranteed update's tryUpdate returns for an
// object whose last finalizer the write removes: store nothing, delete.
type errDeleteInstead struct{ next *api.Object }

func (errDeleteInstead) Error() string { return "the object is to be deleted, not updated" }

// deleteObject deletes the object at key as its kind and finalizers say.
// It returns the object the client is answered with and whether it is gone.
// A failed precondition of the client's is store.ErrConflict, a missing
// object store.ErrNotFound.
func (h *Handlers) deleteObject(ctx context.Context, res *registry.Resource, key string, pre store.Preconditions, req registry.DeleteRequest) (*api.Object, bool, error) {
	st := res.Storage(h.store)
	for attempt := 1; ; attempt++ {
		cur, err := st.Get(ctx, key)
		if err != nil {
			return nil, false, err
		}
		if (pre.UID != "" && pre.UID != cur.Metadata.UID) || (pre.ResourceVersion != 0 && pre.ResourceVersion != revisionOf(cur)) {
			return nil, false, store.ErrConflict
		}
		guard := store.Preconditions{UID: cur.Metadata.UID, ResourceVersion: revisionOf(cur)}
		plan := res.PlanDelete(cur, req, time.Now())
		obj, gone, err := carryOut(ctx, st, key, cur, guard, plan)
		if errors.Is(err, store.ErrConflict) && attempt < maxDeleteAttempts {
			continue // someone wrote in between: decide again on the new state
		}
		return obj, gone, err
	}
}

// carryOut does what plan says to cur, in st.
func carryOut(ctx context.Context, st store.Interface, key string, cur *api.Object, guard store.Preconditions, plan registry.DeletePlan) (*api.Object, bool, error) {
	if plan.Now {
		obj, err := st.Delete(ctx, key, guard)
		return obj, err == nil, err
	}
	obj := cur
	if plan.Mark != nil {
		marked, err := st.Update(ctx, key, plan.Mark, guard)
		if err != nil {
			return nil, false, err
		}
		obj = marked
		guard.ResourceVersion = revisionOf(marked)
	}
	if !plan.ThenDelete {
		return obj, false, nil
	}
	gone, err := st.Delete(ctx, key, guard)
	return gone, err == nil, err
}

// finishDeletion deletes the object at key, whose write next removed its
// last finalizer, provided it is still at cur's revision. It answers with
// next as the write would have been stored, the old resourceVersion and
// all, as the real server does (finalizer-patch-remove-200.json).
func (h *Handlers) finishDeletion(ctx context.Context, key string, e errDeleteInstead, rv string) (*api.Object, error) {
	n, _ := strconv.ParseInt(rv, 10, 64)
	if _, err := h.store.Delete(ctx, key, store.Preconditions{UID: e.next.Metadata.UID, ResourceVersion: n}); err != nil {
		return nil, err
	}
	return e.next, nil
}

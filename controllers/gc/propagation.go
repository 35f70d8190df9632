package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/narrate"
)

// Orphan and foreground propagation. A DELETE with
// propagationPolicy=Orphan or Foreground does not delete the owner: the
// apiserver marks it (deletionTimestamp) and adds a finalizer that is this
// collector's to act on and remove (registry/generic/registry/store.go,
// deletionFinalizersForGarbageCollection):
//
//   - "orphan": every dependent loses its reference to the owner, then the
//     finalizer goes, and with it the owner; the dependents stay, owned by
//     nobody (attemptToOrphanWorker and orphanDependents in Kubernetes'
//     pkg/controller/garbagecollector/garbagecollector.go).
//   - "foregroundDeletion": every dependent is deleted, and the finalizer
//     goes once no dependent whose reference says blockOwnerDeletion is
//     left (processDeletingDependentsItem); the owner's deletion waits for
//     them. A dependent that has dependents of its own is deleted in the
//     foreground in turn.

// deletingDependents reports whether o is being deleted in the foreground.
func deletingDependents(o *api.Object) bool {
	return o.Metadata.DeletionTimestamp != nil && slices.Contains(finalizers(o), finalizerDeleteDependents)
}

// The garbage collector's finalizers (metav1.FinalizerOrphanDependents,
// metav1.FinalizerDeleteDependents).
const (
	finalizerOrphanDependents = "orphan"
	finalizerDeleteDependents = "foregroundDeletion"
)

// finalizers returns o's metadata.finalizers.
func finalizers(o *api.Object) []string {
	for _, f := range o.Metadata.Extra {
		if f.Name == "finalizers" {
			var out []string
			_ = json.Unmarshal(f.Value, &out) // a list of strings, or nothing to act on
			return out
		}
	}
	return nil
}

// queueIfFinalizing queues obj, of resource i, when it is being deleted
// with one of the collector's finalizers.
func (g *Collector) queueIfFinalizing(i int, obj *api.Object) {
	if obj.Metadata.DeletionTimestamp == nil {
		return
	}
	f := finalizers(obj)
	if slices.Contains(f, finalizerOrphanDependents) || slices.Contains(f, finalizerDeleteDependents) {
		g.queue.Add(item{i, obj.Key()})
	}
}

// queueOwnersDeletingDependents queues the owners of o that are being
// deleted in the foreground: o's change (gone, or no longer blocking them)
// may be what they wait for.
func (g *Collector) queueOwnersDeletingDependents(o *api.Object) {
	if o == nil {
		return
	}
	refs, _ := controllers.OwnerReferences(o)
	for _, ref := range refs {
		i, r, ok := g.resourceOf(ref.APIVersion, ref.Kind)
		if !ok {
			continue
		}
		ns := ""
		if r.Namespaced {
			ns = o.Metadata.Namespace
		}
		key := objectKey(ns, ref.Name)
		if owner, ok := r.Informer.GetIndexer().GetByKey(key); ok && owner.Metadata.UID == ref.UID && deletingDependents(owner) {
			g.queue.Add(item{i, key})
		}
	}
}

// finalize does what the finalizers of owner, being deleted, ask of the
// collector: orphan its dependents, or delete them first.
func (g *Collector) finalize(ctx context.Context, res Resource, owner *api.Object) error {
	f := finalizers(owner)
	if (slices.Contains(f, finalizerOrphanDependents) || slices.Contains(f, finalizerDeleteDependents)) && !g.hasSynced() {
		// A cache still listing may hold more dependents: orphaning
		// fewer would leave the others to be collected as the dependents
		// of a gone owner. (Kubernetes' collector waits for every
		// monitor to sync before its workers run, and again after adding
		// monitors: GarbageCollector.Sync.)
		return errCachesNotSynced
	}
	switch {
	case slices.Contains(f, finalizerOrphanDependents):
		if err := g.orphanDependents(ctx, owner); err != nil {
			return err
		}
		return g.removeFinalizer(ctx, res, owner, finalizerOrphanDependents)
	case slices.Contains(f, finalizerDeleteDependents):
		deps := g.dependents(owner)
		blocking := 0
		for _, d := range deps {
			if blocks(d.obj, owner.Metadata.UID) {
				blocking++
			}
			g.queue.Add(item{d.res, d.obj.Key()}) // each one's reconcile deletes it
		}
		if blocking > 0 {
			return nil // their deletions queue the owner again
		}
		return g.removeFinalizer(ctx, res, owner, finalizerDeleteDependents)
	}
	return nil
}

// errCachesNotSynced asks for an owner to be finalized later, once every
// cache has synced.
var errCachesNotSynced = errors.New("not every cache has synced yet: looking again")

// blocks reports whether dep's reference to the owner uid says
// blockOwnerDeletion.
func blocks(dep *api.Object, uid string) bool {
	refs, _ := controllers.OwnerReferences(dep)
	for _, r := range refs {
		if r.UID == uid && r.BlockOwnerDeletion != nil && *r.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// orphanDependents removes every reference to owner from its dependents,
// each with a JSON merge patch at the resourceVersion it was read at
// (deleteOwnerRefJSONMergePatch): a dependent changed meanwhile fails with
// 409 and the owner is looked at again.
func (g *Collector) orphanDependents(ctx context.Context, owner *api.Object) error {
	for _, d := range g.dependents(owner) {
		r, ok := g.resource(d.res)
		if !ok {
			continue
		}
		refs, _ := controllers.OwnerReferences(d.obj)
		kept := make([]controllers.OwnerReference, 0, len(refs))
		for _, ref := range refs {
			if ref.UID != owner.Metadata.UID {
				kept = append(kept, ref)
			}
		}
		var keptJSON any = kept
		if len(kept) == 0 {
			keptJSON = nil // null: the member goes
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"ownerReferences": keptJSON, "resourceVersion": d.obj.Metadata.ResourceVersion,
		}})
		if err != nil {
			return err
		}
		rc := g.opts.Client.Resource(r.GVR).Namespace(d.obj.Metadata.Namespace)
		if _, err := rc.Patch(ctx, d.obj.Metadata.Name, client.PatchTypeMerge, patch); err != nil && !client.IsNotFound(err) {
			return fmt.Errorf("gc: orphaning %s %s: %w", r.GVR.Resource, d.obj.Key(), err)
		}
		g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: orphaned (owner %s is deleted with propagationPolicy=Orphan)", r.GVR.Resource, d.obj.Key(), owner.Key())
	}
	return nil
}

// removeFinalizer takes finalizer off owner with a JSON merge patch of its
// finalizers at the resourceVersion it was read at (removeFinalizer in
// pkg/controller/garbagecollector/operations.go); if it was the last, the
// apiserver deletes the owner.
func (g *Collector) removeFinalizer(ctx context.Context, res Resource, owner *api.Object, finalizer string) error {
	var kept []string
	for _, f := range finalizers(owner) {
		if f != finalizer {
			kept = append(kept, f)
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"finalizers": kept, "resourceVersion": owner.Metadata.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	rc := g.opts.Client.Resource(res.GVR).Namespace(owner.Metadata.Namespace)
	if _, err := rc.Patch(ctx, owner.Metadata.Name, client.PatchTypeMerge, patch); err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("gc: removing the %s finalizer of %s %s: %w", finalizer, res.GVR.Resource, owner.Key(), err)
	}
	g.opts.Tracer.Printf(narrate.Controller, "gc: %s %s: %s finalizer removed", res.GVR.Resource, owner.Key(), finalizer)
	return nil
}

// dependentPolicy is the propagationPolicy obj, whose owners are all gone
// or deleting their dependents first, is deleted with. Owned by one that
// waits and owning objects of its own, it is deleted in the foreground
// too, after its references stop blocking owners if one of its own
// dependents is deleting in the foreground as well (to break a cycle);
// otherwise its own finalizers say, Background by default.
func (g *Collector) dependentPolicy(ctx context.Context, rc *client.ResourceClient, obj *api.Object, owners classified) (string, error) {
	if len(owners.waiting) != 0 {
		if deps := g.dependents(obj); len(deps) != 0 {
			if slices.ContainsFunc(deps, func(d dependent) bool { return deletingDependents(d.obj) }) {
				if err := unblockOwnerReferences(ctx, rc, obj); err != nil {
					return "", err
				}
			}
			return "Foreground", nil
		}
	}
	switch f := finalizers(obj); {
	case slices.Contains(f, finalizerOrphanDependents):
		return "Orphan", nil
	case slices.Contains(f, finalizerDeleteDependents):
		return "Foreground", nil
	}
	return "Background", nil
}

// unblockOwnerReferences sets blockOwnerDeletion false on every reference
// of obj that has it (unblockOwnerReferencesJSONMergePatch).
func unblockOwnerReferences(ctx context.Context, rc *client.ResourceClient, obj *api.Object) error {
	refs, _ := controllers.OwnerReferences(obj)
	no := false
	for i := range refs {
		if refs[i].BlockOwnerDeletion != nil && *refs[i].BlockOwnerDeletion {
			refs[i].BlockOwnerDeletion = &no
		}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"ownerReferences": refs, "resourceVersion": obj.Metadata.ResourceVersion,
	}})
	if err != nil {
		return err
	}
	if _, err := rc.Patch(ctx, obj.Metadata.Name, client.PatchTypeMerge, patch); err != nil {
		return fmt.Errorf("unblocking its owner references: %w", err)
	}
	return nil
}

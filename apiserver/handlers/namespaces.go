package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/apiserver/registry"
	"listwatch/store"
)

// Namespaces in the handlers: what the NamespaceLifecycle admission plugin
// (apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go) and
// the namespace REST storage's Delete
// (pkg/registry/core/namespace/storage/storage.go) do in Kubernetes.
// Creating in a namespace that does not exist is 404, in one being
// terminated 403; deleting a namespace marks it Terminating and leaves its
// contents to the namespace controller (registry/namespaces.go tells the
// whole life).

// namespaceTerminatingCause is core/v1 NamespaceTerminatingCause: the
// cause a client (the deployment controller, for one) checks to know that
// every further create in the namespace will fail too.
const namespaceTerminatingCause api.CauseType = "NamespaceTerminating"

// admitToNamespace refuses to create obj of res in a namespace that does
// not exist (404) or is being terminated (403 Forbidden, with the
// NamespaceTerminating cause), as NamespaceLifecycle's Admit does.
func (h *Handlers) admitToNamespace(ctx context.Context, res *registry.Resource, obj *api.Object) error {
	nsRes := h.reg.Namespaces().Resource
	ns, err := h.store.Get(ctx, nsRes.Key("", obj.Metadata.Namespace))
	if errors.Is(err, store.ErrNotFound) {
		return api.NewNotFound(nsRes.GroupResource(), obj.Metadata.Namespace)
	}
	if err != nil {
		return err
	}
	if registry.NamespacePhase(ns) != registry.NamespaceTerminating {
		return nil
	}
	st := api.NewForbidden(res.GroupResource(), obj.Metadata.Name,
		fmt.Sprintf("unable to create new content in namespace %s because it is being terminated", obj.Metadata.Namespace))
	st.Details.Causes = append(st.Details.Causes, api.StatusCause{Type: namespaceTerminatingCause,
		Message: fmt.Sprintf("namespace %s is being terminated", obj.Metadata.Namespace), Field: "metadata.namespace"})
	return st
}

// deleteNamespace is a DELETE of the namespace at key. The first marks it
// Terminating and answers it (gone false); a later one answers it again
// while spec.finalizers holds anything, and deletes it once the namespace
// controller has emptied them (which its finalize write does anyway).
func (h *Handlers) deleteNamespace(ctx context.Context, res *registry.Resource, key string, pre store.Preconditions) (*api.Object, bool, error) {
	for attempt := 1; ; attempt++ {
		cur, err := h.store.Get(ctx, key)
		if err != nil {
			return nil, false, err
		}
		if (pre.UID != "" && pre.UID != cur.Metadata.UID) || (pre.ResourceVersion != 0 && pre.ResourceVersion != revisionOf(cur)) {
			return nil, false, store.ErrConflict
		}
		if cur.Metadata.DeletionTimestamp != nil {
			if len(registry.SpecFinalizers(cur)) > 0 {
				return cur, false, nil
			}
			return h.deleteObject(ctx, res, key, pre, registry.DeleteRequest{})
		}
		next, err := registry.MarkNamespaceTerminating(cur, time.Now())
		if err != nil {
			return nil, false, err
		}
		marked, err := h.store.Update(ctx, key, next, store.Preconditions{UID: cur.Metadata.UID, ResourceVersion: revisionOf(cur)})
		if errors.Is(err, store.ErrConflict) && attempt < maxDeleteAttempts {
			continue // written in between: decide again
		}
		return marked, false, err
	}
}

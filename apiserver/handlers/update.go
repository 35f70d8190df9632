package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
	"listwatch/store"
)

// UPDATE: PUT the whole object. Optimistic concurrency is the point: a body
// with metadata.resourceVersion updates only if that is still the stored
// version, else 409 Conflict "the object has been modified; please apply
// your changes to the latest version and try again"
// (error-409-conflict-stale-rv.json); a body without one overwrites
// (last writer wins, which Kubernetes allows for these resources). Writing
// an unchanged object makes no new revision and no watch event.
// Kubernetes: handlers/update.go, registry/generic/registry/store.go Update.

func (h *Handlers) serveUpdate(w http.ResponseWriter, r *http.Request, ri RequestInfo) {
	res := ri.Entry.Resource
	obj, err := h.readObject(w, r, res, "UpdateOptions")
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if err := checkNameAndNamespace(res, obj, ri); err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	var wantRV int64
	if rv := obj.Metadata.ResourceVersion; rv != "" {
		n, err := strconv.ParseUint(rv, 10, 63)
		if err != nil {
			negotiation.WriteError(w, r, api.NewBadRequest(fmt.Sprintf("metadata.resourceVersion: Invalid value: %q: %v", rv, err)))
			return
		}
		wantRV = int64(n)
	}
	if err := registry.Validate(res, obj); err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	updated, err := h.guaranteedUpdate(r, ri, func(cur *api.Object) (*api.Object, error) {
		if wantRV != 0 && revisionOf(cur) != wantRV {
			return nil, api.NewConflict(res.GroupResource(), ri.Name, api.OptimisticLockErrorMsg)
		}
		if uid := obj.Metadata.UID; uid != "" && uid != cur.Metadata.UID {
			return nil, api.NewConflict(res.GroupResource(), ri.Name,
				fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.Metadata.UID))
		}
		next, err := prepareWrite(res, ri, obj.DeepCopy(), cur)
		if err == nil {
			err = h.recordUpdate(r, ri, next, cur) // managedfields.go
		}
		return next, err
	})
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "UPDATE %s %s → rv %s", res.Name, updated.Key(), updated.Metadata.ResourceVersion)
	}
	negotiation.WriteObject(w, r, http.StatusOK, negotiation.WithKind(res, updated))
}

// guaranteedUpdate runs tryUpdate against the current object until it
// sticks, translating the store's errors into Statuses. A write that takes
// the last finalizer off an object being deleted deletes it instead
// (finalizers.go).
func (h *Handlers) guaranteedUpdate(r *http.Request, ri RequestInfo, tryUpdate func(cur *api.Object) (*api.Object, error)) (*api.Object, error) {
	res := ri.Entry.Resource
	key := res.Key(ri.Namespace, ri.Name)
	var updated *api.Object
	var err error
	for attempt := 1; ; attempt++ {
		var curRV string
		updated, err = res.Storage(h.store).GuaranteedUpdate(r.Context(), key, func(cur *api.Object) (*api.Object, error) {
			next, err := tryUpdate(cur)
			if err != nil {
				return nil, err
			}
			if err := res.CheckFinalizerUpdate(next, cur); err != nil {
				return nil, err
			}
			if res.ShouldDeleteDuringUpdate(next) {
				curRV = cur.Metadata.ResourceVersion
				return nil, errDeleteInstead{next: next}
			}
			return next, nil
		})
		var del errDeleteInstead
		if errors.As(err, &del) {
			updated, err = h.finishDeletion(r.Context(), key, del, curRV)
			if errors.Is(err, store.ErrConflict) && attempt < maxDeleteAttempts {
				continue // written in between: apply the write again
			}
		}
		break
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, api.NewNotFound(res.GroupResource(), ri.Name)
	case errors.Is(err, store.ErrConflict):
		return nil, api.NewConflict(res.GroupResource(), ri.Name, api.OptimisticLockErrorMsg)
	}
	return updated, err
}

// checkNameAndNamespace checks an update's body names the object of the URL
// (handlers/rest.go checkName) and fills in the namespace.
func checkNameAndNamespace(res *registry.Resource, obj *api.Object, ri RequestInfo) error {
	if obj.Metadata.Name != ri.Name {
		return api.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", obj.Metadata.Name, ri.Name))
	}
	if res.Namespaced && obj.Metadata.Namespace != "" && obj.Metadata.Namespace != ri.Namespace {
		return api.NewBadRequest(fmt.Sprintf("the namespace of the object (%s) does not match the namespace on the request (%s)", obj.Metadata.Namespace, ri.Namespace))
	}
	return matchNamespace(res, obj, ri.Namespace)
}

// prepareUpdate carries what the server owns from the stored object cur to
// its replacement next: uid, creationTimestamp, deletionTimestamp and
// generation (bumped when spec changed), plus the resource's own rules.
func prepareUpdate(res *registry.Resource, next, cur *api.Object) (*api.Object, error) {
	next.Kind, next.APIVersion = res.Kind, res.APIVersion()
	carryServerMetadata(next, cur)
	if res.Default != nil {
		// Before the specs are compared: a default the client left out
		// is no change (the real server defaults when it decodes).
		if err := res.Default(next); err != nil {
			return nil, err
		}
	}
	if res.AdmitUpdate != nil {
		if err := res.AdmitUpdate(next, cur); err != nil {
			return nil, err
		}
	}
	if res.Generation {
		next.Metadata.Generation = cur.Metadata.Generation
		if !sameJSON(cur.Get(res.SpecField()), next.Get(res.SpecField())) {
			next.Metadata.Generation++
		}
	}
	if res.PrepareUpdate != nil {
		if err := res.PrepareUpdate(next, cur); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// prepareWrite is prepareUpdate for a write of the object, or, through the
// status subresource, the stored object with its status and metadata
// replaced (a custom resource's status only), or, through a namespace's
// finalize subresource, with only its spec replaced.
func prepareWrite(res *registry.Resource, ri RequestInfo, next, cur *api.Object) (*api.Object, error) {
	if ri.Subresource == registry.SubresourceFinalize {
		out, err := registry.FinalizeNamespace(next, cur)
		if err != nil {
			return nil, err
		}
		out.Kind, out.APIVersion = res.Kind, res.APIVersion()
		return out, nil
	}
	if ri.Subresource == registry.SubresourceResize {
		// Only the containers' resources change; then it is an update of
		// the Pod like any other (status kept, generation bumped).
		resized, err := registry.ResizePod(next, cur)
		if err != nil {
			return nil, err
		}
		next = resized
	}
	if ri.Subresource != registry.SubresourceStatus {
		if res.HasSubresource(registry.SubresourceStatus) {
			// Status is written through /status only: a write of the
			// object keeps the stored status, as on a real server.
			if raw := cur.Get("status"); raw != nil {
				if err := next.Set("status", raw); err != nil {
					return nil, api.NewInternalError(err)
				}
			} else {
				next.Remove("status")
			}
		}
		return prepareUpdate(res, next, cur)
	}
	st := cur.DeepCopy()
	if !res.StatusKeepsStoredMetadata {
		// A built-in kind's status strategy resets spec, not metadata:
		// labels, annotations and finalizers sent to /status are written
		// (the namespace strategy's namespaceStatusStrategy.PrepareForUpdate
		// keeps all of it; the kind's PrepareStatusUpdate puts back what
		// its strategy does not let through).
		st.Metadata = next.Metadata
		carryServerMetadata(st, cur)
		st.Metadata.Generation = cur.Metadata.Generation
	}
	if raw := next.Get("status"); raw != nil {
		if err := st.Set("status", raw); err != nil {
			return nil, api.NewBadRequest(err.Error())
		}
	} else {
		st.Remove("status")
	}
	st.Kind, st.APIVersion = res.Kind, res.APIVersion()
	if res.PrepareStatusUpdate != nil {
		if err := res.PrepareStatusUpdate(st, cur); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// carryServerMetadata carries what no write may change from the stored
// object cur to its replacement next: uid, creationTimestamp, the deletion
// fields and the resourceVersion it replaces (registry/rest/update.go
// BeforeUpdate).
func carryServerMetadata(next, cur *api.Object) {
	next.Metadata.UID = cur.Metadata.UID
	next.Metadata.CreationTimestamp = cur.Metadata.CreationTimestamp
	registry.CarryDeletion(next, cur)
	next.Metadata.ResourceVersion = cur.Metadata.ResourceVersion
}

// sameJSON compares two raw JSON values ignoring insignificant whitespace.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// revisionOf is the revision an object was last written at.
func revisionOf(obj *api.Object) int64 {
	n, _ := strconv.ParseInt(obj.Metadata.ResourceVersion, 10, 64)
	return n
}

package handlers

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"slices"

	"listwatch/api"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/patch"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
)

// PATCH: change part of an object. The patch is applied to the current
// object inside a guaranteed update, so a concurrent writer makes it retry
// on the new state rather than fail; a patch that sets
// metadata.resourceVersion turns that into a precondition (409 if stale).
// Kubernetes: handlers/patch.go.

func (h *Handlers) servePatch(w http.ResponseWriter, r *http.Request, ri RequestInfo) {
	res := ri.Entry.Resource
	pr, ok := readPatch(w, r)
	if !ok {
		return
	}
	patchType, isApply, directive := pr.patchType, pr.isApply, pr.directive
	var warnings []string
	var apply func([]byte) ([]byte, error)
	var ac *applyCall
	var err error
	if isApply {
		if ac, err = h.readApply(r, ri, pr.body, directive); err == nil { // apply.go
			apply = ac.apply
		}
	} else {
		apply = decodeOnFirstUse(patchType, pr.body, directive != fieldValidationIgnore)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	updated, err := h.guaranteedUpdate(r, ri, func(cur *api.Object) (*api.Object, error) {
		// A client that went away gets no more work done for it, not even
		// one more retry after a conflict. (The store checks too, between
		// attempts; applying is bounded by the patch package's limits.)
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		patched, err := apply(negotiation.WithKind(res, cur).AppendJSON(nil))
		if err != nil {
			return nil, err
		}
		if patched, warnings, err = conformPatched(res, patched, directive); err != nil {
			return nil, err
		}
		next, err := decodePatched(res, ri, cur, patched)
		if err != nil {
			return nil, err
		}
		keepFieldOrder(next, cur)
		if err := registry.Validate(res, next); err != nil {
			return nil, err
		}
		next, err = prepareWrite(res, ri, next, cur)
		if err == nil && !isApply {
			err = h.recordUpdate(r, ri, next, cur) // managedfields.go
		}
		return next, err
	})
	if isApply && api.IsNotFound(err) && ri.Subresource == "" {
		h.createByApply(w, r, ri, ac)
		return
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if isApply {
		addWarnings(w, ac.warnings())
	}
	addWarnings(w, warnings)
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "PATCH %s %s (%s) → rv %s", res.Name, updated.Key(), patchType, updated.Metadata.ResourceVersion)
	}
	negotiation.WriteObject(w, r, http.StatusOK, negotiation.WithKind(res, updated))
}

// decodeOnFirstUse is patch.Func, decoded when it is first applied rather
// than before: kube-apiserver's patchers decode a merge, JSON or strategic
// merge patch only once they hold the current object (k8s.io/apiserver
// v0.37.2 pkg/endpoints/handlers/patch.go, applyPatchToCurrentObject), so
// a patch to an object that does not exist is 404 even when the patch
// itself would not decode.
func decodeOnFirstUse(patchType string, body []byte, decodeStrictly bool) func([]byte) ([]byte, error) {
	var apply func([]byte) ([]byte, error)
	var err error
	return func(cur []byte) ([]byte, error) {
		if apply == nil && err == nil {
			apply, err = patch.Func(patchType, body, decodeStrictly)
		}
		if err != nil {
			return nil, err
		}
		return apply(cur)
	}
}

// patchRequest is what a PATCH asks for, read and checked before
// anything is patched.
type patchRequest struct {
	patchType string // the media type: a merge, JSON or strategic merge patch, or an apply
	isApply   bool
	directive string // ?fieldValidation
	body      []byte
}

// readPatch reads a PATCH's type, options and body and checks them,
// answering the client itself when it refuses one (ok false).
func readPatch(w http.ResponseWriter, r *http.Request) (pr patchRequest, ok bool) {
	pr.patchType, _, _ = mime.ParseMediaType(r.Header.Get("Content-Type"))
	pr.isApply = pr.patchType == patch.ApplyPatchType
	if !patch.Supported(pr.patchType) && !pr.isApply {
		negotiation.WriteStatus(w, r, patch.UnsupportedType())
		return pr, false
	}
	if err := rejectDryRun(r); err != nil {
		negotiation.WriteError(w, r, err)
		return pr, false
	}
	var err error
	if pr.directive, err = fieldValidation(r, "PatchOptions"); err != nil {
		negotiation.WriteError(w, r, err)
		return pr, false
	}
	if pr.body, err = filters.ReadBody(w, r); err != nil {
		negotiation.WriteError(w, r, err)
		return pr, false
	}
	if !pr.isApply && !json.Valid(pr.body) {
		// Checked before anything is patched, so that the audit log only
		// ever records valid JSON (handlers/patch.go
		// validateAndTranscodePatch, kube-apiserver 1.37).
		negotiation.WriteError(w, r, api.NewBadRequest("invalid JSON patch"))
		return pr, false
	}
	return pr, true
}

// decodePatched decodes the patched object and checks what a patch may not
// change: kind and apiVersion, name and namespace, and the object's
// resourceVersion and uid, which, if the patch names them, are
// preconditions (409 if stale).
func decodePatched(res *registry.Resource, ri RequestInfo, cur *api.Object, patched []byte) (*api.Object, error) {
	next := &api.Object{}
	if err := next.UnmarshalJSON(patched); err != nil {
		return nil, api.NewInvalid(api.GroupKind{}, "", []api.StatusCause{
			registry.InvalidValue("patch", string(patched), err.Error())})
	}
	if next.Kind != res.Kind || next.APIVersion != res.APIVersion() {
		return nil, api.NewBadRequest(fmt.Sprintf("a patch cannot change kind or apiVersion (to %s %s)", next.APIVersion, next.Kind))
	}
	if err := checkNameAndNamespace(res, next, ri); err != nil {
		return nil, err
	}
	if rv := next.Metadata.ResourceVersion; rv != cur.Metadata.ResourceVersion {
		// The patch named a resourceVersion: it must be the current one.
		return nil, api.NewConflict(res.GroupResource(), ri.Name, api.OptimisticLockErrorMsg)
	}
	if uid := next.Metadata.UID; uid != cur.Metadata.UID {
		return nil, api.NewConflict(res.GroupResource(), ri.Name,
			fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.Metadata.UID))
	}
	return next, nil
}

// keepFieldOrder puts next's top-level fields and extra metadata back in
// cur's order (a patch goes through a Go map, which sorts them), new ones
// after, so a patched object reads like the one it came from.
func keepFieldOrder(next, cur *api.Object) {
	next.Fields = reorder(next.Fields, cur.Fields)
	next.Metadata.Extra = reorder(next.Metadata.Extra, cur.Metadata.Extra)
}

func reorder(fields, like []api.Field) []api.Field {
	out := make([]api.Field, 0, len(fields))
	for _, l := range like {
		if i := slices.IndexFunc(fields, func(f api.Field) bool { return f.Name == l.Name }); i >= 0 {
			out = append(out, fields[i])
		}
	}
	for _, f := range fields {
		if !slices.ContainsFunc(like, func(l api.Field) bool { return l.Name == f.Name }) {
			out = append(out, f)
		}
	}
	return out
}

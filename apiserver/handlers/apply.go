package handlers

import (
	"net/http"
	"time"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/patch"
	"listwatch/narrate"
)

// Server-side apply: a PATCH with Content-Type
// application/apply-patch+yaml, ?fieldManager (required) and ?force. It
// goes through the same pipeline as every patch (patch.go: typed and
// pruned, the object's checks, a guaranteed update); package patch
// computes the result and the ownership (patch/apply.go, which says what
// of the real merge semantics is left out). Applying to an object that
// does not exist creates it: 201. Kubernetes: handlers/patch.go
// applyPatcher and k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager.

// applyFunc reads the apply request: its manager, force and configuration.
func applyFunc(r *http.Request, apiVersion string, body []byte) (func([]byte) ([]byte, error), []byte, patch.ApplyRequest, error) {
	q := r.URL.Query()
	req := patch.ApplyRequest{Manager: q.Get("fieldManager"), APIVersion: apiVersion, Now: time.Now()}
	if req.Manager == "" {
		return nil, nil, req, api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", []api.StatusCause{
			api.FieldRequired("fieldManager", "is required for apply patch")})
	}
	req.Force, _ = queryBool(q, "force")
	applied, err := patch.ParseApplied(body)
	if err != nil {
		return nil, nil, req, err
	}
	return func(live []byte) ([]byte, error) { return patch.Apply(live, applied, req) }, applied, req, nil
}

// createByApply creates the object an apply names when there is none yet.
func (h *Handlers) createByApply(w http.ResponseWriter, r *http.Request, ri RequestInfo, applied []byte, req patch.ApplyRequest, directive string) {
	res := ri.Entry.Resource
	built, err := patch.Apply(nil, applied, req)
	if err == nil {
		built, err = conformBody(w, res, built, directive)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	obj, err := negotiation.DecodeObject(res, built)
	if err == nil {
		err = checkNameAndNamespace(res, obj, ri)
	}
	if err == nil && obj.Metadata.ResourceVersion != "" {
		err = api.NewInternalError(errResourceVersionOnCreate)
	}
	if err == nil {
		wipeSystemFields(obj)
		if res.Namespaced {
			err = h.admitToNamespace(r.Context(), res, obj)
		}
	}
	var created *api.Object
	if err == nil {
		created, err = h.create(r, res, obj)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "APPLY %s %s (created by %s) → rv %s", res.Name, created.Key(), req.Manager, created.Metadata.ResourceVersion)
	}
	negotiation.WriteObject(w, r, http.StatusCreated, negotiation.WithKind(res, created))
}

package handlers

import (
	"encoding/json"
	"net/http"
	"time"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/patch"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
)

// Server-side apply: a PATCH with Content-Type
// application/apply-patch+yaml, ?fieldManager (required) and ?force. It
// goes through the same pipeline as every patch (patch.go: typed and
// pruned, the object's checks, a guaranteed update); package patch
// computes the result and the ownership (patch/apply.go, which says what
// of the real merge semantics is left out), with the kind's schema
// (managedfields.go). Applying to an object that
// does not exist creates it: 201. Kubernetes: handlers/patch.go
// applyPatcher and k8s.io/apiserver/pkg/endpoints/handlers/fieldmanager.

// applyFunc reads the apply request: its manager, force and configuration.
func (h *Handlers) applyFunc(r *http.Request, ri RequestInfo, body []byte) (func([]byte) ([]byte, error), []byte, patch.ApplyRequest, error) {
	q := r.URL.Query()
	res := ri.Entry.Resource
	req := patch.ApplyRequest{Manager: q.Get("fieldManager"), APIVersion: res.APIVersion(), Subresource: ri.Subresource,
		Now: time.Now(), Schema: h.schemas.schemaOf(res)}
	if req.Manager == "" {
		return nil, nil, req, api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", []api.StatusCause{
			api.FieldRequired("fieldManager", "is required for apply patch")})
	}
	req.Force, _ = queryBool(q, "force")
	applied, err := patch.ParseApplied(body)
	if err != nil {
		return nil, nil, req, err
	}
	req.Ignored = resetFields(res, ri.Subresource, applied)
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

// resetFields are the top-level fields an apply through this endpoint
// cannot set, so does not own: the status of an object with a status
// subresource, and through /status everything but the status (the
// strategies' GetResetFields, pkg/registry/*/strategy.go).
func resetFields(res *registry.Resource, subresource string, applied []byte) []string {
	switch {
	case subresource == registry.SubresourceStatus:
		var top map[string]json.RawMessage
		if json.Unmarshal(applied, &top) != nil {
			return nil
		}
		var out []string
		for name := range top {
			switch name {
			case "apiVersion", "kind", "metadata", "status":
			default:
				out = append(out, name)
			}
		}
		return out
	case subresource == "" && res.HasSubresource(registry.SubresourceStatus):
		return []string{"status"}
	}
	return nil
}

package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
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

// applyCall is one apply, read from its request.
type applyCall struct {
	res       *registry.Resource
	req       patch.ApplyRequest
	applied   []byte   // the configuration, as a JSON object
	repeated  []string // the keys it gives twice (patch.ParseApplied)
	directive string   // ?fieldValidation
}

// readApply reads the apply request: its manager, force and configuration.
func (h *Handlers) readApply(r *http.Request, ri RequestInfo, body []byte, directive string) (*applyCall, error) {
	q := r.URL.Query()
	res := ri.Entry.Resource
	a := &applyCall{res: res, directive: directive, req: patch.ApplyRequest{Manager: q.Get("fieldManager"),
		APIVersion: res.APIVersion(), Subresource: ri.Subresource, Now: time.Now(), Schema: h.schemas.schemaOf(res)}}
	if a.req.Manager == "" {
		return nil, api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "PatchOptions"}, "", []api.StatusCause{
			api.FieldRequired("fieldManager", "is required for apply patch")})
	}
	a.req.Force, _ = queryBool(q, "force")
	var err error
	if a.applied, a.repeated, err = patch.ParseApplied(body); err != nil {
		return nil, err
	}
	a.req.Ignored = resetFields(res, ri.Subresource, a.applied)
	return a, nil
}

// apply applies the configuration to live (nil: there is no object yet),
// in kube-apiserver 1.37's order (handlers/patch.go
// applyPatchToCurrentObject): the field manager checks the
// configuration's version and fields, then merges; only then are
// repeated keys refused, under fieldValidation=Strict.
func (a *applyCall) apply(live []byte) ([]byte, error) {
	if err := a.check(); err != nil {
		return nil, err
	}
	out, err := patch.Apply(live, a.applied, a.req)
	if err != nil {
		return nil, err
	}
	if len(a.repeated) > 0 && a.directive == fieldValidationStrict {
		return nil, patch.StrictApplyError(a.repeated)
	}
	return out, nil
}

// warnings are the Warning headers an apply that worked sends: each
// repeated key under fieldValidation=Warn.
func (a *applyCall) warnings() []string {
	if a.directive == fieldValidationWarn {
		return a.repeated
	}
	return nil
}

// check is what the field manager checks before it merges: the
// configuration must be of the endpoint's group, version and kind (400,
// util/managedfields/internal/versioncheck.go), and a custom resource's
// may only name the fields its schema declares (a 500, as the real server
// answers it: structuredmerge.go Apply, patch/undeclared.go).
func (a *applyCall) check() error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(a.applied, &head) // a member of the wrong type reads as empty
	group, version := "", head.APIVersion
	if i := strings.Index(version, "/"); i >= 0 {
		group, version = version[:i], version[i+1:]
	}
	if strings.Contains(version, "/") {
		group, version = "", "" // schema.ParseGroupVersion fails: no group, no version
	}
	gvk := fmt.Sprintf("%s/%s, Kind=%s", group, version, head.Kind)
	if group != a.res.Group || version != a.res.Version || head.Kind != a.res.Kind {
		return api.NewBadRequest("invalid object type: " + gvk)
	}
	if !a.res.IsCustom() {
		return nil
	}
	if errs := a.req.Schema.Undeclared(a.applied); len(errs) > 0 {
		obj := fmt.Sprintf("%s/%s; %s", head.Metadata.Namespace, head.Metadata.Name, gvk)
		return api.ErrorToStatus(errors.New(patch.UndeclaredError(obj, errs)))
	}
	return nil
}

// createByApply creates the object an apply names when there is none yet.
func (h *Handlers) createByApply(w http.ResponseWriter, r *http.Request, ri RequestInfo, a *applyCall) {
	res := ri.Entry.Resource
	built, err := a.apply(nil)
	if err == nil {
		addWarnings(w, a.warnings())
		built, err = conformBody(w, res, built, a.directive, nil)
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
		h.tracer.Printf(narrate.HTTP, "APPLY %s %s (created by %s) → rv %s", res.Name, created.Key(), a.req.Manager, created.Metadata.ResourceVersion)
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

package apiserver

import (
	"fmt"
	"mime"
	"net/http"
	"slices"

	"listwatch/api"
	"listwatch/narrate"
)

// PATCH: change part of an object. The patch is applied to the current
// object inside a guaranteed update, so a concurrent writer makes it retry
// on the new state rather than fail; a patch that sets
// metadata.resourceVersion turns that into a precondition (409 if stale).
// Kubernetes: handlers/patch.go.

// The patch types we read. Server-side apply (application/apply-patch+yaml)
// needs managed fields, which this server does not keep: 415.
const (
	mergePatchType     = "application/merge-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	jsonPatchType      = "application/json-patch+json"
)

// unsupportedPatchType is the 415 Kubernetes' router answers for a PATCH
// whose Content-Type is not a patch type (error-415-patch-wrong-content-type.json).
func unsupportedPatchType() *api.Status {
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
		Message: "415: Unsupported Media Type", Reason: api.ReasonUnsupportedMediaType,
		Details: &api.StatusDetails{}, Code: http.StatusUnsupportedMediaType}
}

func (s *Server) servePatch(w http.ResponseWriter, r *http.Request, ri requestInfo) {
	res := ri.rs.res
	patchType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch patchType {
	case mergePatchType, strategicPatchType, jsonPatchType:
	default:
		s.writeStatus(w, r, unsupportedPatchType())
		return
	}
	if err := rejectDryRun(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	apply, err := patchFunc(patchType, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	updated, err := s.guaranteedUpdate(r, ri, func(cur *api.Object) (*api.Object, error) {
		patched, err := apply(withKind(res, cur).AppendJSON(nil))
		if err != nil {
			return nil, err
		}
		next := &api.Object{}
		if err := next.UnmarshalJSON(patched); err != nil {
			return nil, api.NewInvalid(api.GroupKind{}, "", []api.StatusCause{
				invalidValue("patch", string(patched), err.Error())})
		}
		if next.Kind != res.Kind || next.APIVersion != res.APIVersion() {
			return nil, api.NewBadRequest(fmt.Sprintf("a patch cannot change kind or apiVersion (to %s %s)", next.APIVersion, next.Kind))
		}
		if err := checkNameAndNamespace(res, next, ri); err != nil {
			return nil, err
		}
		if rv := next.Metadata.ResourceVersion; rv != cur.Metadata.ResourceVersion {
			// The patch named a resourceVersion: it must be the current one.
			return nil, api.NewConflict(res.GroupResource(), ri.name, api.OptimisticLockErrorMsg)
		}
		if uid := next.Metadata.UID; uid != cur.Metadata.UID {
			return nil, api.NewConflict(res.GroupResource(), ri.name,
				fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.Metadata.UID))
		}
		keepFieldOrder(next, cur)
		if err := validateMeta(res, next); err != nil {
			return nil, err
		}
		return prepareUpdate(res, next, cur)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.tracer.Enabled() {
		s.tracer.Printf(narrate.HTTP, "PATCH %s %s (%s) → rv %s", res.Name, updated.Key(), patchType, updated.Metadata.ResourceVersion)
	}
	writeObject(w, r, http.StatusOK, withKind(res, updated))
}

// patchFunc checks the patch document once and returns the function that
// applies it to an object's JSON.
func patchFunc(patchType string, body []byte) (func([]byte) ([]byte, error), error) {
	switch patchType {
	case jsonPatchType:
		ops, err := decodeJSONPatch(body)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if len(ops) > maxJSONPatchOperations {
			return nil, api.NewRequestEntityTooLarge(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
		}
		return func(doc []byte) ([]byte, error) {
			out, err := applyJSONPatch(doc, ops)
			if err != nil {
				return nil, &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
					Message: err.Error(), Code: http.StatusUnprocessableEntity}
			}
			return out, nil
		}, nil
	default:
		strategic := patchType == strategicPatchType
		p, err := decodeJSON(body)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if _, ok := p.(map[string]any); !ok {
			return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", errBadMergePatch))
		}
		return func(doc []byte) ([]byte, error) {
			out, err := applyMergePatch(doc, body, strategic)
			if err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("error applying patch: %v", err))
			}
			return out, nil
		}, nil
	}
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

package patch

import (
	"fmt"
	"net/http"

	"listwatch/api"
)

// The patch types Func applies. Server-side apply
// (application/apply-patch+yaml, ApplyPatchType) is apply.go's.
const (
	MergePatchType     = "application/merge-patch+json"
	StrategicPatchType = "application/strategic-merge-patch+json"
	JSONPatchType      = "application/json-patch+json"
)

// Supported reports whether patchType (a media type without parameters) is
// one we apply.
func Supported(patchType string) bool {
	switch patchType {
	case MergePatchType, StrategicPatchType, JSONPatchType:
		return true
	}
	return false
}

// UnsupportedType is the 415 Kubernetes' router answers for a PATCH whose
// Content-Type is not a patch type (error-415-patch-wrong-content-type.json).
func UnsupportedType() *api.Status {
	return &api.Status{Kind: "Status", APIVersion: "v1", Status: api.StatusFailure,
		Message: "415: Unsupported Media Type", Reason: api.ReasonUnsupportedMediaType,
		Details: &api.StatusDetails{}, Code: http.StatusUnsupportedMediaType}
}

// MaxResultBytes bounds a patched object's JSON (413 beyond): the request
// body limit, since a patch must not store what a PUT could not send.
// Without it a 1.1 KB patch of 22 copies stored a 16 MB object.
const MaxResultBytes = 3 << 20

// Func checks the patch document once and returns the function that
// applies it to an object's JSON. Both return Status errors: a patch that
// does not decode is 400, a JSON patch with too many operations 413, one
// whose operation fails (or copies more than MaxCopyBytes) 422, and a
// result larger than MaxResultBytes 413.
func Func(patchType string, body []byte) (func([]byte) ([]byte, error), error) {
	switch patchType {
	case JSONPatchType:
		ops, err := decodeJSONPatch(body)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		if len(ops) > MaxJSONPatchOperations {
			return nil, api.NewRequestEntityTooLarge(fmt.Sprintf(
				"The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(ops)))
		}
		return func(doc []byte) ([]byte, error) {
			out, err := applyJSONPatch(doc, ops)
			if err != nil {
				// kube-apiserver answers NewGenericServerResponse(422):
				// reason Invalid, empty details, and the fixed message "the
				// server rejected our request due to an error in our
				// request". We keep the operation's own error as the
				// message, which says what failed.
				st := api.NewGenericServerResponse(http.StatusUnprocessableEntity, "")
				st.Message = err.Error()
				return nil, st
			}
			return checkResultSize(out)
		}, nil
	default:
		strategic := patchType == StrategicPatchType
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
			return checkResultSize(out)
		}, nil
	}
}

// checkResultSize answers 413 for a patched object larger than a body
// may be.
func checkResultSize(out []byte) ([]byte, error) {
	if len(out) > MaxResultBytes {
		return nil, api.NewRequestEntityTooLarge(fmt.Sprintf(
			"the patched object is %d bytes, more than the limit of %d", len(out), MaxResultBytes))
	}
	return out, nil
}

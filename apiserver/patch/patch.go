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
// applies it to an object's JSON. Both return Status errors, as
// kube-apiserver's patchers answer: a patch that does not decode is 400
// (decode.go), a JSON patch with too many operations 413, one that cannot
// apply 422, and a result larger than MaxResultBytes 413. decodeStrictly
// says the request's fieldValidation directive is Warn (the default) or
// Strict, under which kube-apiserver decodes JSON and merge patches into Go
// values before applying them; a strategic merge patch is decoded whatever
// the directive.
func Func(patchType string, body []byte, decodeStrictly bool) (func([]byte) ([]byte, error), error) {
	if patchType == JSONPatchType {
		return jsonPatchFunc(body, decodeStrictly)
	}
	strategic := patchType == StrategicPatchType
	var err error
	switch {
	case strategic:
		err = checkStrategicPatchDecodes(body)
	case decodeStrictly:
		err = checkMergePatchDecodes(body)
	}
	if err != nil {
		return nil, err
	}
	p, err := decodeJSON(body)
	if strategic && err == nil && p == nil {
		// null decodes into an empty map: nothing to merge.
		body, p = []byte("{}"), map[string]any{}
	}
	if _, ok := p.(map[string]any); !ok || err != nil {
		// json-patch's ErrBadJSONPatch, which kube-apiserver returns as is.
		return nil, api.NewBadRequest("Invalid JSON Patch")
	}
	return func(doc []byte) ([]byte, error) {
		out, err := applyMergePatch(doc, body, strategic)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("error applying patch: %v", err))
		}
		return checkResultSize(out)
	}, nil
}

// jsonPatchFunc is Func for a JSON patch. An operation that cannot apply
// (one that fails, an unknown op, a missing path) gets what
// kube-apiserver's jsonPatcher answers with
// NewGenericServerResponse(422): reason Invalid, empty details and a fixed
// message, which does not say which operation failed or why.
func jsonPatchFunc(body []byte, decodeStrictly bool) (func([]byte) ([]byte, error), error) {
	if decodeStrictly {
		if err := checkJSONPatchDecodes(body); err != nil {
			return nil, err
		}
	}
	ops, runnable, err := decodeJSONPatch(body)
	if err != nil {
		return nil, api.NewBadRequest(err.Error())
	}
	if len(ops) > MaxJSONPatchOperations {
		return nil, api.NewRequestEntityTooLarge(fmt.Sprintf(
			"The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(ops)))
	}
	return func(doc []byte) ([]byte, error) {
		if !runnable {
			return nil, cannotApply()
		}
		out, err := applyJSONPatch(doc, ops)
		if err != nil {
			return nil, cannotApply()
		}
		return checkResultSize(out)
	}, nil
}

// cannotApply is the 422 of a JSON patch that does not apply.
func cannotApply() error {
	return api.NewGenericServerResponse(http.StatusUnprocessableEntity, "")
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

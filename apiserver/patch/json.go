package patch

import (
	"encoding/json"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// JSON patch (RFC 6902, application/json-patch+json): a list of operations
// (add, remove, replace, move, copy, test) on JSON pointers, applied in
// order; if any fails, none applies. kubectl patch --type=json sends it.
//
// This is the one part of the server we do not hand-build: a JSON patch is
// a small language, and a faithful, hardened interpreter of it is what
// kube-apiserver itself borrows (see README, Dependencies). Its limits are
// kube-apiserver's.

// MaxJSONPatchOperations bounds the operations of one patch (413 beyond),
// kube-apiserver's maxJSONPatchOperations.
const MaxJSONPatchOperations = 10000

// MaxCopyBytes bounds how much all the "copy" operations of one patch may
// add together (422 beyond): kube-apiserver's JSONPatchMaxCopyBytes,
// 3 MiB. Without it a patch of 50 copies of an array into itself doubles
// it 50 times: 2.4 KB of patch, petabytes of result (docs/limits.md).
const MaxCopyBytes = 3 << 20

// jsonPatchOptions are the library's options for every JSON patch we
// apply, made per call so nothing global is changed. Negative indices
// ("/a/-1") are a non-standard extension kube-apiserver accepts, and so do
// we; everything else is RFC 6902.
func jsonPatchOptions() *jsonpatch.ApplyOptions {
	return &jsonpatch.ApplyOptions{
		SupportNegativeIndices:   true,
		AccumulatedCopySizeLimit: MaxCopyBytes,
		EscapeHTML:               false,
	}
}

// decodeJSONPatch parses a JSON patch document as kube-apiserver's
// json-patch (v4) does: a list of objects, decoded by encoding/json, whose
// error it returns (400). runnable is false when v5 refuses an operation
// that v4 accepts until it runs it: an unknown "op", an "add" without a
// value, a "path" that is not a string. kube-apiserver finds those when it
// applies the patch, and so answers 422, not 400; so do we. (v4 adds null
// for an "add" without a value; we refuse it.)
func decodeJSONPatch(patch []byte) (ops jsonpatch.Patch, runnable bool, err error) {
	if ops, err := jsonpatch.DecodePatch(patch); err == nil {
		return ops, true, nil
	}
	if err := json.Unmarshal(patch, &ops); err != nil {
		return nil, false, err
	}
	return ops, false, nil
}

// applyJSONPatch applies ops to doc.
func applyJSONPatch(doc []byte, ops jsonpatch.Patch) ([]byte, error) {
	return ops.ApplyWithOptions(doc, jsonPatchOptions())
}

package patch

import jsonpatch "github.com/evanphx/json-patch/v5"

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

// decodeJSONPatch parses a JSON patch document.
func decodeJSONPatch(patch []byte) (jsonpatch.Patch, error) {
	return jsonpatch.DecodePatch(patch)
}

// applyJSONPatch applies ops to doc.
func applyJSONPatch(doc []byte, ops jsonpatch.Patch) ([]byte, error) {
	return ops.ApplyWithOptions(doc, jsonPatchOptions())
}

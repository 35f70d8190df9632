// Package patch applies the three patch formats a PATCH request can carry
// to an object's JSON: JSON merge patch (RFC 7386, what kubectl label and
// annotate send), strategic merge patch (kubectl edit and kubectl patch;
// applied as a merge patch, since our objects have no schema) and JSON
// patch (RFC 6902, kubectl patch --type=json).
//
// Where it sits in the data flow: handlers/patch.go reads the body, asks
// Func for the function that applies it, and runs that function on the
// current object inside the store's guaranteed update, so a concurrent
// writer makes the patch retry on the new state.
//
//	PATCH ──► handlers/patch.go ──► patch.Func ──► store.GuaranteedUpdate(apply)
//
// Files: patch.go (the types we accept and Func), decode.go (what a patch
// must decode into before it is applied), merge.go, json.go; then
// server-side apply (application/apply-patch+yaml) and the field
// ownership kept in metadata.managedFields, as k8s.io/apiserver's
// fieldmanager and structured-merge-diff do them: applyyaml.go (reading
// the configuration, and the keys it repeats), apply.go (the steps of
// an apply), undeclared.go (the fields a schema does not declare),
// schema.go (how a kind's lists merge, from its OpenAPI schema), fieldset.go (sets of field paths, FieldsV1), tofieldset.go
// (the fields a configuration claims), applymerge.go (merging it in,
// removing what its manager gave up), compare.go (what a write changed),
// managers.go (the managedFields entries, conflicts) and update.go (the
// ownership writes that are not applies record).
//
// What it mirrors in Kubernetes: k8s.io/apiserver/pkg/endpoints/handlers/
// patch.go's patchers. Like them we apply JSON patch and JSON merge patch
// with github.com/evanphx/json-patch (kube-apiserver v1.37 uses its v4 as
// gopkg.in/evanphx/json-patch.v4; we use v5, whose copy limit is an option
// of each call rather than a package variable), under kube-apiserver's
// limits: 10,000 operations, 3 MiB of accumulated copies
// (JSONPatchMaxCopyBytes), and a result no larger than a request body.
// Strategic merge patch needs each kind's schema
// (k8s.io/apimachinery/pkg/util/strategicpatch); ours is a hand-written,
// schemaless approximation (merge.go).
package patch

package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// An embedded object (x-kubernetes-embedded-resource) must have an
// apiVersion and a kind, strings, as kube-apiserver 1.37.2 requires: a
// create without them is a 422 naming each (k8s.io/apiextensions-apiserver
// v0.37.2 pkg/apiserver/schema/objectmeta/validation.go,
// validateEmbeddedResource); one that is not a string fails the decoding
// before that, a 400 for a create and a 422 on field "patch" for a patch
// (objectmeta/algorithm.go, coerce; k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/rest.go, transformDecodeError, and patch.go,
// applyPatchToCurrentObject). The answers are worded from those sources.
func TestEmbeddedObjectsNeedAPIVersionAndKind(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvEmosCRD, "fv.example.com/v1")

	missing := ts.do(req{method: "POST", path: fvEmos, body: `{"apiVersion":"fv.example.com/v1","kind":"Emo","metadata":{"name":"e"},
 "spec":{"template":{"metadata":{"name":"s"}}}}`})
	missing.mustCode(t, http.StatusUnprocessableEntity)
	st := missing.status(t)
	assert.Equal(t, api.ReasonInvalid, st.Reason)
	assert.Equal(t, `Emo.fv.example.com "e" is invalid: [spec.template.apiVersion: Required value, spec.template.kind: Required value]`, st.Message)
	assert.Equal(t, []api.StatusCause{
		{Type: api.CauseFieldValueRequired, Field: "spec.template.apiVersion", Message: "Required value"},
		{Type: api.CauseFieldValueRequired, Field: "spec.template.kind", Message: "Required value"}}, st.Details.Causes)

	notString := ts.do(req{method: "POST", path: fvEmos, body: `{"apiVersion":"fv.example.com/v1","kind":"Emo","metadata":{"name":"e"},
 "spec":{"embeddedObj":{"apiVersion":5,"kind":"ConfigMap"}}}`})
	notString.mustCode(t, http.StatusBadRequest)
	st = notString.status(t)
	assert.Equal(t, api.ReasonBadRequest, st.Reason)
	assert.Equal(t, `Emo in version "v1" cannot be handled as a Emo: spec.embeddedObj.apiVersion: Invalid value: 5: must be a string`, st.Message)

	ts.do(req{method: "POST", path: fvEmos, body: `{"apiVersion":"fv.example.com/v1","kind":"Emo","metadata":{"name":"e"},
 "spec":{"template":{"apiVersion":"v1","kind":"Sub"}}}`}).mustCode(t, http.StatusCreated)
	patched := ts.do(req{method: "PATCH", path: fvEmos + "/e", body: `{"spec":{"template":{"kind":7}}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	patched.mustCode(t, http.StatusUnprocessableEntity)
	st = patched.status(t)
	assert.Equal(t, api.ReasonInvalid, st.Reason)
	require.Len(t, st.Details.Causes, 1)
	assert.Equal(t, "patch", st.Details.Causes[0].Field)
	assert.True(t, strings.HasSuffix(st.Details.Causes[0].Message, `: spec.template.kind: Invalid value: 7: must be a string`), st.Details.Causes[0].Message)
}

package apiserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// defaultsCRD is a cluster-scoped definition with two string fields, a
// and b, at the root of its schema, and no defaults yet.
const defaultsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"noxus.mygroup.example.com"},
"spec":{"group":"mygroup.example.com","scope":"Cluster","names":{"plural":"noxus","singular":"noxu","kind":"noxu","listKind":"noxuList"},
"versions":[{"name":"v1beta1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object",
 "properties":{"a":{"type":"string"},"b":{"type":"string"},
  "spec":{"type":"object","properties":{"replicas":{"type":"integer","default":1},
   "ports":{"type":"array","items":{"type":"object","properties":{"protocol":{"type":"string","default":"TCP"},"port":{"type":"integer"}}}}}}}}}}]}}`

const noxusV1beta1 = "/apis/mygroup.example.com/v1beta1/noxus"

// Defaults of a definition's schema are filled in when an object is
// written and when it is read from storage, as Kubernetes' e2e spec
// "custom resource defaulting for requests and from storage works" checks:
// an object stored before a default was declared reads with it, one
// created after is stored with it, and taking the default away again
// leaves what was stored. Nested defaults too: in an object, and in each
// item of an array.
func TestCustomResourceDefaults(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, defaultsCRD, "mygroup.example.com/v1beta1")
	object := func(name string) string {
		return `{"apiVersion":"mygroup.example.com/v1beta1","kind":"noxu","metadata":{"name":"` + name + `"}}`
	}
	first := ts.do(req{method: "POST", path: noxusV1beta1, body: object("cr-1")})
	first.mustCode(t, http.StatusCreated)
	assert.Nil(t, first.object(t).Get("a"))
	assert.Nil(t, first.object(t).Get("spec"), "no spec, so nothing in it to default")

	patchSchema := func(patch string) {
		t.Helper()
		ts.do(req{method: "PATCH", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/noxus.mygroup.example.com", body: patch,
			header: map[string]string{"Content-Type": "application/json-patch+json"}}).mustCode(t, http.StatusOK)
	}
	patchSchema(`[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/a/default","value":"A"}]`)
	// The definition's controller serves the new schema a moment later.
	require.Eventually(t, func() bool { return ts.get(noxusV1beta1+"/cr-1").object(t).Get("a") != nil },
		safetyTimeout, 10*time.Millisecond, "cr-1 is defaulted on read")
	assert.JSONEq(t, `"A"`, string(ts.get(noxusV1beta1+"/cr-1").object(t).Get("a")))
	stored, err := ts.Store().Get(t.Context(), "/registry/noxus/cr-1")
	require.NoError(t, err)
	assert.Nil(t, stored.Get("a"), "defaulted on read, not written")
	list := ts.get(noxusV1beta1).list(t)
	require.Len(t, list.Items, 1)
	assert.JSONEq(t, `"A"`, string(list.Items[0].Get("a")), "a list from the new watch cache is defaulted too")

	second := ts.do(req{method: "POST", path: noxusV1beta1,
		body: `{"apiVersion":"mygroup.example.com/v1beta1","kind":"noxu","metadata":{"name":"cr-2"},"spec":{"ports":[{"port":80},{"port":53,"protocol":"UDP"}]}}`})
	second.mustCode(t, http.StatusCreated)
	assert.JSONEq(t, `"A"`, string(second.object(t).Get("a")), "defaulted on create")
	assert.JSONEq(t, `{"replicas":1,"ports":[{"port":80,"protocol":"TCP"},{"port":53,"protocol":"UDP"}]}`, string(second.object(t).Get("spec")))

	patchSchema(`[{"op":"remove","path":"/spec/versions/0/schema/openAPIV3Schema/properties/a/default"},
		{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/b/default","value":"B"}]`)
	require.Eventually(t, func() bool { return ts.get(noxusV1beta1+"/cr-2").object(t).Get("b") != nil },
		safetyTimeout, 10*time.Millisecond, "cr-2 is defaulted on read for b")
	cr2 := ts.get(noxusV1beta1 + "/cr-2").object(t)
	assert.JSONEq(t, `"B"`, string(cr2.Get("b")))
	assert.JSONEq(t, `"A"`, string(cr2.Get("a")), "as stored")
	assert.Nil(t, ts.get(noxusV1beta1+"/cr-1").object(t).Get("a"), "no longer a default, never stored")
	assert.Less(t, revisionOf(first.object(t)), revisionOf(second.object(t)))
}

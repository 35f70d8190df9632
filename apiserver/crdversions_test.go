package apiserver

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// noxusCRD is apiextensions-apiserver's NewRandomNameMultipleVersionCustomResourceDefinition
// (test/integration/fixtures/resources.go), cluster-scoped, under a fixed
// name: served in v1beta1 and v1, stored in v1, status subresource in
// both, and a schema that keeps every field.
const noxusCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"noxus.mygroup.example.com"},
"spec":{"group":"mygroup.example.com","scope":"Cluster","names":{"plural":"noxus","singular":"noxu","kind":"noxu","listKind":"noxuList"},
"versions":[
 {"name":"v1beta1","served":true,"storage":false,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
 {"name":"v1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func noxu(version, name string) string {
	return `{"apiVersion":"mygroup.example.com/` + version + `","kind":"noxu","metadata":{"name":"` + name + `"},"alpha":"foo_123","beta":10,"spec":{}}`
}

// A definition served in two versions serves its objects in both, stored
// once, in the storage version: an object created in v1beta1 reads as v1
// in v1 and as v1beta1 in v1beta1. Each version has a watch cache of its
// own, as in kube-apiserver, and apiextensions-apiserver's e2e fixture
// (CreateNewV1CustomResourceDefinition, isWatchCachePrimed) waits for each
// to be primed: it creates and deletes an object through the first
// version, then watches every version from the create's resourceVersion,
// wanting the DELETED first.
func TestCustomResourceServedInTwoVersions(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, noxusCRD, "mygroup.example.com/v1beta1")
	for _, gv := range []string{"mygroup.example.com/v1", "mygroup.example.com/v1beta1"} {
		var doc struct {
			Resources []struct{ Name, StorageVersionHash string } `json:"resources"`
		}
		require.NoError(t, json.Unmarshal(ts.get("/apis/"+gv).mustCode(t, http.StatusOK), &doc))
		require.Len(t, doc.Resources, 2, "noxus and noxus/status in %s", gv)
		// The storage version's in both, as kube-apiserver's
		// StorageVersionHash: the first 8 bytes of the SHA-256 of
		// "group/version/kind", in base64.
		sum := sha256.Sum256([]byte("mygroup.example.com/v1/noxu"))
		assert.Equal(t, base64.StdEncoding.EncodeToString(sum[:8]), doc.Resources[0].StorageVersionHash, gv)
	}
	var group struct {
		Versions         []struct{ Version string } `json:"versions"`
		PreferredVersion struct{ Version string }   `json:"preferredVersion"`
	}
	require.NoError(t, json.Unmarshal(ts.get("/apis/mygroup.example.com").mustCode(t, http.StatusOK), &group))
	assert.Equal(t, "v1", group.PreferredVersion.Version, "GA before beta (sortGroupDiscoveryByKubeAwareVersion)")
	require.Len(t, group.Versions, 2)
	assert.Equal(t, "v1beta1", group.Versions[1].Version)

	v1beta1, v1 := "/apis/mygroup.example.com/v1beta1/noxus", "/apis/mygroup.example.com/v1/noxus"
	created := ts.do(req{method: "POST", path: v1beta1, body: noxu("v1beta1", "setup-instance")})
	created.mustCode(t, http.StatusCreated)
	assert.Equal(t, "mygroup.example.com/v1beta1", created.object(t).APIVersion)
	assert.Equal(t, "mygroup.example.com/v1", ts.get(v1+"/setup-instance").object(t).APIVersion)
	assert.JSONEq(t, "10", string(ts.get(v1+"/setup-instance").object(t).Get("beta")))
	stored, err := ts.Store().Get(t.Context(), "/registry/noxus/setup-instance")
	require.NoError(t, err)
	assert.Equal(t, "mygroup.example.com/v1", stored.APIVersion, "kept in the storage version")
	list := ts.get(v1beta1).list(t)
	require.Len(t, list.Items, 1)
	assert.Equal(t, "mygroup.example.com/v1beta1", list.APIVersion)
	ts.do(req{method: "DELETE", path: v1beta1 + "/setup-instance"}).mustCode(t, http.StatusOK)

	rv := created.object(t).Metadata.ResourceVersion
	for _, path := range []string{v1beta1, v1} {
		w := ts.watch(chunked, path+"?watch=true&resourceVersion="+rv)
		ev := w.next()
		assert.Equal(t, api.Deleted, ev.Type, path)
		assert.Equal(t, "setup-instance", ev.Object.Metadata.Name)
		w.close()
	}

	// Updating in one version is seen in the other; deleting the
	// definition ends the watches of both.
	ts.do(req{method: "POST", path: v1, body: noxu("v1", "n1")}).mustCode(t, http.StatusCreated)
	watches := []*watchConn{ts.watch(chunked, v1beta1+"?watch=true"), ts.watch(chunked, v1+"?watch=true")}
	for _, w := range watches {
		assert.Equal(t, api.Added, w.next().Type)
	}
	patched := ts.do(req{method: "PATCH", path: v1beta1 + "/n1", body: `{"gamma":"bar"}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	assert.Equal(t, "mygroup.example.com/v1beta1", patched.object(t).APIVersion)
	for i, w := range watches {
		ev := w.next()
		assert.Equal(t, api.Modified, ev.Type)
		assert.Equal(t, []string{"mygroup.example.com/v1beta1", "mygroup.example.com/v1"}[i], ev.Object.APIVersion)
		assert.JSONEq(t, `"bar"`, string(ev.Object.Get("gamma")))
	}
	ts.do(req{method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/noxus.mygroup.example.com"}).mustCode(t, http.StatusOK)
	for _, w := range watches {
		assert.Equal(t, api.Deleted, w.next().Type)
		require.NoError(t, w.ended())
	}
	ts.get(v1beta1).mustCode(t, http.StatusNotFound)
	ts.get(v1).mustCode(t, http.StatusNotFound)
}

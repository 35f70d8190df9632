package apiserver

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver/discovery"
)

// kubectlDiscoveryAccept is the Accept header kubectl sends to /api and
// /apis first (discovery-apis-aggregated-v2.json).
const kubectlDiscoveryAccept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"

type groupDiscoveryJSON struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Versions []struct {
		Version   string           `json:"version"`
		Resources []map[string]any `json:"resources"`
		Freshness string           `json:"freshness"`
	} `json:"versions"`
}

type groupDiscoveryListJSON struct {
	Kind       string               `json:"kind"`
	APIVersion string               `json:"apiVersion"`
	Items      []groupDiscoveryJSON `json:"items"`
}

func (ts *testServer) aggregated(t *testing.T, path string) (groupDiscoveryListJSON, response) {
	t.Helper()
	resp := ts.do(req{path: path, header: map[string]string{"Accept": kubectlDiscoveryAccept}})
	var list groupDiscoveryListJSON
	require.NoError(t, json.Unmarshal(resp.mustCode(t, http.StatusOK), &list))
	assert.Equal(t, discovery.AggregatedContentType, resp.header.Get("Content-Type"))
	return list, resp
}

// requireSameResources compares each of our resources with the real
// server's entry for it; the real one may list subresources we do not
// serve (pods/exec), ours must all be among its.
func requireSameResources(t *testing.T, want, got groupDiscoveryJSON) {
	t.Helper()
	require.Equal(t, len(want.Versions), len(got.Versions), "versions of %q", got.Metadata.Name)
	for i, v := range got.Versions {
		assert.Equal(t, want.Versions[i].Version, v.Version)
		assert.Equal(t, want.Versions[i].Freshness, v.Freshness)
		for _, r := range v.Resources {
			var real map[string]any
			for _, w := range want.Versions[i].Resources {
				if w["resource"] == r["resource"] {
					real = w
				}
			}
			require.NotNil(t, real, "%s is served by a real kube-apiserver", r["resource"])
			realSubs, _ := real["subresources"].([]any)
			subs, _ := r["subresources"].([]any)
			for _, s := range subs {
				if m, _ := s.(map[string]any); r["resource"] == "pods" && m["subresource"] == "resize" {
					continue // not in kube-apiserver 1.32's recording; 1.37.2 lists it (TestPodResize)
				}
				assert.Contains(t, realSubs, s, "a subresource of %s", r["resource"])
			}
			delete(real, "subresources")
			delete(r, "subresources")
			assert.Equal(t, real, r)
		}
	}
}

// /api and /apis answer kubectl's Accept header with the aggregated
// documents, entry for entry as the real server writes them, with an
// ETag that makes a second request cost a 304.
func TestAggregatedDiscovery(t *testing.T) {
	ts := startServer(t, Config{})
	core, _ := ts.aggregated(t, "/api?timeout=32s")
	var realCore groupDiscoveryListJSON
	require.NoError(t, json.Unmarshal(fixture(t, "v137-discovery-api-aggregated.json"), &realCore))
	assert.Equal(t, "APIGroupDiscoveryList", core.Kind)
	assert.Equal(t, "apidiscovery.k8s.io/v2", core.APIVersion)
	require.Len(t, core.Items, 1)
	requireSameResources(t, realCore.Items[0], core.Items[0])

	named, resp := ts.aggregated(t, "/apis?timeout=32s")
	var real groupDiscoveryListJSON
	require.NoError(t, json.Unmarshal(fixture(t, "v137-discovery-apis-aggregated-crontabs.json"), &real))
	for _, g := range named.Items {
		var want *groupDiscoveryJSON
		for i := range real.Items {
			if real.Items[i].Metadata.Name == g.Metadata.Name {
				want = &real.Items[i]
			}
		}
		require.NotNil(t, want, "group %q is served by a real kube-apiserver", g.Metadata.Name)
		requireSameResources(t, *want, g)
	}

	etag := resp.header.Get("Etag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "public", resp.header.Get("Cache-Control"))
	assert.Equal(t, "Accept", resp.header.Get("Vary"))
	again := ts.do(req{path: "/apis?timeout=32s", header: map[string]string{"Accept": kubectlDiscoveryAccept, "If-None-Match": etag}})
	assert.Equal(t, http.StatusNotModified, again.code)
	assert.Empty(t, again.body)
	assert.Equal(t, etag, again.header.Get("Etag"))

	legacy := ts.get("/apis")
	assert.Equal(t, "application/json", legacy.header.Get("Content-Type"), "plain JSON gets the legacy APIGroupList")
	requireSameShape(t, "discovery-apis.json", legacy.mustCode(t, http.StatusOK))
}

// A CustomResourceDefinition's resource appears in aggregated discovery
// as the real server lists it, after the built-in groups and with a new
// ETag, and disappears with it.
func TestAggregatedDiscoveryOfCustomResources(t *testing.T) {
	ts := startServer(t, Config{})
	_, before := ts.aggregated(t, "/apis")
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	after, resp := ts.aggregated(t, "/apis")
	assert.NotEqual(t, before.header.Get("Etag"), resp.header.Get("Etag"))
	var real groupDiscoveryListJSON
	require.NoError(t, json.Unmarshal(fixture(t, "v137-discovery-apis-aggregated-crontabs.json"), &real))
	assert.Equal(t, real.Items[len(real.Items)-1], after.Items[len(after.Items)-1], "appended after the built-in groups")

	ts.do(req{method: "DELETE", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com"}).mustCode(t, http.StatusOK)
	require.Eventually(t, func() bool {
		gone, _ := ts.aggregated(t, "/apis")
		return gone.Items[len(gone.Items)-1].Metadata.Name != "stable.example.com"
	}, safetyTimeout, 10*time.Millisecond, "the group leaves with its definition")
}

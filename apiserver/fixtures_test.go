package apiserver

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests replay the requests recorded from a real kube-apiserver
// v1.37 (testdata/fixtures, see its README) against our server and compare
// the answers field for field, ignoring only what differs between any two
// runs (uids, resourceVersions, timestamps, managedFields, which we do not
// keep).

// seedFixtures creates what the recordings start from: namespace
// "fixtures" with ConfigMaps alpha, beta (app=demo) and gamma (app=other).
func seedFixtures(t *testing.T, ts *testServer) {
	t.Helper()
	ts.createNamespace("fixtures")
	ts.createConfigMap("fixtures", "alpha", map[string]string{"app": "demo"}, map[string]string{"k": "v1"})
	ts.createConfigMap("fixtures", "beta", map[string]string{"app": "demo"}, map[string]string{"k": "b"})
	ts.createConfigMap("fixtures", "gamma", map[string]string{"app": "other"}, map[string]string{"k": "g"})
}

const cms = "/api/v1/namespaces/fixtures/configmaps"

func TestFixtureCreateAndGet(t *testing.T) {
	ts := startServer(t, Config{})
	ns := ts.do(req{method: "POST", path: "/api/v1/namespaces", body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"fixtures"}}`})
	requireSameJSON(t, "create-namespace-201.json", ns.mustCode(t, http.StatusCreated))

	ts.do(req{path: cms}).mustCode(t, http.StatusOK)
	requireSameJSON(t, "list-empty.json", ts.get(cms).body)

	alpha := ts.do(req{method: "POST", path: cms, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","labels":{"app":"demo"}},"data":{"k":"v1"}}`})
	requireSameJSON(t, "create-configmap-201.json", alpha.mustCode(t, http.StatusCreated))
	assert.True(t, bytes.HasPrefix(alpha.body, []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","namespace":"fixtures","uid":`)),
		"kind, apiVersion and metadata come first, in Kubernetes' order: %s", alpha.body)

	ts.createConfigMap("fixtures", "beta", map[string]string{"app": "demo"}, map[string]string{"k": "b"})
	ts.createConfigMap("fixtures", "gamma", map[string]string{"app": "other"}, map[string]string{"k": "g"})

	requireSameJSON(t, "get-configmap-200.json", ts.get(cms+"/alpha").mustCode(t, http.StatusOK))
	requireSameJSON(t, "list.json", ts.get(cms).mustCode(t, http.StatusOK))
	// resourceVersion=0 is served by the watch cache, which may not have
	// seen the last create yet: a list not older than the store's
	// revision waits until it has.
	latest := ts.get(cms).list(t).Metadata.ResourceVersion
	ts.get(cms+"?resourceVersion="+latest).mustCode(t, http.StatusOK)
	requireSameJSON(t, "list-rv0.json", ts.get(cms+"?resourceVersion=0").mustCode(t, http.StatusOK))
	requireSameJSON(t, "list-labelselector.json", ts.get(cms+"?labelSelector=app%3Ddemo").mustCode(t, http.StatusOK))

	gamma := ts.get(cms + "?fieldSelector=metadata.name%3Dgamma").list(t)
	require.Len(t, gamma.Items, 1)
	assert.Equal(t, "gamma", gamma.Items[0].Metadata.Name)
	requireSameShape(t, "list-fieldselector-name.json", ts.get(cms+"?fieldSelector=metadata.name%3Dgamma").body)
}

func TestFixturePrettyPrinting(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	curl := ts.do(req{path: cms + "/beta", header: map[string]string{"User-Agent": "curl/7.88.1", "Accept": "*/*"}})
	param := ts.get(cms + "/beta?pretty=true")
	for _, r := range []response{curl, param} {
		body := r.mustCode(t, http.StatusOK)
		assert.False(t, bytes.HasSuffix(body, []byte("\n")), "pretty output has no trailing newline")
		assert.True(t, bytes.HasPrefix(body, []byte("{\n  \"kind\": \"ConfigMap\",\n  \"apiVersion\": \"v1\",\n  \"metadata\": {\n    \"name\": \"beta\"")), "%s", body)
		requireSameShape(t, "get-configmap-pretty-curl-ua.json", body)
	}
	assert.Equal(t, curl.body, param.body)
	// ?pretty=false wins over a curl User-Agent.
	compact := ts.do(req{path: cms + "/beta?pretty=false", header: map[string]string{"User-Agent": "curl/7.88.1"}})
	assert.True(t, bytes.HasSuffix(compact.body, []byte("}\n")))
	// /version is always pretty.
	version := ts.get("/version").mustCode(t, http.StatusOK)
	requireSameShape(t, "discovery-version.json", version)
	assert.True(t, bytes.HasPrefix(version, []byte("{\n  \"major\": \"1\",\n")), "%s", version)
}

func TestFixturePaging(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	page1 := ts.get(cms + "?limit=2")
	requireSameJSON(t, "list-page1-limit2.json", page1.mustCode(t, http.StatusOK))
	l1 := page1.list(t)
	require.NotNil(t, l1.Metadata.RemainingItemCount)
	assert.Equal(t, int64(1), *l1.Metadata.RemainingItemCount)

	raw, err := base64.RawURLEncoding.DecodeString(l1.Metadata.Continue)
	require.NoError(t, err)
	var token map[string]any
	require.NoError(t, json.Unmarshal(raw, &token))
	assert.Equal(t, "meta.k8s.io/v1", token["v"])
	assert.Equal(t, "/beta\x00", token["start"])
	assert.Equal(t, l1.Metadata.ResourceVersion, jsonNumberString(token["rv"]))

	// A write between the pages does not show: page two is read at page
	// one's revision and keeps its resourceVersion.
	ts.createConfigMap("fixtures", "delta", nil, nil)
	page2 := ts.get(cms + "?limit=2&continue=" + l1.Metadata.Continue)
	requireSameJSON(t, "list-page2-continue.json", page2.mustCode(t, http.StatusOK))
	l2 := page2.list(t)
	assert.Equal(t, l1.Metadata.ResourceVersion, l2.Metadata.ResourceVersion)
	require.Len(t, l2.Items, 1)
	assert.Equal(t, "gamma", l2.Items[0].Metadata.Name)

	// resourceVersion=0 is served by the watch cache and ignores limit.
	// The cache may not have seen the last create yet ("any" revision):
	// a list not older than the store's revision waits until it has.
	latest := ts.get(cms).list(t).Metadata.ResourceVersion
	ts.get(cms+"?resourceVersion="+latest).mustCode(t, http.StatusOK)
	requireSameShape(t, "list-rv0-limit1.json", ts.get(cms+"?limit=1&resourceVersion=0").body)
	assert.Len(t, ts.get(cms+"?limit=1&resourceVersion=0").list(t).Items, 4)
}

func jsonNumberString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestFixtureWrites(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	alpha := ts.get(cms + "/alpha").object(t)

	put := ts.do(req{method: "PUT", path: cms + "/alpha",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","namespace":"fixtures","labels":{"app":"demo"},"resourceVersion":"` + alpha.Metadata.ResourceVersion + `"},"data":{"k":"v2"}}`})
	requireSameJSON(t, "update-put-200.json", put.mustCode(t, http.StatusOK))
	assert.Equal(t, alpha.Metadata.UID, put.object(t).Metadata.UID, "an update keeps the uid")

	stale := ts.do(req{method: "PUT", path: cms + "/alpha",
		body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","namespace":"fixtures","labels":{"app":"demo"},"resourceVersion":"` + alpha.Metadata.ResourceVersion + `"},"data":{"k":"v3"}}`})
	requireSameJSON(t, "error-409-conflict-stale-rv.json", stale.mustCode(t, http.StatusConflict))

	merge := ts.do(req{method: "PATCH", path: cms + "/alpha", body: `{"data":{"extra":"x"},"metadata":{"labels":{"tier":"web"}}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	requireSameJSON(t, "patch-merge-200.json", merge.mustCode(t, http.StatusOK))

	strategic := ts.do(req{method: "PATCH", path: cms + "/beta", body: `{"data":{"k":"b2"}}`,
		header: map[string]string{"Content-Type": "application/strategic-merge-patch+json"}})
	requireSameJSON(t, "patch-strategic-200.json", strategic.mustCode(t, http.StatusOK))

	jsonPatch := ts.do(req{method: "PATCH", path: cms + "/beta", body: `[{"op":"add","path":"/data/j","value":"jp"}]`,
		header: map[string]string{"Content-Type": "application/json-patch+json"}})
	requireSameJSON(t, "patch-jsonpatch-200.json", jsonPatch.mustCode(t, http.StatusOK))

	wrongType := ts.do(req{method: "PATCH", path: cms + "/beta", body: `{"data":{"k":"b3"}}`})
	requireSameJSON(t, "error-415-patch-wrong-content-type.json", wrongType.mustCode(t, http.StatusUnsupportedMediaType))

	ssa := ts.do(req{method: "PATCH", path: cms + "/beta?fieldManager=x", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"beta"}}`,
		header: map[string]string{"Content-Type": "application/apply-patch+yaml"}})
	ssa.mustCode(t, http.StatusOK) // server-side apply: apply_test.go

	precondition := ts.do(req{method: "DELETE", path: cms + "/alpha", body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`})
	requireSameJSON(t, "error-409-delete-precondition.json", precondition.mustCode(t, http.StatusConflict))

	beta := ts.get(cms + "/beta").object(t)
	del := ts.do(req{method: "DELETE", path: cms + "/beta"})
	requireSameJSON(t, "delete-200.json", del.mustCode(t, http.StatusOK))
	assert.Equal(t, beta.Metadata.UID, del.status(t).Details.UID)
	requireSameJSON(t, "error-404-delete-notfound.json", ts.do(req{method: "DELETE", path: cms + "/beta"}).mustCode(t, http.StatusNotFound))

	ts.createConfigMap("fixtures", "delta", map[string]string{"batch": "x"}, map[string]string{"k": "1"})
	ts.createConfigMap("fixtures", "epsilon", map[string]string{"batch": "x"}, map[string]string{"k": "2"})
	dc := ts.do(req{method: "DELETE", path: cms + "?labelSelector=batch%3Dx"})
	requireSameJSON(t, "deletecollection-200.json", dc.mustCode(t, http.StatusOK))
	assert.Len(t, ts.get(cms+"?labelSelector=batch%3Dx").list(t).Items, 0)
	assert.Len(t, ts.get(cms).list(t).Items, 2, "alpha and gamma are untouched")
}

func TestFixtureErrors(t *testing.T) {
	ts := startServer(t, Config{})
	requireSameJSON(t, "error-404-namespace-notfound.json", ts.get("/api/v1/namespaces/fixtures").mustCode(t, http.StatusNotFound))
	seedFixtures(t, ts)
	token := ts.get(cms + "?limit=2").list(t).Metadata.Continue

	cases := []struct {
		fixture string
		req     req
		code    int
	}{
		{"error-400-bad-labelselector.json", req{path: cms + "?labelSelector=app%3D%3D%3Ddemo"}, 400},
		{"error-400-continue-with-resourceversion.json", req{path: cms + "?limit=2&continue=" + token + "&resourceVersion=127"}, 400},
		{"error-400-malformed-json-body.json", req{method: "POST", path: cms, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x"`}, 400},
		{"error-404-get-notfound.json", req{path: cms + "/does-not-exist"}, 404},
		{"error-404-unknown-resource.json", req{path: "/api/v1/namespaces/fixtures/foos"}, 404},
		{"error-405-method-not-allowed.json", req{method: "PUT", path: cms, body: `{}`}, 405},
		{"error-409-alreadyexists.json", req{method: "POST", path: cms, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","labels":{"app":"demo"}},"data":{"k":"v1"}}`}, 409},
		{"error-422-invalid-name.json", req{method: "POST", path: cms, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"},"data":{"k":"v"}}`}, 422},
		{"error-422-rvmatch-without-rv.json", req{path: cms + "?resourceVersionMatch=NotOlderThan"}, 422},
		{"error-422-sendinitialevents-without-rvmatch.json", req{path: cms + "?watch=1&sendInitialEvents=true&timeoutSeconds=2"}, 422},
		// 1.37 answers a LIST's unparsable resourceVersion with 400, a
		// WATCH's still with 500.
		{"error-400-list-bad-rv.json", req{path: cms + "?resourceVersion=abc"}, 400},
		{"error-500-watch-bad-rv.json", req{path: cms + "?watch=1&resourceVersion=abc&timeoutSeconds=2"}, 500},
	}
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.fixture, ".json"), func(t *testing.T) {
			r := ts.do(c.req)
			requireSameJSON(t, c.fixture, r.mustCode(t, c.code))
			assert.Equal(t, "application/json", r.header.Get("Content-Type"))
			assert.NotEmpty(t, r.header.Get("Content-Length"), "errors are plain responses, not streams")
		})
	}
	for _, p := range []string{"/nosuchpath", "/apis/nosuch.example.com/v1/foos"} {
		r := ts.get(p)
		assert.Equal(t, fixture(t, "error-404-nonapi-path.txt"), r.mustCode(t, http.StatusNotFound))
		assert.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"))
	}
}

func TestFixtureTables(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	kubectlAccept := map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"}
	empty := ts.do(req{path: cms + "?limit=500", header: kubectlAccept})
	requireSameJSON(t, "table-list-empty.json", empty.mustCode(t, http.StatusOK))
	assert.Equal(t, "application/json", empty.header.Get("Content-Type"))

	ts.createConfigMap("fixtures", "alpha", map[string]string{"app": "demo"}, map[string]string{"k": "v1", "extra": "x"})
	ts.createConfigMap("fixtures", "beta", map[string]string{"app": "demo"}, map[string]string{"k": "b"})
	ts.createConfigMap("fixtures", "gamma", map[string]string{"app": "other"}, map[string]string{"k": "g"})
	list := ts.do(req{path: cms, header: map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"}})
	requireSameShape(t, "table-list.json", list.mustCode(t, http.StatusOK))
	var tbl tableJSON
	require.NoError(t, json.Unmarshal(list.body, &tbl))
	require.Len(t, tbl.Rows, 3)
	assert.Equal(t, []any{"alpha", float64(2), "0s"}, tbl.Rows[0].Cells)
	var want tableJSON
	require.NoError(t, json.Unmarshal(fixture(t, "table-list.json"), &want))
	assert.Equal(t, want.ColumnDefinitions, tbl.ColumnDefinitions, "column definitions are Kubernetes' own")

	requireSameShape(t, "table-get-kubectl.json", ts.do(req{path: cms + "/alpha", header: kubectlAccept}).mustCode(t, http.StatusOK))
	ns := ts.do(req{path: "/api/v1/namespaces?limit=500", header: kubectlAccept})
	requireSameShape(t, "table-list-namespaces-kubectl.json", ns.mustCode(t, http.StatusOK))
	require.NoError(t, json.Unmarshal(ns.body, &tbl))
	require.NoError(t, json.Unmarshal(fixture(t, "table-list-namespaces-kubectl.json"), &want))
	assert.Equal(t, want.ColumnDefinitions, tbl.ColumnDefinitions)
	assert.Equal(t, []any{"default", "Active"}, tbl.Rows[0].Cells[:2])
}

func TestFixtureDiscovery(t *testing.T) {
	ts := startServer(t, Config{})
	requireSameShape(t, "discovery-api.json", ts.get("/api").mustCode(t, http.StatusOK))
	requireSameShape(t, "discovery-apis-apps.json", ts.get("/apis/apps").mustCode(t, http.StatusOK))
	requireSameShape(t, "discovery-apis.json", ts.get("/apis").mustCode(t, http.StatusOK))

	for fixtureName, path := range map[string]string{"discovery-api-v1.json": "/api/v1", "discovery-apis-apps-v1.json": "/apis/apps/v1"} {
		var want, got apiResourceListJSON
		require.NoError(t, json.Unmarshal(fixture(t, fixtureName), &want))
		body := ts.get(path).mustCode(t, http.StatusOK)
		require.NoError(t, json.Unmarshal(body, &got))
		assert.Equal(t, want.Kind, got.Kind)
		assert.Equal(t, want.APIVersion, got.APIVersion, "%s: /api/v1 has no apiVersion, /apis/apps/v1 has v1", path)
		assert.Equal(t, want.GroupVersion, got.GroupVersion)
		require.NotEmpty(t, got.Resources)
		for _, r := range got.Resources {
			found := false
			for _, w := range want.Resources {
				if w["name"] == r["name"] {
					assert.Equal(t, w, r, "discovery entry of %s", r["name"])
					found = true
				}
			}
			if !found && r["name"] == "pods/resize" {
				// Not in kube-apiserver 1.32's recording; 1.37.2 lists it
				// (TestPodResize).
				continue
			}
			assert.True(t, found, "%s is served by a real kube-apiserver", r["name"])
		}
	}

	// kubectl's aggregated-discovery Accept header gets the aggregated
	// document (aggregated_discovery_test.go compares it entry by entry).
	agg := ts.do(req{path: "/api?timeout=32s", header: map[string]string{"Accept": kubectlDiscoveryAccept}})
	assert.Equal(t, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList", agg.header.Get("Content-Type"))
	agg.mustCode(t, http.StatusOK)
}

type apiResourceListJSON struct {
	Kind         string           `json:"kind"`
	APIVersion   string           `json:"apiVersion"`
	GroupVersion string           `json:"groupVersion"`
	Resources    []map[string]any `json:"resources"`
}

// tableJSON is the part of a meta.k8s.io Table the tests read.
type tableJSON struct {
	ColumnDefinitions []map[string]any `json:"columnDefinitions"`
	Rows              []struct {
		Cells []any `json:"cells"`
	} `json:"rows"`
}

package apiserver

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The resourceVersion semantics of LIST, one row of the table in list.go
// per case.
func TestListResourceVersionSemantics(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	created := ts.get(cms + "/alpha").object(t)
	ts.do(req{method: "PATCH", path: cms + "/alpha", body: `{"data":{"k":"v2"}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
	now := ts.revision()
	// The resourceVersion=0 cases read the cache as it is, which may not
	// have the patch yet (kube-apiserver 1.37.2 alike: k8s.io/apiserver
	// v0.37.2 pkg/storage/cacher/watch_cache.go, waitUntilFreshLocked
	// returns at once for 0). A list not older than now waits until it
	// has (ours answers the consistent list of the first case from the
	// store, so that one would not).
	ts.get(cms+"?resourceVersion="+strconv.FormatInt(now, 10)).mustCode(t, http.StatusOK)

	dataOf := func(l response, name string) string {
		for _, o := range l.list(t).Items {
			if o.Metadata.Name == name {
				var d map[string]string
				require.NoError(t, json.Unmarshal(o.Get("data"), &d))
				return d["k"]
			}
		}
		return ""
	}
	cases := []struct {
		name   string
		query  string
		wantRV int64
		alpha  string
		items  int
	}{
		{"unset: consistent read of the current state", "", now, "v2", 3},
		{"0: whatever the cache has", "?resourceVersion=0", now, "v2", 3},
		{"0 ignores limit", "?resourceVersion=0&limit=1", now, "v2", 3},
		{"N, NotOlderThan: the cache once it reached N", "?resourceVersion=" + created.Metadata.ResourceVersion + "&resourceVersionMatch=NotOlderThan", now, "v2", 3},
		{"N without match or limit: as NotOlderThan", "?resourceVersion=" + created.Metadata.ResourceVersion, now, "v2", 3},
		{"N, Exact: the state at N", "?resourceVersion=" + created.Metadata.ResourceVersion + "&resourceVersionMatch=Exact", revisionOf(created), "v1", 1},
		{"N with a limit: legacy exact", "?resourceVersion=" + created.Metadata.ResourceVersion + "&limit=10", revisionOf(created), "v1", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.get(cms + c.query)
			r.mustCode(t, http.StatusOK)
			l := r.list(t)
			assert.Equal(t, strconv.FormatInt(c.wantRV, 10), l.Metadata.ResourceVersion)
			assert.Len(t, l.Items, c.items)
			assert.Equal(t, c.alpha, dataOf(r, "alpha"))
			for _, it := range l.Items {
				assert.Empty(t, it.Kind, "list items carry no kind")
				assert.Empty(t, it.APIVersion, "list items carry no apiVersion")
			}
		})
	}
}

func TestListFromTheFutureTimesOut(t *testing.T) {
	ts := startServer(t, Config{})
	start := time.Now()
	r := ts.get("/api/v1/namespaces/default/configmaps?resourceVersion=1000000")
	requireSameJSON(t, "error-504-list-future-rv.json", r.mustCode(t, http.StatusGatewayTimeout))
	assert.Equal(t, "1", r.header.Get("Retry-After"))
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the cache waits for the revision before giving up")

	exact := ts.get("/api/v1/namespaces/default/configmaps?resourceVersion=1000000&resourceVersionMatch=Exact")
	exact.mustCode(t, http.StatusGatewayTimeout)
	assert.Contains(t, exact.status(t).Message, "Too large resource version: 1000000")
}

func TestListAfterCompaction(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	page1 := ts.get(cms + "?limit=2").list(t)
	rv := page1.Metadata.ResourceVersion
	ts.createConfigMap("fixtures", "delta", map[string]string{"app": "demo"}, map[string]string{"k": "d"})
	ts.Faults().CompactNow()

	requireSameJSON(t, "error-410-expired-list-rv-exact.json",
		ts.get(cms+"?resourceVersion="+rv+"&resourceVersionMatch=Exact").mustCode(t, http.StatusGone))

	expired := ts.get(cms + "?limit=2&continue=" + page1.Metadata.Continue)
	requireSameJSON(t, "error-410-expired-continue.json", expired.mustCode(t, http.StatusGone))
	fresh := expired.status(t).Metadata.Continue
	raw, err := base64.RawURLEncoding.DecodeString(fresh)
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":"meta.k8s.io/v1","rv":-1,"start":"beta\u0000"}`, string(raw),
		"the fresh token continues inconsistently from where the old one was")

	rest := ts.get(cms + "?limit=2&continue=" + fresh)
	requireSameShape(t, "list-continue-inconsistent-token.json", rest.mustCode(t, http.StatusOK))
	l := rest.list(t)
	require.Len(t, l.Items, 2)
	assert.Equal(t, "delta", l.Items[0].Metadata.Name, "an inconsistent continue sees later writes")
	assert.Equal(t, strconv.FormatInt(ts.revision(), 10), l.Metadata.ResourceVersion)
	assert.Equal(t, int64(2), ts.debugView().Gone, "both 410s are counted")
}

func TestListPagingAcrossNamespacesAndSelectors(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("a")
	ts.createNamespace("b")
	for _, ns := range []string{"a", "b"} {
		for _, n := range []string{"x", "y", "z"} {
			ts.createConfigMap(ns, n, map[string]string{"keep": strconv.FormatBool(n != "y")}, nil)
		}
	}
	var names []string
	path := "/api/v1/configmaps?limit=4"
	for {
		l := ts.get(path).list(t)
		for _, o := range l.Items {
			names = append(names, o.Key())
		}
		if l.Metadata.Continue == "" {
			assert.Nil(t, l.Metadata.RemainingItemCount)
			break
		}
		assert.Equal(t, int64(2), *l.Metadata.RemainingItemCount)
		raw, _ := base64.RawURLEncoding.DecodeString(l.Metadata.Continue)
		assert.Contains(t, string(raw), `"start":"/b/x\u0000"`, "an all-namespaces token starts at namespace/name")
		path = "/api/v1/configmaps?limit=4&continue=" + l.Metadata.Continue
	}
	assert.Equal(t, []string{"a/x", "a/y", "a/z", "b/x", "b/y", "b/z"}, names)

	sel := ts.get("/api/v1/configmaps?limit=2&labelSelector=keep%3Dtrue").list(t)
	assert.Len(t, sel.Items, 2)
	assert.Nil(t, sel.Metadata.RemainingItemCount, "no remainingItemCount with a selector")
	assert.NotEmpty(t, sel.Metadata.Continue)

	byNS := ts.get("/api/v1/configmaps?fieldSelector=metadata.namespace%3Db").list(t)
	assert.Len(t, byNS.Items, 3)
	// The lists above are the store's; resourceVersion=0 reads the cache
	// as it is, which may not have the last creates yet. A list not older
	// than the store's revision waits until it has.
	ts.get("/api/v1/configmaps?resourceVersion="+strconv.FormatInt(ts.revision(), 10)).mustCode(t, http.StatusOK)
	fromCache := ts.get("/api/v1/configmaps?resourceVersion=0&labelSelector=keep%21%3Dtrue").list(t)
	assert.Len(t, fromCache.Items, 2)
	nsList := ts.get("/api/v1/namespaces").list(t)
	assert.Equal(t, "NamespaceList", nsList.Kind)
	assert.Len(t, nsList.Items, 4, "a, b and the two a new server has")
	assert.Len(t, ts.get("/api/v1/namespaces?labelSelector=kubernetes.io%2Fmetadata.name%3Da").list(t).Items, 1)
}

func TestGenerateNameAndOtherResources(t *testing.T) {
	ts := startServer(t, Config{})
	r := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/configmaps", body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"generateName":"demo-"}}`})
	o := r.mustCode(t, http.StatusCreated)
	obj := r.object(t)
	assert.Regexp(t, `^demo-[bcdfghjklmnpqrstvwxz2456789]{5}$`, obj.Metadata.Name, "%s", o)
	assert.Equal(t, "demo-", obj.Metadata.GenerateName)

	dep := ts.do(req{method: "POST", path: "/apis/apps/v1/namespaces/default/deployments",
		body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1}}`})
	dep.mustCode(t, http.StatusCreated)
	assert.Equal(t, int64(1), dep.object(t).Metadata.Generation)
	patched := ts.do(req{method: "PATCH", path: "/apis/apps/v1/namespaces/default/deployments/web", body: `{"spec":{"replicas":3}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	assert.Equal(t, int64(2), patched.object(t).Metadata.Generation, "a spec change bumps generation")
	labelled := ts.do(req{method: "PATCH", path: "/apis/apps/v1/namespaces/default/deployments/web", body: `{"metadata":{"labels":{"a":"b"}}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	assert.Equal(t, int64(2), labelled.object(t).Metadata.Generation, "a metadata change does not")
	del := ts.do(req{method: "DELETE", path: "/apis/apps/v1/namespaces/default/deployments/web"})
	st := del.status(t)
	assert.Equal(t, "Success", st.Status)
	assert.Equal(t, "apps", st.Details.Group)
	assert.Equal(t, "deployments", st.Details.Kind)

	pod := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/pods", body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{}}`})
	pod.mustCode(t, http.StatusCreated)
	deletedPod := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/default/pods/p"})
	assert.Equal(t, "Pod", deletedPod.object(t).Kind, "pods answer a delete with the object")
	assert.Equal(t, pod.object(t).Metadata.UID, deletedPod.object(t).Metadata.UID)
	// Deleting a namespace: namespaces_test.go.
}

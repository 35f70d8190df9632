package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Answers that changed between kube-apiserver 1.32 and 1.37.2, the
// release this server follows and testdata/fixtures is recorded from.
// Each test sends the request and checks 1.37's answer in more detail than
// the recordings' comparisons do, citing the k8s.io/apiserver v0.37.2 (or
// apimachinery) source that produces it.

// /version carries the emulation and minimum compatibility versions
// (k8s.io/apimachinery/pkg/version/types.go Info), in Info's field order;
// docs/reference.md shows the real 1.37.2's answer.
func TestVersionIs137(t *testing.T) {
	ts := startServer(t, Config{})
	body := ts.get("/version").mustCode(t, http.StatusOK)
	dec := json.NewDecoder(bytes.NewReader(body))
	var keys []string
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	values := map[string]string{}
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		var v string
		require.NoError(t, dec.Decode(&v))
		keys = append(keys, k.(string))
		values[k.(string)] = v
	}
	assert.Equal(t, []string{"major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
		"minCompatibilityMinor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"}, keys)
	assert.Equal(t, "1", values["major"])
	assert.Equal(t, "37", values["minor"])
	assert.Equal(t, "1", values["emulationMajor"])
	assert.Equal(t, "37", values["emulationMinor"])
	assert.Equal(t, "1", values["minCompatibilityMajor"])
	assert.Equal(t, "36", values["minCompatibilityMinor"])
	assert.Equal(t, "v1.37.2+listwatch", values["gitVersion"])
}

// A LIST whose resourceVersion is not a number is 400 BadRequest in 1.37:
// cacher/delegator.go GetList calls storage.ValidateListOptions
// (storage/interfaces.go) first, which wraps the versioner's error in
// "invalid resource version: ". A GET or a WATCH with the same value still
// gets the versioner's error as a 500 (error-500-watch-bad-rv.json).
func TestListBadResourceVersionIs400(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	const parseErr = `resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`
	list := ts.get(cms + "?resourceVersion=abc")
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"invalid resource version: `+jsonEscaped(parseErr)+`","reason":"BadRequest","code":400}`+"\n",
		string(list.mustCode(t, http.StatusBadRequest)))

	for _, path := range []string{cms + "/alpha?resourceVersion=abc", cms + "?watch=1&resourceVersion=abc&timeoutSeconds=2"} {
		st := ts.get(path)
		st.mustCode(t, http.StatusInternalServerError)
		assert.Equal(t, parseErr, st.status(t).Message, path)
	}
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// A patch body that is not JSON at all is 400 "invalid JSON patch" in
// 1.37, whatever the patch type, before the object is even looked up
// (handlers/patch.go validateAndTranscodePatch, which keeps the audit log
// to valid JSON). A body that is JSON but not a patch is still decoded and
// refused as before ("error decoding patch: ..."), but only once the
// object is found: to one that does not exist, it is 404, as kube-apiserver
// 1.37.2 answered each of these bodies.
func TestPatchNotJSONIs400(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	const want = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid JSON patch","reason":"BadRequest","code":400}` + "\n"
	for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"} {
		// The object does not exist: the body is refused first.
		r := ts.do(req{method: http.MethodPatch, path: cms + "/nope", body: `{"data":`, header: map[string]string{"Content-Type": ct}})
		assert.Equal(t, want, string(r.mustCode(t, http.StatusBadRequest)), ct)
	}
	for _, ct := range []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"} {
		for _, body := range []string{`1e999999`, `[1]`, `{"op":"add"}`} {
			r := ts.do(req{method: http.MethodPatch, path: cms + "/nope", body: body, header: map[string]string{"Content-Type": ct}})
			r.mustCode(t, http.StatusNotFound)
		}
	}
	ts.createConfigMap("fixtures", "alpha", nil, map[string]string{"k": "v"})
	r := ts.do(req{method: http.MethodPatch, path: cms + "/alpha", body: `{"op":"add"}`,
		header: map[string]string{"Content-Type": "application/json-patch+json"}})
	assert.Equal(t, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp", r.status(t).Message,
		"valid JSON, not a JSON patch")
}

// Pods carry metadata.generation in 1.37: 1 on create (pod strategy's
// PrepareForCreate, k8s.io/kubernetes pkg/registry/core/pod/strategy.go),
// one more for every change of spec (updatePodGeneration), none for
// labels or status, and one more when a delete first sets
// deletionTimestamp (k8s.io/apiserver pkg/registry/rest/delete.go
// BeforeDelete).
func TestPodGeneration(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	const pods = "/api/v1/namespaces/fixtures/pods"
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	generation := func(r response, code int) int64 {
		t.Helper()
		r.mustCode(t, code)
		return r.object(t).Metadata.Generation
	}
	assert.Equal(t, int64(1), generation(ts.do(req{method: http.MethodPost, path: pods,
		body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox:1.36"}]}}`}), http.StatusCreated))
	assert.Equal(t, int64(1), generation(ts.do(req{method: http.MethodPatch, path: pods + "/p",
		body: `{"metadata":{"labels":{"app":"p"}}}`, header: merge}), http.StatusOK), "a label is not the spec")
	assert.Equal(t, int64(2), generation(ts.do(req{method: http.MethodPatch, path: pods + "/p",
		body: `{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}`, header: merge}), http.StatusOK), "a new image is")
	assert.Equal(t, int64(2), generation(ts.do(req{method: http.MethodPatch, path: pods + "/p/status",
		body: `{"status":{"phase":"Running"}}`, header: merge}), http.StatusOK), "status is not the spec")
	// The Pod is not scheduled, so it is deleted at once, after the write
	// that marks it: the answer is that last state.
	deleted := ts.do(req{method: http.MethodDelete, path: pods + "/p"})
	assert.Equal(t, int64(3), generation(deleted, http.StatusOK), "the delete marks it")
	assert.NotNil(t, deleted.object(t).Metadata.DeletionTimestamp)
	ts.get(pods+"/p").mustCode(t, http.StatusNotFound)
}

// A watch from no particular point (resourceVersion unset or "0") that says
// neither sendInitialEvents nor resourceVersionMatch is defaulted to a
// watch-list in 1.37 (metainternalversion SetListOptionsDefaults, the
// WatchList feature being on): with bookmarks it gets the
// initial-events-end BOOKMARK after the current state, as the real 1.37.2
// answers. A watch from a resourceVersion gets changes only, as ever.
func TestLegacyWatchIsAWatchList(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	alpha := ts.createConfigMap("fixtures", "alpha", nil, nil)
	// Neither watch waits for the cache to be fresh (in 1.37.2 only a
	// watch with sendInitialEvents=true does: Cacher.Watch,
	// waitUntilWatchCacheFreshAndForceAllEvents), so on a busy machine the
	// cache might not have alpha yet. A list not older than alpha's
	// revision waits until it has (ours serves a consistent list, with
	// resourceVersion unset, from the store, so that one would not).
	ts.get(cms+"?resourceVersion="+alpha.Metadata.ResourceVersion).mustCode(t, http.StatusOK)
	for _, tr := range []transport{chunked, websocketTransport} {
		for _, rv := range []string{"", "&resourceVersion=0"} {
			wc := ts.watch(tr, cms+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=600"+rv)
			added := wc.next()
			assert.Equal(t, api.Added, added.Type, "%s %q", tr, rv)
			assert.Equal(t, alpha.Metadata.UID, added.Object.Metadata.UID)
			end := wc.next()
			assert.Equal(t, api.Bookmark, end.Type, "%s %q", tr, rv)
			assert.Equal(t, "true", end.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
			wc.close()
		}
	}
	wc := ts.watch(chunked, cms+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=600&resourceVersion="+alpha.Metadata.ResourceVersion)
	defer wc.close()
	beta := ts.createConfigMap("fixtures", "beta", nil, nil)
	ev := wc.next()
	assert.Equal(t, api.Added, ev.Type)
	assert.Equal(t, beta.Metadata.UID, ev.Object.Metadata.UID, "no initial state, no end bookmark")
}

// pods/resize (kube-apiserver 1.37's in-place resize): listed in discovery
// like the real 1.37.2's /api/v1 (kind Pod; get, patch, update); a write
// through it changes only the containers' resources and resizePolicy, and
// the generation with them (podResizeStrategy, pkg/registry/core/pod/strategy.go).
func TestPodResize(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	var disco struct {
		Resources []struct {
			Name, Kind string
			Verbs      []string
		}
	}
	require.NoError(t, json.Unmarshal(ts.get("/api/v1").mustCode(t, http.StatusOK), &disco))
	found := false
	for _, r := range disco.Resources {
		if r.Name == "pods/resize" {
			found = true
			assert.Equal(t, "Pod", r.Kind)
			assert.Equal(t, []string{"get", "patch", "update"}, r.Verbs)
		}
	}
	assert.True(t, found, "discovery lists pods/resize")

	const pods = "/api/v1/namespaces/fixtures/pods"
	ts.do(req{method: http.MethodPost, path: pods,
		body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox:1.36","resources":{"limits":{"cpu":"100m"}}}]}}`}).mustCode(t, http.StatusCreated)
	assert.Equal(t, "p", ts.get(pods+"/p/resize").object(t).Metadata.Name)
	merge := map[string]string{"Content-Type": "application/merge-patch+json"}
	resized := ts.do(req{method: http.MethodPatch, path: pods + "/p/resize", header: merge,
		body: `{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"busybox:1.37","resources":{"limits":{"cpu":"200m"}}}]}}`}).object(t)
	assert.Equal(t, int64(2), resized.Metadata.Generation)
	assert.Empty(t, resized.Metadata.Labels, "a resize changes no labels")
	var spec struct {
		Containers []struct {
			Image     string
			Resources struct{ Limits map[string]string }
		}
	}
	require.NoError(t, json.Unmarshal(resized.Get("spec"), &spec))
	require.Len(t, spec.Containers, 1)
	assert.Equal(t, "busybox:1.36", spec.Containers[0].Image, "nor the image")
	assert.Equal(t, "200m", spec.Containers[0].Resources.Limits["cpu"])

	renamed := ts.do(req{method: http.MethodPatch, path: pods + "/p/resize", header: merge,
		body: `{"spec":{"containers":[{"name":"d","image":"busybox:1.36"}]}}`})
	assert.Equal(t, http.StatusUnprocessableEntity, renamed.code, "%s", renamed.body)
}

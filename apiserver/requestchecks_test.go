package apiserver

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The small refusals, each with the real server's code,
// reason and message.
func TestRequestChecksAsTheRealServer(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	jsonPatch := map[string]string{"Content-Type": "application/json-patch+json"}
	cases := []struct {
		name   string
		req    req
		code   int
		reason api.StatusReason
		msg    string
	}{
		{"name ..", req{path: cms + "/.."}, 400, api.ReasonBadRequest, `Name parameter invalid: "..": may not be '..'`},
		{"name .", req{method: "DELETE", path: cms + "/."}, 400, api.ReasonBadRequest, `Name parameter invalid: ".": may not be '.'`},
		{"name with %", req{path: cms + "/a%25b"}, 400, api.ReasonBadRequest, `Name parameter invalid: "a%b": may not contain '%'`},
		{"configmap field selector", req{path: cms + "?fieldSelector=spec.x%3D1"}, 400, api.ReasonBadRequest, `"spec.x" is not a known field selector: only "metadata.name", "metadata.namespace"`},
		{"configmap field selector on a watch", req{path: cms + "?watch=1&fieldSelector=data.k%3Dv"}, 400, api.ReasonBadRequest, `"data.k" is not a known field selector`},
		{"pod field selector", req{path: "/api/v1/namespaces/fixtures/pods?fieldSelector=spec.foo%3D1"}, 400, api.ReasonBadRequest, "field label not supported: spec.foo"},
		{"json patch test fails", req{method: "PATCH", path: cms + "/alpha", body: `[{"op":"test","path":"/data/k","value":"nope"}]`, header: jsonPatch}, 422, api.ReasonInvalid, "the server rejected our request due to an error in our request"},
		{"json patch removes nothing", req{method: "PATCH", path: cms + "/alpha", body: `[{"op":"remove","path":"the server rejected our request due to an error in our request"}]`, header: jsonPatch}, 422, api.ReasonInvalid, "the server rejected our request due to an error in our request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := ts.do(tc.req)
			resp.mustCode(t, tc.code)
			st := resp.status(t)
			assert.Equal(t, tc.reason, st.Reason)
			assert.Contains(t, st.Message, tc.msg)
		})
	}
}

// A GET at a resourceVersion the server has not reached waits like a
// list, then 504 (error-504-list-future-rv.json).
func TestGetAtFutureResourceVersionTimesOut(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	now := ts.revision()
	ts.get(cms+"/alpha?resourceVersion="+strconv.FormatInt(now, 10)).mustCode(t, http.StatusOK)
	resp := ts.get(cms + "/alpha?resourceVersion=1000000")
	resp.mustCode(t, http.StatusGatewayTimeout)
	st := resp.status(t)
	assert.Equal(t, api.ReasonTimeout, st.Reason)
	assert.Equal(t, "Timeout: Too large resource version: 1000000, current: "+strconv.FormatInt(now, 10), st.Message)
	assert.Equal(t, "1", resp.header.Get("Retry-After"))
}

// Pods can be selected by their own fields, in a list and in a watch.
func TestPodFieldSelectors(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.do(req{method: "POST", path: pods2, body: podJSON("on-a", "node-a")}).mustCode(t, http.StatusCreated)
	onB := ts.do(req{method: "POST", path: pods2, body: podJSON("on-b", "node-b")})
	onB.mustCode(t, http.StatusCreated)
	l := ts.get(pods2 + "?fieldSelector=spec.nodeName%3Dnode-a").list(t)
	require.Len(t, l.Items, 1)
	assert.Equal(t, "on-a", l.Items[0].Metadata.Name)
	// From the watch cache, at least as new as on-b's creation: with
	// resourceVersion=0 ("any") the cache may answer before it has seen
	// on-b, as kube-apiserver's may, and a busy machine made it do so.
	l = ts.get(pods2 + "?fieldSelector=spec.nodeName!%3Dnode-a,metadata.name%3Don-b&resourceVersion=" + onB.object(t).Metadata.ResourceVersion).list(t)
	require.Len(t, l.Items, 1)
	assert.Equal(t, "on-b", l.Items[0].Metadata.Name)

	w := ts.watch(chunked, pods2+"?watch=1&fieldSelector=spec.nodeName%3Dnode-b&resourceVersion="+strconv.FormatInt(ts.revision(), 10))
	defer w.close()
	ts.do(req{method: "POST", path: pods2, body: podJSON("on-a2", "node-a")}).mustCode(t, http.StatusCreated)
	ts.do(req{method: "POST", path: pods2, body: podJSON("on-b2", "node-b")}).mustCode(t, http.StatusCreated)
	ev := w.next()
	assert.Equal(t, api.Added, ev.Type)
	assert.Equal(t, "on-b2", ev.Object.Metadata.Name)
}

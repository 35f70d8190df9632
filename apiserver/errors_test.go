package apiserver

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Every request Kubernetes would reject gets a Status naming the problem,
// with Kubernetes' code and reason. Cases the recordings cover are in
// fixtures_test.go; these are the rest.
func TestRejectedRequests(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	alpha := ts.get(cms + "/alpha").object(t)
	hdr := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	merge := hdr("Content-Type", "application/merge-patch+json")
	jsonPatch := hdr("Content-Type", "application/json-patch+json")
	traversal := base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"/../../secrets/x\u0000"}`))

	cases := []struct {
		name   string
		req    req
		code   int
		reason api.StatusReason
		msg    string // a substring of the message
	}{
		// create
		{"create in all namespaces", req{method: "POST", path: "/api/v1/configmaps", body: configMapJSON("x", nil, nil)}, 405, api.ReasonMethodNotAllowed, "does not allow this method"},
		{"create in missing namespace", req{method: "POST", path: "/api/v1/namespaces/nope/configmaps", body: configMapJSON("x", nil, nil)}, 404, api.ReasonNotFound, `namespaces "nope" not found`},
		{"namespace mismatch", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","namespace":"default"}}`}, 400, api.ReasonBadRequest, "does not match the namespace sent on the request"},
		{"wrong kind for the path", req{method: "POST", path: cms, body: `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"x"}}`}, 400, api.ReasonBadRequest, `Secret in version "v1" cannot be handled as a ConfigMap`},
		{"wrong apiVersion for the path", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"apps/v1","metadata":{"name":"x"}}`}, 400, api.ReasonBadRequest, `no kind "ConfigMap" is registered for version "apps/v1"`},
		{"protobuf body of another kind", req{method: "POST", path: "/apis/apps/v1/namespaces/fixtures/deployments", body: "k8s\x00\x0a\x11\x0a\x02v1\x12\x0bServiceList", header: hdr("Content-Type", "application/vnd.kubernetes.protobuf")}, 400, api.ReasonBadRequest, `ServiceList in version "v1" cannot be handled as a Deployment`},
		{"malformed protobuf body", req{method: "POST", path: cms, body: "k8s\x00\x0a", header: hdr("Content-Type", "application/vnd.kubernetes.protobuf")}, 400, api.ReasonBadRequest, "cannot parse invalid wire-format data"},
		{"cbor body", req{method: "POST", path: cms, body: "\xa1", header: hdr("Content-Type", "application/cbor")}, 415, api.ReasonUnsupportedMediaType, "accepted media types include: application/json"},
		{"resourceVersion on create", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","resourceVersion":"3"}}`}, 500, api.ReasonInternalError, "resourceVersion should not be set on objects to be created"},
		{"no name", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}`}, 422, api.ReasonInvalid, `ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`},
		{"bad generateName", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"generateName":"Bad_"}}`}, 422, api.ReasonInvalid, "metadata.generateName: Invalid value"},
		{"bad label value", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"app":"not ok!"}}}`}, 422, api.ReasonInvalid, `metadata.labels: Invalid value: "not ok!"`},
		{"bad label key", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"-a":"b"}}}`}, 422, api.ReasonInvalid, `metadata.labels: Invalid value: "-a"`},
		{"namespace name with dots", req{method: "POST", path: "/api/v1/namespaces", body: `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"a.b"}}`}, 422, api.ReasonInvalid, "must not contain dots"},
		{"service name must be DNS-1035", req{method: "POST", path: "/api/v1/namespaces/fixtures/services", body: `{"kind":"Service","apiVersion":"v1","metadata":{"name":"1svc"}}`}, 422, api.ReasonInvalid, "DNS-1035 label"},
		{"metadata not an object", req{method: "POST", path: cms, body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":5}`}, 400, api.ReasonBadRequest, "cannot be handled as a ConfigMap"},
		{"body not an object", req{method: "POST", path: cms, body: `[1,2]`}, 400, api.ReasonBadRequest, "the object provided is unrecognized"},
		{"dryRun", req{method: "POST", path: cms + "?dryRun=All", body: configMapJSON("x", nil, nil)}, 400, api.ReasonBadRequest, "dryRun"},
		// update
		{"update of a collection", req{method: "PUT", path: "/api/v1/configmaps", body: `{}`}, 405, api.ReasonMethodNotAllowed, ""},
		{"update name mismatch", req{method: "PUT", path: cms + "/alpha", body: configMapJSON("beta", nil, nil)}, 400, api.ReasonBadRequest, "the name of the object (beta) does not match the name on the URL (alpha)"},
		{"update namespace mismatch", req{method: "PUT", path: cms + "/alpha", body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","namespace":"default"}}`}, 400, api.ReasonBadRequest, "the namespace of the object (default) does not match the namespace on the request (fixtures)"},
		{"update of a missing object", req{method: "PUT", path: cms + "/nope", body: configMapJSON("nope", nil, nil)}, 404, api.ReasonNotFound, `configmaps "nope" not found`},
		{"update with a bad resourceVersion", req{method: "PUT", path: cms + "/alpha", body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","resourceVersion":"x1"}}`}, 400, api.ReasonBadRequest, "metadata.resourceVersion"},
		{"update with another uid", req{method: "PUT", path: cms + "/alpha", body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","uid":"other"}}`}, 409, api.ReasonConflict, "Precondition failed: UID in precondition: other"},
		// patch
		{"patch of a missing object", req{method: "PATCH", path: cms + "/nope", body: `{}`, header: merge}, 404, api.ReasonNotFound, `configmaps "nope" not found`},
		{"patch of a collection", req{method: "PATCH", path: cms, body: `{}`, header: merge}, 405, api.ReasonMethodNotAllowed, ""},
		{"malformed merge patch", req{method: "PATCH", path: cms + "/alpha", body: `{"data":`, header: merge}, 400, api.ReasonBadRequest, "invalid JSON patch"},
		{"merge patch not an object", req{method: "PATCH", path: cms + "/alpha", body: `[]`, header: merge}, 400, api.ReasonBadRequest, "error decoding patch"},
		{"patch renames", req{method: "PATCH", path: cms + "/alpha", body: `{"metadata":{"name":"other"}}`, header: merge}, 400, api.ReasonBadRequest, "does not match the name on the URL"},
		{"patch with a stale resourceVersion", req{method: "PATCH", path: cms + "/alpha", body: `{"metadata":{"resourceVersion":"1"}}`, header: merge}, 409, api.ReasonConflict, api.OptimisticLockErrorMsg},
		{"patch changes kind", req{method: "PATCH", path: cms + "/alpha", body: `{"kind":"Secret"}`, header: merge}, 400, api.ReasonBadRequest, "cannot change kind"},
		{"patch makes a bad label", req{method: "PATCH", path: cms + "/alpha", body: `{"metadata":{"labels":{"a":"b c"}}}`, header: merge}, 422, api.ReasonInvalid, "metadata.labels"},
		{"json patch test fails", req{method: "PATCH", path: cms + "/alpha", body: `[{"op":"test","path":"/data/k","value":"nope"}]`, header: jsonPatch}, 422, api.ReasonInvalid, "the server rejected our request due to an error in our request"},
		{"json patch on a missing path", req{method: "PATCH", path: cms + "/alpha", body: `[{"op":"replace","path":"/nope/x","value":1}]`, header: jsonPatch}, 422, api.ReasonInvalid, "the server rejected our request due to an error in our request"},
		{"json patch malformed", req{method: "PATCH", path: cms + "/alpha", body: `{"op":"add"}`, header: jsonPatch}, 400, api.ReasonBadRequest, "error decoding patch"},
		{"json patch breaks metadata", req{method: "PATCH", path: cms + "/alpha", body: `[{"op":"replace","path":"/metadata","value":5}]`, header: jsonPatch}, 422, api.ReasonInvalid, "patch: Invalid value"},
		// delete
		{"delete with a malformed body", req{method: "DELETE", path: cms + "/alpha", body: `{"preconditions":`}, 400, api.ReasonBadRequest, "DeleteOptions"},
		{"delete with a bad propagationPolicy", req{method: "DELETE", path: cms + "/alpha", body: `{"propagationPolicy":"Sideways"}`}, 422, api.ReasonInvalid, `Unsupported value: "Sideways"`},
		{"delete with a stale uid", req{method: "DELETE", path: cms + "/alpha", body: `{"preconditions":{"uid":"x"}}`}, 409, api.ReasonConflict, "the UID in the precondition (x) does not match the UID in record (" + alpha.Metadata.UID + ")"},
		{"delete of the default namespace", req{method: "DELETE", path: "/api/v1/namespaces/default"}, 403, api.ReasonForbidden, `namespaces "default" is forbidden: this namespace may not be deleted`},
		{"delete of kube-public", req{method: "DELETE", path: "/api/v1/namespaces/kube-public"}, 403, api.ReasonForbidden, `namespaces "kube-public" is forbidden: this namespace may not be deleted`},
		{"deletecollection of namespaces", req{method: "DELETE", path: "/api/v1/namespaces"}, 405, api.ReasonMethodNotAllowed, ""},
		{"deletecollection in all namespaces", req{method: "DELETE", path: "/api/v1/configmaps"}, 405, api.ReasonMethodNotAllowed, ""},
		// list and watch queries
		{"limit not a number", req{path: cms + "?limit=abc"}, 400, api.ReasonBadRequest, `strconv.ParseInt: parsing "abc": invalid syntax`},
		{"timeoutSeconds not a number", req{path: cms + "?watch=1&timeoutSeconds=x"}, 400, api.ReasonBadRequest, "strconv.ParseInt"},
		{"negative timeoutSeconds", req{path: cms + "?watch=1&timeoutSeconds=-1"}, 400, api.ReasonBadRequest, "timeoutSeconds"},
		{"unknown resourceVersionMatch", req{path: cms + "?resourceVersion=1&resourceVersionMatch=Foo"}, 422, api.ReasonInvalid, `resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""`},
		{"Exact at 0", req{path: cms + "?resourceVersion=0&resourceVersionMatch=Exact"}, 422, api.ReasonInvalid, `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`},
		{"resourceVersionMatch with continue", req{path: cms + "?resourceVersion=1&resourceVersionMatch=Exact&continue=abc"}, 422, api.ReasonInvalid, "resourceVersionMatch is forbidden when continue is provided"},
		{"sendInitialEvents on a list", req{path: cms + "?sendInitialEvents=true"}, 422, api.ReasonInvalid, "sendInitialEvents is forbidden for list"},
		{"resourceVersionMatch on a watch", req{path: cms + "?watch=1&resourceVersion=1&resourceVersionMatch=NotOlderThan"}, 422, api.ReasonInvalid, "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{"Exact on a watch", req{path: cms + "?watch=1&sendInitialEvents=true&resourceVersionMatch=Exact"}, 422, api.ReasonInvalid, `Unsupported value: "Exact": supported values: "NotOlderThan"`},
		// A LIST's unparsable resourceVersion is 400 in 1.37
		// (storage.ValidateListOptions); a GET's still 500.
		{"resourceVersion out of range", req{path: cms + "?resourceVersion=99999999999999999999"}, 400, api.ReasonBadRequest, "invalid resource version: resourceVersion: Invalid value: \"99999999999999999999\": strconv.ParseUint: parsing \"99999999999999999999\": value out of range"},
		{"negative resourceVersion", req{path: cms + "?resourceVersion=-5"}, 400, api.ReasonBadRequest, `invalid resource version: resourceVersion: Invalid value: "-5"`},
		{"negative resourceVersion on a GET", req{path: cms + "/alpha?resourceVersion=-5"}, 500, "", `resourceVersion: Invalid value: "-5"`},
		{"bad resourceVersion on get", req{path: cms + "/alpha?resourceVersion=x"}, 500, "", `Invalid value: "x"`},
		{"garbage continue token", req{path: cms + "?continue=%25%25%25"}, 400, api.ReasonBadRequest, "invalid continue token: continue key is not valid"},
		{"continue token climbing out", req{path: cms + "?continue=" + traversal}, 400, api.ReasonBadRequest, "invalid continue token"},
		{"bad field selector", req{path: cms + "?fieldSelector=metadata.name"}, 400, api.ReasonBadRequest, ""},
		{"field selector against the watched name", req{path: "/api/v1/watch/namespaces/fixtures/configmaps/alpha?fieldSelector=metadata.name%3Dbeta"}, 400, api.ReasonBadRequest, "fieldSelector metadata.name doesn't match requested name"},
		// routing and content types
		{"yaml only", req{path: cms, header: hdr("Accept", "application/yaml")}, 406, api.ReasonNotAcceptable, "application/json, application/vnd.kubernetes.protobuf"},
		{"subresource", req{path: cms + "/alpha/status"}, 404, api.ReasonNotFound, "the server could not find the requested resource"},
		{"namespaced resource without namespace", req{path: "/api/v1/configmaps/alpha"}, 404, api.ReasonNotFound, ""},
		{"cluster-scoped resource in a namespace", req{path: "/api/v1/namespaces/fixtures/namespaces"}, 404, api.ReasonNotFound, ""},
		{"empty path segment", req{path: "/api/v1/namespaces//configmaps"}, 404, api.ReasonNotFound, ""},
		{"write through the watch path", req{method: "POST", path: "/api/v1/watch/namespaces/fixtures/configmaps", body: configMapJSON("x", nil, nil)}, 405, api.ReasonMethodNotAllowed, ""},
		{"HEAD", req{method: "HEAD", path: cms}, 405, "", ""},
		{"OPTIONS", req{method: "OPTIONS", path: cms}, 405, api.ReasonMethodNotAllowed, ""},
		{"POST to discovery", req{method: "POST", path: "/api/v1", body: "{}"}, 405, api.ReasonMethodNotAllowed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ts.do(c.req)
			require.Equal(t, c.code, r.code, "body: %s", r.body)
			if c.req.method == "HEAD" {
				return
			}
			st := r.status(t)
			assert.Equal(t, "Status", st.Kind)
			assert.Equal(t, api.StatusFailure, st.Status)
			assert.Equal(t, int32(c.code), st.Code)
			assert.Equal(t, c.reason, st.Reason)
			assert.Contains(t, st.Message, c.msg)
			assert.True(t, bytes.HasSuffix(r.body, []byte("}\n")))
		})
	}
	// Nothing above changed alpha.
	assert.Equal(t, alpha.Metadata.ResourceVersion, ts.get(cms+"/alpha").object(t).Metadata.ResourceVersion)
}

// No input panics the server or wedges it: each of these gets a 4xx
// Status (or succeeds), and the server answers normally afterwards.
func TestHostileInputs(t *testing.T) {
	ts := startServer(t, Config{})
	seedFixtures(t, ts)
	deep := strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000)
	deepArray := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	bodies := []string{
		"", "null", "true", "0", `"x"`, "[]", "{", "}", "{}", `{"kind":5}`, `{"metadata":null}`,
		`{"metadata":{"name":5}}`, `{"metadata":{"labels":{"a":5}}}`, `{"metadata":{"labels":[]}}`,
		`{"metadata":{"creationTimestamp":"yesterday"}}`, `{"metadata":{"name":"x"},"data":{"k":1e999999}}`,
		`{"metadata":{"name":"x"},"data":"\ud800"}`, "\xff\xfe\xfd", `{"metadata":{"name":"x"}}garbage`,
		`{"metadata":{"name":"` + strings.Repeat("a", 300) + `"}}`, deep, deepArray,
		`{"metadata":{"name":"x\u0000y"}}`, `{"metadata":{"name":"../../etc"}}`, `{"metadata":{"generateName":"` + strings.Repeat("g", 100) + `"}}`,
	}
	paths := []string{cms, cms + "/alpha"}
	methods := map[string][]string{cms: {"POST"}, cms + "/alpha": {"PUT", "PATCH", "DELETE"}}
	patchTypes := []string{"application/merge-patch+json", "application/strategic-merge-patch+json", "application/json-patch+json"}
	for _, p := range paths {
		for _, m := range methods[p] {
			for i, b := range bodies {
				types := []string{"application/json"}
				if m == "PATCH" {
					types = patchTypes
				}
				for _, ct := range types {
					r := ts.do(req{method: m, path: p, body: b, header: map[string]string{"Content-Type": ct}})
					if m == "DELETE" && r.code == http.StatusOK {
						// An empty or trivial DeleteOptions deletes: put alpha back.
						ts.createConfigMap("fixtures", "alpha", map[string]string{"app": "demo"}, nil)
						continue
					}
					if r.code < 300 {
						continue
					}
					require.True(t, r.code >= 400 && r.code < 500 || r.code == 500 && strings.Contains(string(r.body), "resourceVersion"),
						"%s %s body #%d (%s): %d %s", m, p, i, ct, r.code, r.body)
					st := r.status(t)
					require.Equal(t, "Status", st.Kind, "%s %s body #%d", m, p, i)
				}
			}
		}
	}
	hostilePaths := []string{
		"/api/v1/namespaces/%2F/configmaps", "/api/v1/namespaces/fixtures/configmaps/..%2F..", "/api/v1/" + strings.Repeat("x/", 2000),
		"/apis/apps/v1/namespaces/fixtures/deployments/x/y/z", "/api/v1/watch", "/apis//v1", "/api/v1/namespaces/fixtures/configmaps?limit=-5",
		"/api/v1/namespaces/fixtures/configmaps?labelSelector=" + strings.Repeat("a", 10000) + "%3D%3D", "/api/v1/namespaces/fixtures/configmaps?fieldSelector=%00%01",
		"/api/v1/namespaces/fixtures/configmaps?continue=" + strings.Repeat("A", 5000),
	}
	for _, p := range hostilePaths {
		r := ts.get(p)
		assert.Less(t, r.code, 500, "%s: %s", p, r.body)
	}
	ts.get("/version").mustCode(t, http.StatusOK)
	ts.get(cms+"/alpha").mustCode(t, http.StatusOK)
}

package apiserver

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/patch"
)

// Hostile inputs answered as kube-apiserver 1.37 answers them: the code,
// the reason, the message, and the object left as it was.

// rejectedMessage is NewGenericServerResponse(422)'s fixed message, all a
// client hears of a JSON patch that does not apply.
const rejectedMessage = "the server rejected our request due to an error in our request"

func TestHostilePatchesGetTheRealServersAnswer(t *testing.T) {
	ts := startServer(t, Config{})
	before := ts.createConfigMap("default", "target", nil, map[string]string{"k": "v"})
	path := "/api/v1/namespaces/default/configmaps/target"
	const float = "json: cannot unmarshal number 1e999999 into Go value of type float64"
	cases := []struct {
		name, patchType, body string
		code                  int
		reason                api.StatusReason
		message               string
	}{
		{"a huge number in data", patch.MergePatchType, `{"data":{"k":1e999999}}`, 400, api.ReasonBadRequest, "error decoding patch: " + float},
		{"a huge number in an unknown field", patch.MergePatchType, `{"x":1e999999}`, 400, api.ReasonBadRequest, "error decoding patch: " + float},
		{"a huge generation", patch.MergePatchType, `{"metadata":{"generation":1e999999}}`, 400, api.ReasonBadRequest, "error decoding patch: " + float},
		{"a huge number, strategic", patch.StrategicPatchType, `{"x":1e999999}`, 400, api.ReasonBadRequest, float},
		{"a huge number in a JSON patch", patch.JSONPatchType, `[{"op":"add","path":"/x","value":1e999999}]`, 400, api.ReasonBadRequest,
			"error decoding patch: json: cannot unmarshal number 1e999999 into Go struct field jsonPatchOp.value of type float64"},
		{"op bogus", patch.JSONPatchType, `[{"op":"bogus","path":"/x"}]`, 422, api.ReasonInvalid, rejectedMessage},
		{"remove of a missing path", patch.JSONPatchType, `[{"op":"remove","path":"/data/nope"}]`, 422, api.ReasonInvalid, rejectedMessage},
		{"a failed test", patch.JSONPatchType, `[{"op":"test","path":"/data/k","value":"w"}]`, 422, api.ReasonInvalid, rejectedMessage},
		{"add under a missing parent", patch.JSONPatchType, `[{"op":"add","path":"/a/b/c","value":"v"}]`, 422, api.ReasonInvalid, rejectedMessage},
		{"move from a missing path", patch.JSONPatchType, `[{"op":"move","from":"/nope","path":"/x"}]`, 422, api.ReasonInvalid, rejectedMessage},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := ts.do(req{method: "PATCH", path: path, body: c.body, header: map[string]string{"Content-Type": c.patchType}})
			resp.mustCode(t, c.code)
			st := resp.status(t)
			assert.Equal(t, c.reason, st.Reason)
			assert.Equal(t, c.message, st.Message)
			if c.code == 422 {
				// kube-apiserver's body, details empty and no causes.
				assert.JSONEq(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
					`"message":"`+rejectedMessage+`","reason":"Invalid","details":{},"code":422}`, string(resp.body))
			}
		})
	}
	after := ts.get(path).object(t)
	assert.Equal(t, before.Metadata.ResourceVersion, after.Metadata.ResourceVersion, "the object is unchanged")
	assert.JSONEq(t, `{"k":"v"}`, string(after.Get("data")))
	require.Nil(t, after.Get("x"))
}

// configKeyMsg is IsConfigMapKey's complaint about a key's characters.
const configKeyMsg = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' " +
	"(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"

func TestBadKeysAreInvalid(t *testing.T) {
	ts := startServer(t, Config{})
	cms := "/api/v1/namespaces/default/configmaps"
	secrets := "/api/v1/namespaces/default/secrets"
	cases := []struct {
		name, path, body, message string
	}{
		{"a key that is not UTF-8", cms, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"d\"},\"data\":{\"\xff\":\"v\"}}",
			`ConfigMap "d" is invalid: data[` + "\uFFFD" + `]: Invalid value: "` + "\uFFFD" + `": ` + configKeyMsg},
		{"a key with a space", cms, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"d"},"data":{"a b":"v"}}`,
			`ConfigMap "d" is invalid: data[a b]: Invalid value: "a b": ` + configKeyMsg},
		{"a key that is ..", cms, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"d"},"binaryData":{"..":"dg=="}}`,
			`ConfigMap "d" is invalid: binaryData[..]: Invalid value: "..": must not be '..'`},
		{"a key in data and binaryData", cms, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"d"},"data":{"k":"v"},"binaryData":{"k":"dg=="}}`,
			`ConfigMap "d" is invalid: data[k]: Invalid value: "k": duplicate of key present in binaryData`},
		{"an empty key", cms, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"d"},"data":{"":"v"}}`,
			`ConfigMap "d" is invalid: data[]: Invalid value: "": ` + configKeyMsg},
		{"a secret key", secrets, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"data":{"a/b":"dg=="}}`,
			`Secret "s" is invalid: data[a/b]: Invalid value: "a/b": ` + configKeyMsg},
		{"a secret's stringData key", secrets, `{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"},"stringData":{"..x":"v"}}`,
			`Secret "s" is invalid: data[..x]: Invalid value: "..x": must not start with '..'`},
		{"a label value that is not UTF-8", cms, "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"d\",\"labels\":{\"a\":\"\xff\"}}}",
			`ConfigMap "d" is invalid: metadata.labels: Invalid value: "` + "\uFFFD" + `": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', ` +
				`and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := ts.do(req{method: "POST", path: c.path, body: c.body})
			resp.mustCode(t, 422)
			st := resp.status(t)
			assert.Equal(t, api.ReasonInvalid, st.Reason)
			assert.Equal(t, c.message, st.Message)
		})
	}
	// Nothing was stored; and an update or a patch is checked the same way.
	ts.get(cms+"/d").mustCode(t, 404)
	ts.get(secrets+"/s").mustCode(t, 404)
	before := ts.createConfigMap("default", "ok", nil, map[string]string{"k": "v"})
	resp := ts.do(req{method: "PATCH", path: cms + "/ok", body: "{\"data\":{\"\xff\":\"v\"}}", header: map[string]string{"Content-Type": patch.MergePatchType}})
	resp.mustCode(t, 422)
	assert.Equal(t, `ConfigMap "ok" is invalid: data[`+"\uFFFD"+`]: Invalid value: "`+"\uFFFD"+`": `+configKeyMsg, resp.status(t).Message)
	resp = ts.do(req{method: "PUT", path: cms + "/ok", body: `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"ok"},"data":{"a b":"v"}}`})
	resp.mustCode(t, 422)
	after := ts.get(cms + "/ok").object(t)
	assert.Equal(t, before.Metadata.ResourceVersion, after.Metadata.ResourceVersion, "the object is unchanged")
}

// GET / lists the served paths as kube-apiserver's index does; an unknown
// version under /api or of a built-in group is a JSON 404 Status (the
// recorded error-404-unknown-resource.json); unknown groups and paths
// outside the API stay plain text.
func TestRootAndUnknownVersions(t *testing.T) {
	ts := startServer(t, Config{})
	for _, p := range []string{"/", "/index.html"} {
		r := ts.get(p)
		body := r.mustCode(t, http.StatusOK)
		assert.Equal(t, "application/json", r.header.Get("Content-Type"))
		var root struct {
			Paths []string `json:"paths"`
		}
		require.NoError(t, json.Unmarshal(body, &root))
		assert.True(t, slices.IsSorted(root.Paths), "sorted: %v", root.Paths)
		for _, want := range []string{"/api", "/api/v1", "/apis", "/apis/", "/apis/apps", "/apis/apps/v1",
			"/apis/apiextensions.k8s.io/v1", "/healthz", "/openapi/v3", "/version"} {
			assert.Contains(t, root.Paths, want)
		}
		assert.True(t, strings.HasPrefix(string(body), "{\n  \"paths\": [\n    \"/api\",\n"), "indented as WriteRawJSON: %s", body)
		for _, p := range root.Paths {
			if p != "/apis/" && !strings.HasSuffix(p, "/") {
				assert.NotEqual(t, http.StatusNotFound, ts.get(p).code, "%s is listed, so it is served", p)
			}
		}
	}
	for _, p := range []string{"/api/v2/pods", "/api/v2", "/apis/apps/v2/deployments", "/apis/apps/v1beta1"} {
		r := ts.get(p)
		requireSameJSON(t, "error-404-unknown-resource.json", r.mustCode(t, http.StatusNotFound))
		assert.Equal(t, "application/json", r.header.Get("Content-Type"), p)
	}
	for _, p := range []string{"/nosuchpath", "/apis/nosuch.example.com/v1/foos", "/apis/nosuch.example.com/v1"} {
		r := ts.get(p)
		assert.Equal(t, fixture(t, "error-404-unknown-group.txt"), r.mustCode(t, http.StatusNotFound), p)
		assert.Equal(t, "text/plain; charset=utf-8", r.header.Get("Content-Type"), p)
	}
}

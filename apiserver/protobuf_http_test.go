package apiserver

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
)

// TestProtobufCreateOverHTTP: kubectl's recorded bodies, POSTed as
// protobuf, store the same objects as their JSON equivalents; a malformed
// body is a 400 and stores nothing.
func TestProtobufCreateOverHTTP(t *testing.T) {
	ts := startServer(t, Config{})
	pb := map[string]string{"Content-Type": negotiation.ProtobufContentType}
	cases := []struct{ name, path, get string }{
		{"kubectl-configmap", "/api/v1/namespaces/default/configmaps", "/x"},
		{"kubectl-configmap-hash", "/api/v1/namespaces/default/configmaps", "/y-4b5tmd6878"},
		{"kubectl-secret", "/api/v1/namespaces/default/secrets", "/s"},
		{"kubectl-secret-docker", "/api/v1/namespaces/default/secrets", "/reg"},
		{"kubectl-namespace", "/api/v1/namespaces", "/n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			created := ts.do(req{method: "POST", path: c.path, body: string(readProtobufTestdata(t, c.name+".pb")), header: pb}).mustCode(t, http.StatusCreated)
			got := ts.get(c.path+c.get).mustCode(t, http.StatusOK)
			ts.do(req{method: "DELETE", path: c.path + c.get}).mustCode(t, http.StatusOK)

			createdJSON := ts.do(req{method: "POST", path: c.path, body: string(readProtobufTestdata(t, c.name+".json"))}).mustCode(t, http.StatusCreated)
			gotJSON := ts.get(c.path+c.get).mustCode(t, http.StatusOK)
			ts.do(req{method: "DELETE", path: c.path + c.get}).mustCode(t, http.StatusOK)

			assert.Equal(t, normalize(t, createdJSON), normalize(t, created))
			assert.Equal(t, normalize(t, gotJSON), normalize(t, got))
		})
	}

	t.Run("update", func(t *testing.T) {
		// kubectl-configmap.pb is ConfigMap x with data k=v.
		ts.createConfigMap("default", "x", nil, map[string]string{"k": "old"})
		body := string(readProtobufTestdata(t, "kubectl-configmap.pb"))
		ts.do(req{method: "PUT", path: "/api/v1/namespaces/default/configmaps/x", body: body, header: pb}).mustCode(t, http.StatusOK)
		assert.JSONEq(t, `{"k":"v"}`, string(ts.get("/api/v1/namespaces/default/configmaps/x").object(t).Get("data")))
	})

	t.Run("malformed", func(t *testing.T) {
		st := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/configmaps", body: "k8s\x00\x12\x7f", header: pb}).status(t)
		assert.Equal(t, int32(http.StatusBadRequest), st.Code)
		assert.Contains(t, st.Message, "unexpected end of data")
	})

	t.Run("wrong kind for the path", func(t *testing.T) {
		st := ts.do(req{method: "POST", path: "/api/v1/namespaces/default/configmaps", body: string(readProtobufTestdata(t, "kubectl-secret.pb")), header: pb}).status(t)
		assert.Equal(t, int32(http.StatusBadRequest), st.Code)
		assert.Contains(t, st.Message, `Secret in version "v1" cannot be handled as a ConfigMap`)
	})
}

// TestKubectlCreateGenerators drives the installed kubectl's create
// generators, which send protobuf, and reads the objects back.
func TestKubectlCreateGenerators(t *testing.T) {
	ts := startServer(t, Config{})
	k := newKubectl(t, ts)

	assert.Contains(t, k.run("create", "configmap", "x", "--from-literal=k=v"), "configmap/x created")
	cm := ts.get("/api/v1/namespaces/default/configmaps/x").object(t)
	assert.JSONEq(t, `{"k":"v"}`, string(cm.Get("data")))

	assert.Contains(t, k.run("create", "secret", "generic", "s", "--from-literal=a=b"), "secret/s created")
	secret := ts.get("/api/v1/namespaces/default/secrets/s").object(t)
	assert.JSONEq(t, `{"a":"Yg=="}`, string(secret.Get("data")), "b, base64-encoded")

	assert.Contains(t, k.run("create", "namespace", "n"), "namespace/n created")
	ns := ts.get("/api/v1/namespaces/n").object(t)
	assert.Equal(t, "n", ns.Metadata.Name)
	assert.Contains(t, k.run("create", "configmap", "in-n", "-n", "n", "--from-literal=k=v"), "configmap/in-n created")
	assert.Contains(t, k.run("get", "configmaps", "-n", "n"), "in-n")

	// A generator for a kind we do not read as protobuf fails clearly.
	out, err := k.cmd(t.Context(), "create", "deployment", "d", "--image=nginx").CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "accepted media types include: application/json")
	assert.Contains(t, string(out), "not apps/v1 Deployment")
	assert.Empty(t, ts.get("/apis/apps/v1/namespaces/default/deployments").list(t).Items)
}

// TestProtobufUnsupportedKinds: a protobuf body of any kind but a v1
// ConfigMap, Secret or Namespace is 415, and the message says what we read.
func TestProtobufUnsupportedKinds(t *testing.T) {
	ts := startServer(t, Config{})
	pb := map[string]string{"Content-Type": negotiation.ProtobufContentType}
	cbor := map[string]string{"Content-Type": "application/cbor"}
	deploys := "/apis/apps/v1/namespaces/default/deployments"
	cms := "/api/v1/namespaces/default/configmaps"
	cases := []struct {
		name   string
		req    req
		accept string // the accepted types the message lists
		extra  string // more of the message
	}{
		{"kubectl create deployment", req{method: "POST", path: deploys, body: string(readProtobufTestdata(t, "kubectl-deployment.pb")), header: pb},
			"accepted media types include: application/json (", "not apps/v1 Deployment"},
		{"deployment", req{method: "POST", path: deploys, body: string(readProtobufTestdata(t, "deployment.pb")), header: pb},
			"accepted media types include: application/json (", "reads application/vnd.kubernetes.protobuf only for v1 ConfigMap, Secret and Namespace"},
		{"deployment update", req{method: "PUT", path: deploys + "/web", body: string(readProtobufTestdata(t, "deployment.pb")), header: pb},
			"accepted media types include: application/json (", `ContentType: "application/json"`},
		{"pod", req{method: "POST", path: "/api/v1/namespaces/default/pods", body: string(readProtobufTestdata(t, "pod.pb")), header: pb},
			"accepted media types include: application/json (", "not v1 Pod"},
		{"deployment body on the configmaps path", req{method: "POST", path: cms, body: string(readProtobufTestdata(t, "deployment.pb")), header: pb},
			"accepted media types include: application/json (", "not apps/v1 Deployment"},
		{"cbor configmap", req{method: "POST", path: cms, body: "\xa1", header: cbor},
			"accepted media types include: application/json, application/vnd.kubernetes.protobuf", ""},
		{"cbor deployment", req{method: "POST", path: deploys, body: "\xa1", header: cbor},
			"accepted media types include: application/json", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := ts.do(c.req).status(t)
			assert.Equal(t, int32(http.StatusUnsupportedMediaType), st.Code)
			assert.Equal(t, api.ReasonUnsupportedMediaType, st.Reason)
			assert.Contains(t, st.Message, c.accept)
			assert.Contains(t, st.Message, c.extra)
		})
	}
	// Nothing was stored.
	assert.Empty(t, ts.get(deploys).list(t).Items)
	assert.Empty(t, ts.get(cms).list(t).Items)
}

// A tiny protobuf encoder for hand-made bodies.

// readProtobufTestdata reads a body of package negotiation's testdata.
func readProtobufTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("negotiation", "testdata", "protobuf", name))
	require.NoError(t, err)
	return b
}

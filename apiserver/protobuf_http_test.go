package apiserver

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/api/protobuf"
	"listwatch/apiserver/negotiation"
	"listwatch/internal/fixtures"
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
			ts.deleteAtOnce(c.path + c.get)

			createdJSON := ts.do(req{method: "POST", path: c.path, body: string(readProtobufTestdata(t, c.name+".json"))}).mustCode(t, http.StatusCreated)
			gotJSON := ts.get(c.path+c.get).mustCode(t, http.StatusOK)
			ts.deleteAtOnce(c.path + c.get)

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
		assert.Contains(t, st.Message, "cannot parse invalid wire-format data")
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
	kubectlFullRunOnly(t)
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

	assert.Contains(t, k.run("create", "deployment", "web", "--image=nginx"), "deployment.apps/web created")
	d := ts.get("/apis/apps/v1/namespaces/default/deployments/web").object(t)
	// kubectl sends "strategy":{} and a bare container; the server
	// defaults the strategy, the revision limit, the progress deadline
	// and the pod template, as kube-apiserver 1.37.2 stored the same
	// Deployment.
	var recorded struct{ Spec json.RawMessage }
	require.NoError(t, json.Unmarshal(fixture(t, "kinds-deployment-create-defaults-201.json"), &recorded))
	assert.JSONEq(t, string(recorded.Spec), string(d.Get("spec")))

	assert.Contains(t, k.run("create", "service", "clusterip", "s1", "--tcp=80:80"), "service/s1 created")
	svc := ts.get("/api/v1/namespaces/default/services/s1").object(t)
	assert.JSONEq(t, `{"ports":[{"name":"80-80","protocol":"TCP","port":80,"targetPort":80}],"selector":{"app":"s1"},"type":"ClusterIP"}`,
		string(svc.Get("spec")))
}

// TestProtobufResponses: a client that prefers protobuf (client-go's
// default) gets GET, LIST, create, delete and errors as protobuf that
// decode to the JSON a JSON client gets; a Table or a kind without a
// protobuf message stays JSON.
func TestProtobufResponses(t *testing.T) {
	ts := startServer(t, Config{})
	s := protobuf.Default()
	pb := map[string]string{"Accept": "application/vnd.kubernetes.protobuf,application/json"}
	cms := "/api/v1/namespaces/default/configmaps"
	ts.createConfigMap("default", "a", map[string]string{"app": "pb"}, map[string]string{"k": "v"})

	decode := func(r response) (protobuf.Envelope, string) {
		t.Helper()
		assert.Equal(t, negotiation.ProtobufContentType, r.header.Get("Content-Type"))
		env, js, err := s.DecodeObject(r.body, "", "")
		require.NoError(t, err)
		return env, string(js)
	}
	jsonOf := func(path string) string {
		t.Helper()
		return strings.TrimSuffix(string(ts.get(path).mustCode(t, http.StatusOK)), "\n")
	}

	t.Run("get", func(t *testing.T) {
		r := ts.do(req{path: cms + "/a", header: pb})
		require.Equal(t, http.StatusOK, r.code)
		env, js := decode(r)
		assert.Equal(t, "ConfigMap", env.Kind)
		assert.Equal(t, jsonOf(cms+"/a"), js)
		assert.Equal(t, strconv.Itoa(len(r.body)), r.header.Get("Content-Length"))
	})
	t.Run("list", func(t *testing.T) {
		r := ts.do(req{path: cms, header: pb})
		env, js := decode(r)
		assert.Equal(t, "ConfigMapList", env.Kind)
		var l struct {
			Items []struct{ Metadata struct{ Name string } }
		}
		require.NoError(t, json.Unmarshal([]byte(js), &l))
		require.Len(t, l.Items, 1)
		assert.Equal(t, "a", l.Items[0].Metadata.Name)
	})
	t.Run("errors are protobuf Statuses", func(t *testing.T) {
		r := ts.do(req{path: cms + "/nope", header: pb})
		assert.Equal(t, http.StatusNotFound, r.code)
		env, js := decode(r)
		assert.Equal(t, "Status", env.Kind)
		assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}`, js)
	})
	t.Run("create from protobuf, answered in protobuf", func(t *testing.T) {
		body, err := s.EncodeObject("v1", "ConfigMap", []byte(`{"metadata":{"name":"b"},"data":{"x":"y"}}`))
		require.NoError(t, err)
		r := ts.do(req{method: "POST", path: cms, body: string(body), header: map[string]string{
			"Accept": pb["Accept"], "Content-Type": negotiation.ProtobufContentType}})
		require.Equal(t, http.StatusCreated, r.code, "%q", r.body)
		_, js := decode(r)
		assert.Equal(t, jsonOf(cms+"/b"), js)
	})
	t.Run("a Table stays JSON", func(t *testing.T) {
		r := ts.do(req{path: cms, header: map[string]string{"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/vnd.kubernetes.protobuf"}})
		assert.Equal(t, negotiation.JSONContentType, r.header.Get("Content-Type"))
		assert.Contains(t, string(r.body), `"kind":"Table"`)
	})
	t.Run("protobuf only", func(t *testing.T) {
		r := ts.do(req{path: cms + "/a", header: map[string]string{"Accept": negotiation.ProtobufContentType}})
		_, js := decode(r)
		assert.Equal(t, jsonOf(cms+"/a"), js)
	})
}

// TestProtobufDeleteOptions: client-go's Delete sends DeleteOptions as a
// protobuf body with its own group-version in the envelope (the
// recordings); the server reads them like the JSON ones.
func TestProtobufDeleteOptions(t *testing.T) {
	ts := startServer(t, Config{})
	pb := map[string]string{"Content-Type": negotiation.ProtobufContentType}
	ts.createConfigMap("default", "a", nil, nil)
	ts.do(req{method: "DELETE", path: "/api/v1/namespaces/default/configmaps/a",
		body: string(fixtures.Read(t, "protobuf-request-delete-pod-deleteoptions.pb")), header: pb}).mustCode(t, http.StatusOK)
	ts.get("/api/v1/namespaces/default/configmaps/a").mustCode(t, http.StatusNotFound)

	d := `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"pb-deploy"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`
	ts.do(req{method: "POST", path: "/apis/apps/v1/namespaces/default/deployments", body: d}).mustCode(t, http.StatusCreated)
	ts.do(req{method: "DELETE", path: "/apis/apps/v1/namespaces/default/deployments/pb-deploy",
		body: string(fixtures.Read(t, "protobuf-request-delete-deployment-empty-deleteoptions.pb")), header: pb}).mustCode(t, http.StatusOK)

	st := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/default/configmaps/x", body: "k8s\x00\x0a", header: pb}).status(t)
	assert.Equal(t, int32(http.StatusBadRequest), st.Code)
}

// TestProtobufCreateEveryKind: client-go's recorded create bodies for a
// Pod, a Service and a Deployment are accepted and stored as the objects
// they describe.
func TestProtobufCreateEveryKind(t *testing.T) {
	ts := startServer(t, Config{})
	pb := map[string]string{"Content-Type": negotiation.ProtobufContentType}
	for _, c := range []struct{ fixture, path, name string }{
		{"protobuf-request-create-pod.pb", "/api/v1/namespaces/default/pods", "pb-pod"},
		{"protobuf-request-create-pod-client-go-v0.37.2.pb", "/api/v1/namespaces/other/pods", "pb-pod"},
		{"protobuf-request-create-service.pb", "/api/v1/namespaces/default/services", "pb-svc"},
		{"protobuf-request-create-deployment.pb", "/apis/apps/v1/namespaces/default/deployments", "pb-deploy"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			if strings.Contains(c.path, "/other/") {
				ts.do(req{method: "POST", path: "/api/v1/namespaces", body: `{"metadata":{"name":"other"}}`}).mustCode(t, http.StatusCreated)
			}
			ts.do(req{method: "POST", path: c.path, body: string(fixtures.Read(t, c.fixture)), header: pb}).mustCode(t, http.StatusCreated)
			o := ts.get(c.path + "/" + c.name).object(t)
			assert.Equal(t, c.name, o.Metadata.Name)
			assert.NotEmpty(t, o.Get("spec"))
		})
	}
}

// TestProtobufUnsupportedTypes: CBOR is 415 listing the types
// kube-apiserver 1.37.2 lists: JSON, YAML and protobuf.
func TestProtobufUnsupportedTypes(t *testing.T) {
	ts := startServer(t, Config{})
	cbor := map[string]string{"Content-Type": "application/cbor"}
	for _, path := range []string{"/api/v1/namespaces/default/configmaps", "/apis/apps/v1/namespaces/default/deployments"} {
		st := ts.do(req{method: "POST", path: path, body: "\xa1", header: cbor}).status(t)
		assert.Equal(t, int32(http.StatusUnsupportedMediaType), st.Code)
		assert.Equal(t, api.ReasonUnsupportedMediaType, st.Reason)
		assert.Contains(t, st.Message, "accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf")
	}
}

// readProtobufTestdata reads a body of package negotiation's testdata.
func readProtobufTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("negotiation", "testdata", "protobuf", name))
	require.NoError(t, err)
	return b
}

// TestProtobufWatch: a watch whose client prefers protobuf (client-go's
// Accept) is a stream of length-prefixed WatchEvent frames, as
// protobuf-watch-configmaps.pb shows, with the same events a JSON watch
// gets: ADDED, MODIFIED, DELETED and a BOOKMARK.
func TestProtobufWatch(t *testing.T) {
	ts := startServer(t, Config{})
	s := protobuf.Default()
	cms := "/api/v1/namespaces/default/configmaps"
	list := ts.get(cms).list(t)

	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet,
		ts.URL()+cms+"?watch=1&allowWatchBookmarks=true&timeoutSeconds=3600&resourceVersion="+list.Metadata.ResourceVersion, nil)
	require.NoError(t, err)
	hr.Header.Set("Accept", "application/vnd.kubernetes.protobuf;stream=watch,application/json")
	resp, err := ts.client.Do(hr)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/vnd.kubernetes.protobuf;stream=watch", resp.Header.Get("Content-Type"))

	ts.createConfigMap("default", "w", nil, map[string]string{"a": "1"})
	ts.do(req{method: "PATCH", path: cms + "/w", body: `{"data":{"a":"2"}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
	ts.do(req{method: "DELETE", path: cms + "/w"}).mustCode(t, http.StatusOK)

	// Read up to the delete: the stream is long, so a busy machine cannot
	// see it end before the writes above reach it.
	var types []string
	for !slices.Contains(types, "DELETED") {
		ev, err := s.ReadWatchFrame(resp.Body)
		require.NoError(t, err)
		types = append(types, ev.Type)
		env, js, err := s.DecodeObject(ev.Object, "", "")
		require.NoError(t, err)
		assert.Equal(t, "ConfigMap", env.Kind)
		if ev.Type == "BOOKMARK" {
			continue
		}
		var cm struct {
			Metadata struct{ Name string }
			Data     map[string]string
		}
		require.NoError(t, json.Unmarshal(js, &cm))
		assert.Equal(t, "w", cm.Metadata.Name)
	}
	changes := slices.DeleteFunc(slices.Clone(types), func(typ string) bool { return typ == "BOOKMARK" })
	assert.Equal(t, []string{"ADDED", "MODIFIED", "DELETED"}, changes, "%v", types)
}

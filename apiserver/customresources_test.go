package apiserver

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/api/protobuf"
)

// cronTabsCRD is the CronTab of Kubernetes' CustomResourceDefinition
// documentation, with descriptions for kubectl explain to show.
const cronTabsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"crontabs.stable.example.com"},
"spec":{"group":"stable.example.com","scope":"Namespaced","names":{"plural":"crontabs","singular":"crontab","kind":"CronTab","shortNames":["ct"]},
"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},"schema":{"openAPIV3Schema":{
 "description":"CronTab runs an image on a schedule.","type":"object","properties":{
  "spec":{"description":"spec is the desired schedule.","type":"object","required":["cronSpec"],"properties":{
   "cronSpec":{"description":"cronSpec is the schedule, in cron format.","type":"string"},
   "image":{"description":"image is the container image to run.","type":"string"},
   "replicas":{"description":"replicas is how many copies run at once.","type":"integer","format":"int32"},
   "labels":{"type":"object","additionalProperties":{"type":"string"}},
   "tags":{"type":"array","items":{"type":"string"}}}},
  "status":{"type":"object","properties":{"lastRun":{"type":"string","format":"date-time"}}}}}}}]}}`

const crontabs = "/apis/stable.example.com/v1/namespaces/default/crontabs"

// createCRD creates a definition and waits, on a watch of it, until it is
// Established, as kubectl wait --for condition=established does; by then
// its resource is served and listed in discovery.
func (ts *testServer) createCRD(t *testing.T, body, groupVersion string) {
	t.Helper()
	created := ts.do(req{method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: body})
	created.mustCode(t, http.StatusCreated)
	def := created.object(t)
	wc := ts.watch(chunked, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?watch=true&fieldSelector=metadata.name%3D"+
		def.Metadata.Name+"&resourceVersion="+def.Metadata.ResourceVersion)
	defer wc.close()
	for !definitionEstablished(t, wc.next().Object) {
	}
	ts.get("/apis/"+groupVersion).mustCode(t, http.StatusOK)
}

// definitionEstablished reports whether a definition's Established
// condition is True.
func definitionEstablished(t *testing.T, def *api.Object) bool {
	t.Helper()
	var st struct {
		Conditions []struct{ Type, Status string } `json:"conditions"`
	}
	require.NoError(t, json.Unmarshal(def.Get("status"), &st))
	for _, c := range st.Conditions {
		if c.Type == "Established" {
			return c.Status == "True"
		}
	}
	return false
}

func cronTab(name, spec string) string {
	return `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// Unknown fields of a custom resource are dropped, and reported per
// ?fieldValidation as for a built-in kind: Strict refuses the request,
// Warn (the default) says so in Warning headers, Ignore says nothing
// (crd-widget-create-unknown-field-201.json, crd-*-strict-*.json).
func TestCustomResourceFieldValidation(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	unknown := `{"cronSpec":"* * * * */5","foo":1,"bar":{"x":1}}`

	strict := ts.do(req{method: "POST", path: crontabs + "?fieldValidation=Strict", body: cronTab("strict", unknown)})
	requireSameJSON(t, "v137-crontab-create-strict-400.json", strict.mustCode(t, http.StatusBadRequest))
	ts.get(crontabs+"/strict").mustCode(t, http.StatusNotFound)

	warn := ts.do(req{method: "POST", path: crontabs, body: cronTab("warn", unknown)})
	requireSameJSON(t, "v137-crontab-create-warn-201.json", warn.mustCode(t, http.StatusCreated))
	assert.Equal(t, []string{`299 - "unknown field \"spec.bar\""`, `299 - "unknown field \"spec.foo\""`}, warn.header.Values("Warning"))
	assert.JSONEq(t, `{"cronSpec":"* * * * */5"}`, string(warn.object(t).Get("spec")))

	ignore := ts.do(req{method: "POST", path: crontabs + "?fieldValidation=Ignore", body: cronTab("ignore", unknown)})
	ignore.mustCode(t, http.StatusCreated)
	assert.Empty(t, ignore.header.Values("Warning"))
	assert.JSONEq(t, `{"cronSpec":"* * * * */5"}`, string(ignore.object(t).Get("spec")))

	meta := ts.do(req{method: "POST", path: crontabs + "?fieldValidation=Strict",
		body: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"m","colour":"red"},"spec":{"cronSpec":"x"}}`})
	requireSameJSON(t, "v137-crontab-create-metadata-strict-400.json", meta.mustCode(t, http.StatusBadRequest))
	dup := ts.do(req{method: "POST", path: crontabs + "?fieldValidation=Strict",
		body: `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"dup"},"spec":{"cronSpec":"x","cronSpec":"y"}}`})
	requireSameJSON(t, "v137-crontab-create-duplicate-strict-400.json", dup.mustCode(t, http.StatusBadRequest))
	deployment := ts.do(req{method: "POST", path: "/apis/apps/v1/namespaces/default/deployments?fieldValidation=Strict",
		body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"foo":1,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`})
	requireSameJSON(t, "v137-deployment-create-strict-400.json", deployment.mustCode(t, http.StatusBadRequest))

	put := ts.do(req{method: "PUT", path: crontabs + "/warn?fieldValidation=Strict", body: cronTab("warn", unknown)})
	put.mustCode(t, http.StatusBadRequest)
	assert.Equal(t, strict.status(t).Message, put.status(t).Message)

	patch := ts.do(req{method: "PATCH", path: crontabs + "/warn?fieldValidation=Strict", body: `{"spec":{"foo":1}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	requireSameShape(t, "v137-crontab-patch-strict-422.json", patch.mustCode(t, http.StatusUnprocessableEntity))
	st := patch.status(t)
	require.NotNil(t, st.Details)
	require.Len(t, st.Details.Causes, 1)
	assert.Equal(t, "patch", st.Details.Causes[0].Field)
	assert.True(t, strings.HasPrefix(st.Message, ` "" is invalid: patch: Invalid value: "{`), st.Message)
	assert.True(t, strings.HasSuffix(st.Message, `}": strict decoding error: unknown field "spec.foo"`), st.Message)
	patchWarn := ts.do(req{method: "PATCH", path: crontabs + "/warn", body: `{"spec":{"foo":1,"image":"nginx"}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	patchWarn.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{`299 - "unknown field \"spec.foo\""`}, patchWarn.header.Values("Warning"))
	assert.JSONEq(t, `{"cronSpec":"* * * * */5","image":"nginx"}`, string(patchWarn.object(t).Get("spec")))
}

// kubectl explain reads a custom resource's schema from OpenAPI v3, its
// descriptions and types as the definition declares them.
func TestKubectlExplainCustomResource(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	k := newKubectl(t, ts)
	kind := k.run("explain", "crontab")
	assert.Contains(t, kind, "GROUP:      stable.example.com")
	assert.Contains(t, kind, "KIND:       CronTab")
	assert.Contains(t, kind, "CronTab runs an image on a schedule.")
	assert.Contains(t, kind, "metadata\t<ObjectMeta>")
	spec := k.run("explain", "crontab.spec")
	assert.Contains(t, spec, "cronSpec\t<string> -required-")
	assert.Contains(t, spec, "cronSpec is the schedule, in cron format.")
	assert.Contains(t, spec, "labels\t<map[string]string>")
	assert.Contains(t, spec, "tags\t<[]string>")
	replicas := k.run("explain", "ct.spec.replicas")
	assert.Contains(t, replicas, "FIELD: replicas <integer>")
	assert.Contains(t, replicas, "replicas is how many copies run at once.")
	labels := k.run("explain", "crontab.metadata.labels")
	assert.Contains(t, labels, "FIELD: labels <map[string]string>")

	// kubectl create validates against the server (?fieldValidation=Strict).
	dir := t.TempDir()
	file := filepath.Join(dir, "ct.json")
	require.NoError(t, os.WriteFile(file, []byte(cronTab("k", `{"cronSpec":"x","nope":true}`)), 0o600))
	out, err := k.cmd(t.Context(), "create", "-f", file).CombinedOutput()
	require.Error(t, err, "%s", out)
	assert.Contains(t, string(out), `strict decoding error: unknown field "spec.nope"`)
}

// A custom resource's group version document carries its kind's schema
// and its list's as the real server writes them, and the metadata types
// they reference (v137-openapi-v3-crontabs.json).
func TestCustomResourceOpenAPIDocument(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, cronTabsCRD, "stable.example.com/v1")
	type document struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	var ours, real document
	require.NoError(t, json.Unmarshal(ts.get("/openapi/v3/apis/stable.example.com/v1").mustCode(t, http.StatusOK), &ours))
	require.NoError(t, json.Unmarshal(fixture(t, "v137-openapi-v3-crontabs.json"), &real))
	for _, name := range []string{"com.example.stable.v1.CronTab", "com.example.stable.v1.CronTabList"} {
		require.Contains(t, ours.Components.Schemas, name)
		assert.JSONEq(t, string(real.Components.Schemas[name]), string(ours.Components.Schemas[name]), name)
	}
	for _, name := range []string{"ObjectMeta", "ListMeta", "ManagedFieldsEntry", "OwnerReference", "Time", "FieldsV1"} {
		assert.Contains(t, ours.Components.Schemas, "io.k8s.apimachinery.pkg.apis.meta.v1."+name)
	}
	for name := range ours.Components.Schemas {
		assert.Contains(t, real.Components.Schemas, name, "the real document has every schema ours has")
	}
}

// A CustomResourceDefinition sent as protobuf, as client-go's
// apiextensions clientset sends it when asked to (Kubernetes' e2e tests
// do), is created like the same definition in JSON and serves its
// resource; kube-apiserver reads both (the apiextensions types have
// protobuf messages).
func TestCustomResourceDefinitionFromProtobuf(t *testing.T) {
	ts := startServer(t, Config{})
	body, err := protobuf.Default().EncodeObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", []byte(cronTabsCRD))
	require.NoError(t, err)
	created := ts.do(req{method: "POST", path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body: string(body),
		header: map[string]string{"Content-Type": protobuf.ContentType}}).object(t)
	require.Equal(t, "crontabs.stable.example.com", created.Metadata.Name)
	require.Eventually(t, func() bool { return ts.get("/apis/stable.example.com/v1").code == http.StatusOK },
		safetyTimeout, 10*time.Millisecond, "stable.example.com/v1 is served")

	var want, got any
	require.NoError(t, json.Unmarshal([]byte(cronTabsCRD), &want))
	require.NoError(t, json.Unmarshal(ts.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com").object(t).Get("spec"), &got))
	wantSpec := want.(map[string]any)["spec"].(map[string]any)
	gotSpec := got.(map[string]any)
	for _, k := range []string{"group", "scope"} {
		assert.Equal(t, wantSpec[k], gotSpec[k], k)
	}
	assert.Equal(t, "CronTab", gotSpec["names"].(map[string]any)["kind"])
	assert.Equal(t, wantSpec["versions"].([]any)[0].(map[string]any)["schema"], gotSpec["versions"].([]any)[0].(map[string]any)["schema"])
	ts.do(req{method: "POST", path: crontabs, body: cronTab("daily", `{"cronSpec":"0 0 * * *"}`)}).mustCode(t, http.StatusCreated)
}

package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The custom resources of Kubernetes' FieldValidation e2e specs
// (k8s.io/kubernetes v1.37.2 test/e2e/apimachinery/field_validation.go):
// noxus has a closed schema, emos preserve unknown fields in spec and hold
// an embedded object. Every expected answer below is what kube-apiserver
// 1.37.2 answered to the same request.
const (
	fvNoxusCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"noxus.fv.example.com"},
"spec":{"group":"fv.example.com","scope":"Cluster","names":{"plural":"noxus","singular":"noxu","kind":"Noxu","listKind":"NoxuList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
 "spec":{"type":"object","properties":{"foo":{"type":"string"},"cronSpec":{"type":"string"},"ports":` + portsSchema + `}}}}}}]}}`
	fvEmosCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"emos.fv.example.com"},
"spec":{"group":"fv.example.com","scope":"Cluster","names":{"plural":"emos","singular":"emo","kind":"Emo","listKind":"EmoList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{
 "spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{
  "template":{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"metadata":{"type":"object","properties":{"name":{"type":"string"}}},"spec":{"type":"object"}}},
  "foo":{"type":"string"},
  "embeddedObj":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
  "ports":` + portsSchema + `}}}}}}]}}`
	portsSchema = `{"type":"array","x-kubernetes-list-map-keys":["containerPort","protocol"],"x-kubernetes-list-type":"map","items":{"type":"object","required":["containerPort","protocol"],
"properties":{"containerPort":{"type":"integer","format":"int32"},"hostPort":{"type":"integer","format":"int32"},"name":{"type":"string"},"protocol":{"type":"string"}}}}`

	fvNoxus = "/apis/fv.example.com/v1/noxus"
	fvEmos  = "/apis/fv.example.com/v1/emos"
)

// apply sends an apply of body (YAML) to path with ?fieldValidation.
func (ts *testServer) apply(path, directive, body string) response {
	return ts.do(req{method: "PATCH", path: path + "?fieldManager=field_validation_mgr&fieldValidation=" + directive, body: body,
		header: map[string]string{"Content-Type": "application/apply-patch+yaml"}})
}

// An apply may only name the fields the schema declares, whatever
// ?fieldValidation says: the field manager's typed conversion fails, and
// kube-apiserver answers a 500 with no reason. Its words are
// structured-merge-diff's; the specs look for them.
func TestApplyUndeclaredFieldsOfCustomResource(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvNoxusCRD, "fv.example.com/v1")
	ts.createCRD(t, fvEmosCRD, "fv.example.com/v1")
	// createCRD waited for Established, which ours sets once the resource
	// is served (crd/status.go): the second resource answers at once.
	ts.get(fvEmos).mustCode(t, http.StatusOK)
	for _, tc := range []struct{ name, path, body, message string }{
		{"unknown field at the root (field_validation.go: an invalid CR with extra properties)", fvNoxus, `
apiVersion: fv.example.com/v1
kind: Noxu
metadata:
  name: mytest
unknownField: unknown
spec:
  foo: foo1
  cronSpec: "* * * * */5"
  ports:
  - name: x
    containerPort: 80
    protocol: TCP`, "failed to create typed patch object (/mytest; fv.example.com/v1, Kind=Noxu): .unknownField: field not declared in schema"},
		{"unknown metadata in the root and the embedded object", fvEmos, `
apiVersion: fv.example.com/v1
kind: Emo
metadata:
  name: mytest
  unknownMeta: unknown
spec:
  template:
    apiversion: foo/v1
    kind: Sub
    metadata:
        unknownSubMeta: unknown
        name: subobject
        namespace: default
  foo: foo1`, "failed to create typed patch object (/mytest; fv.example.com/v1, Kind=Emo): errors:\n" +
			"  .metadata.unknownMeta: field not declared in schema\n  .spec.template.metadata.unknownSubMeta: field not declared in schema"},
		{"in an element of a map list, named by its keys", fvNoxus, `
apiVersion: fv.example.com/v1
kind: Noxu
metadata:
  name: nested
spec:
  foo: a
  ports:
  - name: x
    containerPort: 80
    protocol: TCP
    extra: 1
  zzz: 1`, "failed to create typed patch object (/nested; fv.example.com/v1, Kind=Noxu): errors:\n" +
			"  .spec.ports[containerPort=80,protocol=\"TCP\"].extra: field not declared in schema\n  .spec.zzz: field not declared in schema"},
		{"before any repeated key", fvNoxus, `
apiVersion: fv.example.com/v1
kind: Noxu
metadata:
  name: both
spec:
  foo: a
  foo: b
bogus: 1`, "failed to create typed patch object (/both; fv.example.com/v1, Kind=Noxu): .bogus: field not declared in schema"},
	} {
		for _, directive := range []string{"Strict", "Warn", "Ignore"} {
			t.Run(tc.name+"/"+directive, func(t *testing.T) {
				resp := ts.apply(tc.path+"/"+firstName(tc.body), directive, tc.body)
				resp.mustCode(t, http.StatusInternalServerError)
				st := resp.status(t)
				assert.Equal(t, api.StatusReason(""), st.Reason)
				assert.Equal(t, tc.message, st.Message)
				assert.Nil(t, st.Details)
				assert.Empty(t, resp.header.Values("Warning"))
			})
		}
	}
}

// firstName is the metadata.name of an applied configuration.
func firstName(body string) string {
	_, rest, _ := strings.Cut(body, "\n  name: ")
	name, _, _ := strings.Cut(rest, "\n")
	return name
}

// A key given twice in one mapping of an apply's YAML: the last value
// wins; Strict refuses it once the apply has worked, in goyaml.v2's words;
// Warn sends a Warning per repeated key; Ignore says nothing
// (field_validation.go: detect duplicates in a CR when preserving unknown
// fields).
func TestApplyRepeatedKeys(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvEmosCRD, "fv.example.com/v1")
	body := func(name string) string {
		return `
apiVersion: fv.example.com/v1
kind: Emo
metadata:
  name: ` + name + `
spec:
  unknown: uk1
  foo: foo1
  foo: foo2
  cronSpec: "* * * * */5"
  ports:
  - name: x
    containerPort: 80
    protocol: TCP`
	}
	strict := ts.apply(fvEmos+"/mytest", "Strict", body("mytest"))
	strict.mustCode(t, http.StatusBadRequest)
	st := strict.status(t)
	assert.Equal(t, api.ReasonBadRequest, st.Reason)
	assert.Equal(t, "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 9: key \"foo\" already set in map", st.Message)
	ts.get(fvEmos+"/mytest").mustCode(t, http.StatusNotFound)

	warn := ts.apply(fvEmos+"/warned", "Warn", body("warned"))
	warn.mustCode(t, http.StatusCreated)
	assert.Equal(t, []string{`299 - "line 9: key \"foo\" already set in map"`}, warn.header.Values("Warning"))
	assert.JSONEq(t, `{"unknown":"uk1","foo":"foo2","cronSpec":"* * * * */5","ports":[{"name":"x","containerPort":80,"protocol":"TCP"}]}`,
		string(warn.object(t).Get("spec")))
	again := ts.apply(fvEmos+"/warned", "Strict", body("warned")) // an apply to an existing object: the same
	again.mustCode(t, http.StatusBadRequest)
	assert.Equal(t, st.Message, again.status(t).Message)

	ignore := ts.apply(fvEmos+"/ignored", "Ignore", body("ignored"))
	ignore.mustCode(t, http.StatusCreated)
	assert.Empty(t, ignore.header.Values("Warning"))
}

// A key written out after a merge key that gave it is a repeated key too:
// goyaml.v2 decodes the merged map into the same map (go.yaml.in/yaml/v2
// v2.4.4 decode.go, decoder.merge and decoder.setMapIndex), so Strict
// refuses it, Warn warns and Ignore is silent, the explicit value winning
// where the apply is taken. Unlike the answers above, these were not
// recorded from a kube-apiserver but checked against the decoding it does,
// k8s.io/apimachinery v0.37.2 pkg/util/yaml Unmarshal and UnmarshalStrict.
func TestApplyRepeatedKeyAfterMerge(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvEmosCRD, "fv.example.com/v1")
	body := func(name string) string {
		return "apiVersion: fv.example.com/v1\nkind: Emo\nmetadata:\n  name: " + name + "\nspec:\n" +
			"  defaults: &defaults {foo: foo1, cronSpec: \"* * * * */5\"}\n  <<: *defaults\n  foo: foo2\n"
	}
	strict := ts.apply(fvEmos+"/mytest", "Strict", body("mytest"))
	strict.mustCode(t, http.StatusBadRequest)
	st := strict.status(t)
	assert.Equal(t, api.ReasonBadRequest, st.Reason)
	assert.Equal(t, "error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 8: key \"foo\" already set in map", st.Message)
	ts.get(fvEmos+"/mytest").mustCode(t, http.StatusNotFound)

	want := `{"defaults":{"foo":"foo1","cronSpec":"* * * * */5"},"foo":"foo2","cronSpec":"* * * * */5"}`
	warn := ts.apply(fvEmos+"/warned", "Warn", body("warned"))
	warn.mustCode(t, http.StatusCreated)
	assert.Equal(t, []string{`299 - "line 8: key \"foo\" already set in map"`}, warn.header.Values("Warning"))
	assert.JSONEq(t, want, string(warn.object(t).Get("spec")))

	ignore := ts.apply(fvEmos+"/ignored", "Ignore", body("ignored"))
	ignore.mustCode(t, http.StatusCreated)
	assert.Empty(t, ignore.header.Values("Warning"))
	assert.JSONEq(t, want, string(ignore.object(t).Get("spec")))
}

// An applied configuration of another kind or version than the endpoint's
// is refused by the field manager's version check, before its fields are
// looked at.
func TestApplyWrongKind(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvNoxusCRD, "fv.example.com/v1")
	for body, message := range map[string]string{
		"apiVersion: fv.example.com/v2\nkind: Noxu\nmetadata: {name: v}\nbogus: 1\n": "invalid object type: fv.example.com/v2, Kind=Noxu",
		"apiVersion: fv.example.com/v1\nkind: Emo\nmetadata: {name: v}\n":            "invalid object type: fv.example.com/v1, Kind=Emo",
	} {
		resp := ts.apply(fvNoxus+"/v", "Strict", body)
		resp.mustCode(t, http.StatusBadRequest)
		assert.Equal(t, message, resp.status(t).Message)
	}
}

// The unknown fields of a create, with an embedded object: pruning leaves
// an embedded object's apiVersion, kind and metadata alone and prunes the
// rest; the embedded metadata is read as ObjectMeta, its unknown fields
// reported after the pruned ones, sorted.
func TestCreateUnknownFieldsOfEmbeddedObjects(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createCRD(t, fvEmosCRD, "fv.example.com/v1")
	body := `{"apiVersion":"fv.example.com/v1","kind":"Emo","metadata":{"name":"e"},
 "spec":{"unknown1":"v","template":{"apiVersion":"v1","apiversion":"foo/v1","kind":"Sub","metadata":{"unknownSubMeta":"u","name":"s","namespace":"default"}},
 "embeddedObj":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","unknownEmbeddedMeta":"foo"}}}}`
	strict := ts.do(req{method: "POST", path: fvEmos + "?fieldValidation=Strict", body: body})
	strict.mustCode(t, http.StatusBadRequest)
	assert.Equal(t, `Emo in version "v1" cannot be handled as a Emo: strict decoding error: unknown field "spec.template.apiversion", `+
		`unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta", unknown field "spec.template.metadata.unknownSubMeta"`, strict.status(t).Message)

	warn := ts.do(req{method: "POST", path: fvEmos, body: body})
	warn.mustCode(t, http.StatusCreated)
	assert.Equal(t, []string{`299 - "unknown field \"spec.template.apiversion\""`,
		`299 - "unknown field \"spec.embeddedObj.metadata.unknownEmbeddedMeta\""`,
		`299 - "unknown field \"spec.template.metadata.unknownSubMeta\""`}, warn.header.Values("Warning"))
	assert.JSONEq(t, `{"unknown1":"v","template":{"apiVersion":"v1","kind":"Sub","metadata":{"name":"s","namespace":"default"}},
 "embeddedObj":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns"}}}`, string(warn.object(t).Get("spec")))
	require.Equal(t, http.StatusOK, ts.get(fvEmos+"/e").code)
}

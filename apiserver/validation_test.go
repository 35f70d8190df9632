package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

const cms2 = "/api/v1/namespaces/fixtures2/configmaps"

// Unknown fields of a built-in kind are dropped; ?fieldValidation says
// whether the client hears of it (fieldvalidation-*.json).
func TestFieldValidationAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	body := func(name string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"v"},"foo":"bar"}`
	}
	strict := ts.do(req{method: "POST", path: cms2 + "?fieldValidation=Strict", body: body("fv-strict")})
	requireSameJSON(t, "fieldvalidation-strict-400.json", strict.mustCode(t, http.StatusBadRequest))
	ts.get(cms2+"/fv-strict").mustCode(t, http.StatusNotFound)

	for _, tc := range []struct{ query, name, fixture string }{
		{"?fieldValidation=Warn", "fv-warn", "fieldvalidation-warn-201.json"},
		{"", "fv-default", "fieldvalidation-default-201.json"},
	} {
		resp := ts.do(req{method: "POST", path: cms2 + tc.query, body: body(tc.name)})
		requireSameJSON(t, tc.fixture, resp.mustCode(t, http.StatusCreated))
		assert.Equal(t, []string{`299 - "unknown field \"foo\""`}, resp.header.Values("Warning"))
		requireSameJSON(t, tc.fixture, ts.get(cms2+"/"+tc.name).mustCode(t, http.StatusOK))
	}
	ignore := ts.do(req{method: "POST", path: cms2 + "?fieldValidation=Ignore", body: body("fv-ignore")})
	ignore.mustCode(t, http.StatusCreated)
	assert.Empty(t, ignore.header.Values("Warning"))
	assert.Nil(t, ignore.object(t).Get("foo"))

	bad := ts.do(req{method: "POST", path: cms2 + "?fieldValidation=Loud", body: body("fv-loud")})
	bad.mustCode(t, http.StatusUnprocessableEntity)
	assert.Equal(t, `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"`, bad.status(t).Message)
}

// A value the typed kind cannot hold is refused on create, update and
// every patch type; nothing is stored, so no typed client ever meets it.
func TestWrongTypesAreRefused(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	cm := ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"data":{"k":"v"}}`}).object(t)
	ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/secrets", body: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`}).mustCode(t, http.StatusCreated)
	rev := ts.revision()

	wrong := []struct{ name, field, value, msg string }{
		{"data object of numbers", "data", `{"k":1}`, "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"},
		{"data array", "data", `[1,2]`, "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"},
		{"binaryData not base64", "binaryData", `{"b":"%%%"}`, "illegal base64 data at input byte 0"},
		{"immutable string", "immutable", `"yes"`, "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool"},
	}
	hdr := func(ct string) map[string]string { return map[string]string{"Content-Type": ct} }
	for _, tc := range wrong {
		t.Run(tc.name, func(t *testing.T) {
			create := ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad"},"` + tc.field + `":` + tc.value + `}`})
			create.mustCode(t, http.StatusBadRequest)
			st := create.status(t)
			assert.Equal(t, api.ReasonBadRequest, st.Reason)
			assert.Equal(t, `ConfigMap in version "v1" cannot be handled as a ConfigMap: `+tc.msg, st.Message)

			update := ts.do(req{method: "PUT", path: cms2 + "/cm", body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"},"` + tc.field + `":` + tc.value + `}`})
			update.mustCode(t, http.StatusBadRequest)
			assert.Equal(t, st.Message, update.status(t).Message)

			for _, p := range []struct{ ct, body string }{
				{"application/merge-patch+json", `{"` + tc.field + `":` + tc.value + `}`},
				{"application/strategic-merge-patch+json", `{"` + tc.field + `":` + tc.value + `}`},
				{"application/json-patch+json", `[{"op":"add","path":"/` + tc.field + `","value":` + tc.value + `}]`},
			} {
				resp := ts.do(req{method: "PATCH", path: cms2 + "/cm", body: p.body, header: hdr(p.ct)})
				resp.mustCode(t, http.StatusUnprocessableEntity)
				st := resp.status(t)
				assert.Equal(t, api.ReasonInvalid, st.Reason, p.ct)
				require.NotNil(t, st.Details)
				require.Len(t, st.Details.Causes, 1)
				assert.Equal(t, "patch", st.Details.Causes[0].Field)
				assert.Contains(t, st.Details.Causes[0].Message, tc.msg, p.ct)
			}
		})
	}
	finalizers := ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","finalizers":[1]}}`})
	finalizers.mustCode(t, http.StatusBadRequest)
	assert.Contains(t, finalizers.status(t).Message, "Go struct field ObjectMeta.metadata.finalizers of type string")
	secret := ts.do(req{method: "PATCH", path: "/api/v1/namespaces/fixtures2/secrets/s", body: `{"data":{"k":"not base64"}}`, header: hdr("application/merge-patch+json")})
	secret.mustCode(t, http.StatusUnprocessableEntity)

	assert.Equal(t, rev, ts.revision(), "nothing was written")
	assert.Equal(t, cm.Metadata.ResourceVersion, ts.get(cms2+"/cm").object(t).Metadata.ResourceVersion)
}

// What a typed decoder would choke on never reaches the store: unknown
// fields (even unparseable numbers) are dropped, invalid UTF-8 becomes
// U+FFFD, a number out of its field's range is refused.
func TestStoredObjectsDecodeAsTheirKind(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	huge := ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge","x":1e999999},"x":1e999999,"data":{"k":"v"}}`})
	assert.Equal(t, []string{`299 - "unknown field \"metadata.x\""`, `299 - "unknown field \"x\""`}, huge.header.Values("Warning"))
	obj := huge.object(t)
	assert.Nil(t, obj.Get("x"))
	assert.Empty(t, obj.Metadata.Extra)

	utf := ts.do(req{method: "POST", path: cms2, body: "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"utf\",\"labels\":{\"a\":\"b\"}},\"data\":{\"k\":\"a\xffb\"}}"})
	utf.mustCode(t, http.StatusCreated)
	assert.JSONEq(t, "{\"k\":\"a\uFFFDb\"}", string(ts.get(cms2+"/utf").object(t).Get("data")))

	patched := ts.do(req{method: "PATCH", path: cms2 + "/utf", body: `{"extra":{"deep":[1]},"data":{"j":"w"}}`, header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	patched.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{`299 - "unknown field \"extra\""`}, patched.header.Values("Warning"))
	assert.Nil(t, patched.object(t).Get("extra"))
	strict := ts.do(req{method: "PATCH", path: cms2 + "/utf?fieldValidation=Strict", body: `{"extra":1}`, header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	strict.mustCode(t, http.StatusUnprocessableEntity)
	assert.Contains(t, strict.status(t).Message, `strict decoding error: unknown field "extra"`)

	port := ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/pods", body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"nginx","ports":[{"containerPort":4294967376}]}]}}`})
	port.mustCode(t, http.StatusBadRequest)
	assert.Contains(t, port.status(t).Message, "cannot unmarshal number 4294967376 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32")
}

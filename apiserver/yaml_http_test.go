package apiserver

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Create, update and DeleteOptions bodies sent as application/yaml get
// kube-apiserver 1.37.2's answers: each expected message and warning below
// is what the real server answered to the same body (sent with curl,
// 2026-11-29; the reference module's kube-apiserver).
func TestYAMLBodies(t *testing.T) {
	ts := startServer(t, Config{})
	coll := "/api/v1/namespaces/default/configmaps"
	yamlHeader := map[string]string{"Content-Type": "application/yaml"}
	post := func(query, body string) response {
		return ts.do(req{method: "POST", path: coll + query, body: body, header: yamlHeader})
	}
	cm := func(name, rest string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n" + rest
	}

	t.Run("created", func(t *testing.T) {
		// YAML 1.1 as goyaml.v2 reads it: a date stays the text it was.
		o := post("", cm("y-dates", "data:\n  date: 2024-01-01\n  ts: 2001-12-14T21:59:43.10-05:00\n  on: x\n  1: \"y\"\n")).object(t)
		assert.JSONEq(t, `{"date": "2024-01-01", "ts": "2001-12-14T21:59:43.10-05:00", "true": "x", "1": "y"}`, string(o.Get("data")))
		// Only the first document counts; kind and apiVersion may be left out.
		post("", cm("y-first", "---\n"+cm("y-second", ""))).mustCode(t, http.StatusCreated)
		ts.get(coll+"/y-second").mustCode(t, http.StatusNotFound)
		post("", "metadata:\n  name: y-bare\n").mustCode(t, http.StatusCreated)
		post("", "").mustCode(t, http.StatusUnprocessableEntity) // null: no name
	})

	t.Run("malformed", func(t *testing.T) {
		for _, c := range []struct{ body, want string }{
			{cm("y-bad", " data: x\n  b: [\n"), "the object provided is unrecognized (must be of type ConfigMap): yaml: line 4: did not find expected key (61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)"},
			{"hello\n", `the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (68656c6c6f0a)`},
			{cm("y-yes", "data:\n  flag: yes\n"), `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ConfigMap.data of type string`},
		} {
			st := post("", c.body).status(t)
			assert.Equal(t, int32(http.StatusBadRequest), st.Code)
			assert.Equal(t, api.ReasonBadRequest, st.Reason)
			assert.Equal(t, c.want, st.Message)
		}
	})

	t.Run("repeated keys", func(t *testing.T) {
		body := cm("y-dup", "  name: y-dup\nbar: 2\ndata:\n  a: \"1\"\n  a: \"2\"\n")
		st := post("?fieldValidation=Strict", body).status(t)
		assert.Equal(t, int32(http.StatusBadRequest), st.Code)
		assert.Equal(t, `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: yaml: unmarshal errors:`+"\n"+
			`  line 5: key "name" already set in map`+"\n"+`  line 9: key "a" already set in map, unknown field "bar"`, st.Message)

		warned := post("", body)
		assert.JSONEq(t, `{"a": "2"}`, string(warned.object(t).Get("data")))
		assert.Equal(t, []string{`299 - "line 5: key \"name\" already set in map"`, `299 - "line 9: key \"a\" already set in map"`,
			`299 - "unknown field \"bar\""`}, warned.header.Values("Warning"))
		ts.do(req{method: "DELETE", path: coll + "/y-dup"}).mustCode(t, http.StatusOK)
		ignored := post("?fieldValidation=Ignore", body)
		ignored.mustCode(t, http.StatusCreated)
		assert.Empty(t, ignored.header.Values("Warning"))
	})

	t.Run("update and delete", func(t *testing.T) {
		ts.createConfigMap("default", "y-put", nil, nil)
		put := ts.do(req{method: "PUT", path: coll + "/y-put", body: cm("y-put", "data:\n  u: \"1\"\n  u: \"2\"\n"), header: yamlHeader})
		assert.JSONEq(t, `{"u": "2"}`, string(put.object(t).Get("data")))
		assert.Equal(t, []string{`299 - "line 7: key \"u\" already set in map"`}, put.header.Values("Warning"))

		st := ts.do(req{method: "DELETE", path: coll + "/y-put", body: cm("y-put", " data: x\n  b: [\n"), header: yamlHeader}).status(t)
		assert.Equal(t, int32(http.StatusBadRequest), st.Code)
		assert.Equal(t, "yaml: line 4: did not find expected key", st.Message)
		ts.do(req{method: "DELETE", path: coll + "/y-put", body: "kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: 0\n",
			header: yamlHeader}).mustCode(t, http.StatusOK)
	})

	t.Run("other types", func(t *testing.T) {
		for _, ct := range []string{"text/yaml", "application/x-yaml", "text/plain"} {
			st := ts.do(req{method: "POST", path: coll, body: cm("y-ct", ""), header: map[string]string{"Content-Type": ct}}).status(t)
			require.Equal(t, int32(http.StatusUnsupportedMediaType), st.Code, ct)
			assert.Equal(t, "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf", st.Message)
		}
		ts.do(req{method: "POST", path: coll, body: cm("y-charset", ""), header: map[string]string{"Content-Type": "application/yaml; charset=utf-8"}}).
			mustCode(t, http.StatusCreated)
	})
}

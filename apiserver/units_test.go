package apiserver

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestMergePatch(t *testing.T) {
	cases := []struct {
		name, doc, patch, want string
		strategic              bool
	}{
		{"merge objects", `{"a":{"x":1,"y":2},"b":1}`, `{"a":{"y":3,"z":4}}`, `{"a":{"x":1,"y":3,"z":4},"b":1}`, false},
		{"null deletes", `{"a":{"x":1},"b":1}`, `{"a":{"x":null},"b":null}`, `{"a":{}}`, false},
		{"lists are replaced", `{"a":[1,2,3]}`, `{"a":[4]}`, `{"a":[4]}`, false},
		{"object over scalar", `{"a":1}`, `{"a":{"b":2}}`, `{"a":{"b":2}}`, false},
		{"numbers stay exact", `{"n":12345678901234567890}`, `{"m":0.1}`, `{"m":0.1,"n":12345678901234567890}`, false},
		{"directives are not data", `{"spec":{"c":[{"name":"a"}]}}`, `{"spec":{"$setElementOrder/c":[{"name":"b"}],"c":[{"name":"b","$patch":"merge"}]}}`, `{"spec":{"c":[{"name":"b"}]}}`, true},
		{"$patch delete", `{"a":{"x":1},"b":1}`, `{"a":{"$patch":"delete"}}`, `{"b":1}`, true},
		{"$patch replace", `{"a":{"x":1,"y":2}}`, `{"a":{"$patch":"replace","z":3}}`, `{"a":{"z":3}}`, true},
		{"delete list element", `{"a":[1]}`, `{"a":[{"name":"x","$patch":"delete"},{"name":"y"}]}`, `{"a":[{"name":"y"}]}`, true},
		{"merge patch keeps dollar keys", `{}`, `{"$x":1}`, `{"$x":1}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := applyMergePatch([]byte(c.doc), []byte(c.patch), c.strategic)
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
	_, err := applyMergePatch([]byte(`{}`), []byte(`[1]`), false)
	assert.ErrorIs(t, err, errBadMergePatch)
}

func TestJSONPatch(t *testing.T) {
	doc := `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1}`
	cases := []struct {
		name, patch, want, err string
	}{
		{"add member", `[{"op":"add","path":"/n","value":null}]`, `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1,"n":null}`, ""},
		{"add to array", `[{"op":"add","path":"/a/b/1","value":9}]`, `{"a":{"b":[1,9,2,3]},"c":"x","d~e/f":1}`, ""},
		{"append", `[{"op":"add","path":"/a/b/-","value":4}]`, `{"a":{"b":[1,2,3,4]},"c":"x","d~e/f":1}`, ""},
		{"replace root member", `[{"op":"replace","path":"/c","value":{"y":1}}]`, `{"a":{"b":[1,2,3]},"c":{"y":1},"d~e/f":1}`, ""},
		{"escaped pointer", `[{"op":"remove","path":"/d~0e~1f"}]`, `{"a":{"b":[1,2,3]},"c":"x"}`, ""},
		{"remove array element", `[{"op":"remove","path":"/a/b/0"}]`, `{"a":{"b":[2,3]},"c":"x","d~e/f":1}`, ""},
		{"move", `[{"op":"move","from":"/c","path":"/z"}]`, `{"a":{"b":[1,2,3]},"z":"x","d~e/f":1}`, ""},
		{"copy", `[{"op":"copy","from":"/a","path":"/a2"}]`, `{"a":{"b":[1,2,3]},"a2":{"b":[1,2,3]},"c":"x","d~e/f":1}`, ""},
		{"test passes", `[{"op":"test","path":"/a/b","value":[1,2,3.0]}]`, doc, ""},
		{"test fails", `[{"op":"test","path":"/c","value":"y"}]`, "", "testing value /c failed"},
		{"replace missing", `[{"op":"replace","path":"/nope","value":1}]`, "", "does not exist"},
		{"index out of range", `[{"op":"add","path":"/a/b/7","value":1}]`, "", "out of bounds"},
		{"leading zero index", `[{"op":"remove","path":"/a/b/01"}]`, "", "invalid array index"},
		{"through a scalar", `[{"op":"add","path":"/c/x","value":1}]`, "", "scalar"},
		{"bad pointer", `[{"op":"add","path":"c","value":1}]`, "", "must start with '/'"},
		{"missing value", `[{"op":"add","path":"/x"}]`, "", "missing value"},
		{"move into itself", `[{"op":"move","from":"/a","path":"/a/x"}]`, "", "into itself"},
		{"unknown op", `[{"op":"frob","path":"/a"}]`, "", "unsupported operation"},
		{"remove root", `[{"op":"remove","path":""}]`, "", "whole document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, err := decodeJSONPatch([]byte(c.patch))
			require.NoError(t, err)
			got, err := applyJSONPatch([]byte(doc), ops)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
}

func TestContinueToken(t *testing.T) {
	tok, err := encodeContinue("/registry/configmaps/fixtures/beta\x00", "/registry/configmaps/fixtures", 127)
	require.NoError(t, err)
	// The exact token of list-page1-limit2.json.
	assert.Equal(t, "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTI3LCJzdGFydCI6Ii9iZXRhXHUwMDAwIn0", tok)
	key, rv, err := decodeContinue(tok, "/registry/configmaps/fixtures/")
	require.NoError(t, err)
	assert.Equal(t, "/registry/configmaps/fixtures/beta\x00", key)
	assert.Equal(t, int64(127), rv)

	// The rv:-1 token of error-410-expired-continue.json, without the '/'.
	key, rv, err = decodeContinue("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYmV0YVx1MDAwMCJ9", "/registry/configmaps/fixtures/")
	require.NoError(t, err)
	assert.Equal(t, "/registry/configmaps/fixtures/beta\x00", key)
	assert.Equal(t, int64(-1), rv)

	_, err = encodeContinue("/other/x", "/registry/configmaps", 1)
	assert.Error(t, err)
	for _, bad := range []string{"!!", "e30", "eyJ2IjoieCJ9", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJ4In0",
		"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ", "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIvLi4veCJ9"} {
		_, _, err := decodeContinue(bad, "/p/")
		assert.ErrorIs(t, err, errInvalidContinue, bad)
	}
}

func TestNameValidation(t *testing.T) {
	assert.Empty(t, validateDNS1123Subdomain("a.b-c", false))
	assert.NotEmpty(t, validateDNS1123Subdomain("A", false))
	assert.Equal(t, []string{"must be no more than 253 characters"}, validateDNS1123Subdomain(string(make([]byte, 254)), false)[:1])
	assert.Empty(t, validateDNS1123Subdomain("demo-", true), "a generateName may end in '-'")
	assert.NotEmpty(t, validateDNS1123Subdomain("demo-", false))
	assert.Equal(t, []string{"must not contain dots"}, validateDNS1123Label("a.b", false))
	assert.NotEmpty(t, validateDNS1035Label("1a", false))
	assert.Empty(t, validateDNS1035Label("a1", false))
	assert.Empty(t, api.IsQualifiedName("example.com/My_name.x"))
	assert.NotEmpty(t, api.IsQualifiedName("a/b/c"))
	assert.NotEmpty(t, api.IsQualifiedName("/b"))
	assert.NotEmpty(t, api.IsQualifiedName("Bad_Prefix/b"))
	assert.Empty(t, api.IsValidLabelValue(""))
	assert.NotEmpty(t, api.IsValidLabelValue("-x"))
	for range 100 {
		n := generateName("x-")
		assert.Len(t, n, 7)
		assert.Empty(t, validateDNS1123Subdomain(n, false))
	}
	assert.Len(t, generateName(string(make([]byte, 100))), maxGeneratedNameLength)
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-5 * time.Second: "<invalid>", -time.Second: "0s", 0: "0s", 11 * time.Second: "11s", 119 * time.Second: "119s",
		5*time.Minute + 3*time.Second: "5m3s", 5 * time.Minute: "5m", 90 * time.Minute: "90m", 3*time.Hour + 20*time.Minute: "3h20m",
		10 * time.Hour: "10h", 50 * time.Hour: "2d2h", 48 * time.Hour: "2d", 30 * 24 * time.Hour: "30d",
		3 * 365 * 24 * time.Hour: "3y", (3*365 + 4) * 24 * time.Hour: "3y4d", 9 * 365 * 24 * time.Hour: "9y",
	} {
		assert.Equal(t, want, humanDuration(d), "%s", d)
	}
	assert.Equal(t, "<unknown>", age(time.Time{}, time.Now()))
}

func TestQueryParsing(t *testing.T) {
	q, _ := url.ParseQuery("a=&b=0&c=false&d=FALSE&e=yes&f=1")
	for key, want := range map[string]bool{"a": true, "b": false, "c": false, "d": false, "e": true, "f": true, "missing": false} {
		got, _ := queryBool(q, key)
		assert.Equal(t, want, got, key)
	}
	for sel, want := range map[string]string{"metadata.name=x": "x", "a=b, metadata.name==y": "y", "metadata.name!=x": "", "metadata.namespace=x": ""} {
		got, _ := exactNameTerm(sel)
		assert.Equal(t, want, got, sel)
	}
	p, err := parseListParams(url.Values{}, true, "n")
	require.NoError(t, err)
	assert.Equal(t, "metadata.name=n", p.field.String())
}

func TestNegotiation(t *testing.T) {
	cases := map[string]struct {
		table string
		fails bool
	}{
		"":                 {},
		"*/*":              {},
		"application/json": {},
		"application/vnd.kubernetes.protobuf,application/json":                                  {},
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json":                         {table: "meta.k8s.io/v1"},
		"application/json;as=Table;v=v1beta1;g=meta.k8s.io":                                     {table: "meta.k8s.io/v1beta1"},
		"application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json":     {},
		"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json": {},
		"application/vnd.kubernetes.protobuf":                                                   {fails: true},
		"application/yaml":                                                                      {fails: true},
		"application/json;as=Table;v=v2;g=meta.k8s.io":                                          {fails: true},
	}
	for accept, c := range cases {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Accept", accept)
		out, err := negotiateOutput(r)
		if c.fails {
			assert.Error(t, err, accept)
			continue
		}
		require.NoError(t, err, accept)
		assert.Equal(t, c.table, out.table, accept)
	}
	ws, _ := http.NewRequest("GET", "/", nil)
	ws.Header.Set("Upgrade", "WebSocket")
	ws.Header.Set("Connection", "keep-alive, Upgrade")
	assert.True(t, isWebSocket(ws))
	ws.Header.Set("Connection", "keep-alive")
	assert.False(t, isWebSocket(ws))
}

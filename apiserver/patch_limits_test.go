package apiserver

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"listwatch/api"
	"listwatch/apiserver/patch"
)

// doublingPatch is the patch of docs/limits.md: an array, then n copies of it
// into itself. With 50 copies (2.4 KB) it once took the server to 5.6 GB;
// with 22 (1.1 KB) it stored a 16 MB object.
func doublingPatch(n int) string {
	var b strings.Builder
	b.WriteString(`[{"op":"add","path":"/zz","value":[0]}`)
	for range n {
		b.WriteString(`,{"op":"copy","from":"/zz","path":"/zz/-"}`)
	}
	return b.String() + "]"
}

func TestHostilePatchesAreRefused(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createConfigMap("default", "target", nil, map[string]string{"k": "v"})
	ts.createConfigMap("default", "big", nil, nil)
	path := "/api/v1/namespaces/default/configmaps/target"
	jsonPatch := map[string]string{"Content-Type": patch.JSONPatchType}
	mergePatch := map[string]string{"Content-Type": patch.MergePatchType}
	tests := []struct {
		name    string
		r       req
		code    int
		message string
	}{
		{"50 doubling copies", req{method: "PATCH", path: path, body: doublingPatch(50), header: jsonPatch}, 422, "the server rejected our request due to an error in our request"},
		{"22 doubling copies", req{method: "PATCH", path: path, body: doublingPatch(22), header: jsonPatch}, 422, "the server rejected our request due to an error in our request"},
		// Each body is within the limit; the second makes the object pass it.
		{"a merge patch to a 2 MiB object", req{method: "PATCH", path: "/api/v1/namespaces/default/configmaps/big", header: mergePatch,
			body: `{"data":{"a":"` + strings.Repeat("x", 2<<20) + `"}}`}, 200, ""},
		{"a merge patch to a 4 MiB object", req{method: "PATCH", path: "/api/v1/namespaces/default/configmaps/big", header: mergePatch,
			body: `{"data":{"b":"` + strings.Repeat("y", 2<<20) + `"}}`}, 413, "the patched object is"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if testing.Short() && tt.name == "50 doubling copies" {
				// Refused at the same copy as 22 doubling copies, and as
				// costly: seconds under -race.
				t.Skip("-short: the same refusal as 22 doubling copies; the full run executes it")
			}
			if testing.Short() && strings.HasPrefix(tt.name, "a merge patch to a") {
				// Megabytes merged and stored under -race: the costliest
				// cases of the package. apiserver/patch's TestLimits checks
				// the same size limit on the patch alone.
				t.Skip("-short: megabytes under -race; apiserver/patch's TestLimits checks the limit, and the full run executes it")
			}
			resp := ts.do(tt.r)
			assert.Equal(t, tt.code, resp.code)
			if tt.message != "" {
				assert.Contains(t, resp.status(t).Message, tt.message)
			}
		})
	}
	// Nothing was stored: the object is as it was.
	obj := ts.get(path).object(t)
	assert.JSONEq(t, `{"k":"v"}`, string(obj.Get("data")))
	assert.Nil(t, obj.Get("zz"))

	// An ordinary JSON patch still applies.
	ts.do(req{method: "PATCH", path: path, body: `[{"op":"add","path":"/data/j","value":"1"}]`, header: jsonPatch}).mustCode(t, http.StatusOK)
	if !testing.Short() { // the doubling patch again, seconds under -race
		assert.Equal(t, api.StatusFailure, ts.do(req{method: "PATCH", path: path, body: doublingPatch(50), header: jsonPatch}).status(t).Status)
	}
}

package apiserver

import (
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

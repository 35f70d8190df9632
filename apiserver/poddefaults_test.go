package apiserver

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tokenVolumeRE is the service account token volume's generated name.
var tokenVolumeRE = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)

// specAndStatus is an object's spec and status, with the token volume's
// random suffix set aside.
func specAndStatus(t *testing.T, body []byte) (spec, status string) {
	t.Helper()
	var o struct{ Spec, Status json.RawMessage }
	require.NoError(t, json.Unmarshal(body, &o), "body: %s", body)
	blank := func(raw json.RawMessage) string {
		return tokenVolumeRE.ReplaceAllString(string(raw), "kube-api-access-xxxxx")
	}
	return blank(o.Spec), blank(o.Status)
}

// A Pod created with only a name, an image and a command comes back as
// kube-apiserver 1.37.2 stored it: its spec's defaults, the service
// account, its token mounted, the priority, the default tolerations, and
// status Pending with QoS class BestEffort (pod-delete-bound-graceful-200
// .json answered the DELETE of the Pod script.json created with this
// body, in a namespace with a default ServiceAccount).
func TestPodDefaultsAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/serviceaccounts",
		body: `{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"name":"default"}}`}).mustCode(t, http.StatusCreated)
	created := ts.do(req{method: "POST", path: pods2, body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bound-pod"},` +
		`"spec":{"containers":[{"name":"main","image":"busybox:1.36","command":["sleep","3600"]}],"nodeName":"fake-node"}}`}).
		mustCode(t, http.StatusCreated)
	gotSpec, gotStatus := specAndStatus(t, created)
	wantSpec, wantStatus := specAndStatus(t, fixture(t, "pod-delete-bound-graceful-200.json"))
	assert.Equal(t, wantSpec, gotSpec, "in the real server's field order too")
	assert.Equal(t, wantStatus, gotStatus)

	// Written back as read, nothing changes: no new generation.
	put := ts.do(req{method: "PUT", path: pods2 + "/bound-pod", body: string(created)}).mustCode(t, http.StatusOK)
	assert.Equal(t, int64(1), response{body: put}.object(t).Metadata.Generation)
}

// Pods created as Table and watch recordings were (no default
// ServiceAccount in the test, which ours admits: podadmission.go) carry
// the same spec as the recorded ones.
func TestPodTableObjectsAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.do(req{method: "POST", path: pods2, body: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"grace-pod"},` +
		`"spec":{"containers":[{"name":"main","image":"busybox:1.36","command":["sleep","3600"]}]}}`}).mustCode(t, http.StatusCreated)
	del := ts.do(req{method: "DELETE", path: pods2 + "/grace-pod"}).mustCode(t, http.StatusOK)
	gotSpec, gotStatus := specAndStatus(t, del)
	wantSpec, wantStatus := specAndStatus(t, fixture(t, "pod-delete-unscheduled-200.json"))
	assert.Equal(t, wantSpec, gotSpec)
	assert.Equal(t, wantStatus, gotStatus)
}

// A Deployment's and a ReplicaSet's pod templates get the PodSpec
// defaults and none of a Pod's own (no enableServiceLinks, no admission),
// as recorded (kinds-deployment-create-defaults-201.json,
// kinds-replicaset-create-201.json).
func TestTemplateDefaultsAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	script := controllerKindsScript(t)
	for _, f := range []string{"kinds-deployment-create-defaults-201.json", "kinds-replicaset-create-201.json"} {
		gotSpec, _ := specAndStatus(t, ts.replay(script, f).mustCode(t, http.StatusCreated))
		wantSpec, _ := specAndStatus(t, fixture(t, f))
		assert.JSONEq(t, wantSpec, gotSpec, f)
	}
}

package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/api/protobuf"
	"listwatch/apiserver/negotiation"
)

const cronJobsPath = "/apis/batch/v1/namespaces/default/cronjobs"

// testingCronJob is the CronJob of Kubernetes' e2e "Generated clientset"
// spec (test/e2e/apimachinery/generated_clientset.go, newTestingCronJob).
const testingCronJob = `{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cronjob-1","labels":{"time":"42"}},` +
	`"spec":{"schedule":"*/1 * * * ?","concurrencyPolicy":"Allow","jobTemplate":{"spec":{"parallelism":1,"completions":1,` +
	`"template":{"spec":{"restartPolicy":"OnFailure","volumes":[{"name":"data","emptyDir":{}}],` +
	`"containers":[{"name":"c","image":"busybox:1.37","volumeMounts":[{"mountPath":"/data","name":"data"}]}]}}}}}}`

// The spec's sequence, sent as client-go sends it (protobuf): an empty
// list, a watch from its resourceVersion, a create, a list at the new
// object's resourceVersion, the watch's ADDED, a delete, an empty list.
func TestCronJobsAsTheGeneratedClientsetSpec(t *testing.T) {
	ts := startServer(t, Config{})
	list := ts.get(cronJobsPath + "?labelSelector=time%3D42").list(t)
	require.Empty(t, list.Items)
	w := ts.watch(chunked, cronJobsPath+"?watch=true&labelSelector=time%3D42&resourceVersion="+list.Metadata.ResourceVersion)
	defer w.close()

	body, err := protobuf.Default().EncodeObject("batch/v1", "CronJob", []byte(testingCronJob))
	require.NoError(t, err)
	created := ts.do(req{method: "POST", path: cronJobsPath, body: string(body),
		header: map[string]string{"Content-Type": negotiation.ProtobufContentType}}).mustCode(t, http.StatusCreated)
	var obj api.Object
	require.NoError(t, json.Unmarshal(created, &obj))
	assert.Equal(t, int64(1), obj.Metadata.Generation)

	list = ts.get(cronJobsPath + "?labelSelector=time%3D42&resourceVersion=" + obj.Metadata.ResourceVersion).list(t)
	require.Len(t, list.Items, 1)
	ev := w.next()
	assert.Equal(t, api.Added, ev.Type)
	assert.Equal(t, "cronjob-1", ev.Object.Metadata.Name)

	ts.do(req{method: "DELETE", path: cronJobsPath + "/cronjob-1", body: `{"propagationPolicy":"Background"}`}).mustCode(t, http.StatusOK)
	require.Empty(t, ts.get(cronJobsPath+"?labelSelector=time%3D42").list(t).Items)
}

// A CronJob gets SetDefaults_CronJob's defaults and its pod template's,
// and an empty status; its job template's JobSpec gets none.
func TestCronJobDefaults(t *testing.T) {
	ts := startServer(t, Config{})
	obj := ts.do(req{method: "POST", path: cronJobsPath, body: `{"metadata":{"name":"d"},"spec":{"schedule":"@hourly",` +
		`"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}},"status":{"active":[{}]}}`}).object(t)
	var spec map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(obj.Get("spec"), &spec))
	assert.Equal(t, `"Allow"`, string(spec["concurrencyPolicy"]))
	assert.Equal(t, `false`, string(spec["suspend"]))
	assert.Equal(t, `3`, string(spec["successfulJobsHistoryLimit"]))
	assert.Equal(t, `1`, string(spec["failedJobsHistoryLimit"]))
	assert.Equal(t, []string{"schedule", "concurrencyPolicy", "suspend", "jobTemplate", "successfulJobsHistoryLimit", "failedJobsHistoryLimit"}, mustMembers(t, obj.Get("spec")),
		"the defaults sit where the Go struct has them")
	assert.JSONEq(t, `{"metadata":{},"spec":{"template":{"metadata":{},"spec":{"restartPolicy":"Never",`+
		`"containers":[{"name":"c","image":"busybox","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],`+
		`"terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}}}}`,
		string(spec["jobTemplate"]))
	assert.JSONEq(t, `{}`, string(obj.Get("status")))
}

// What validateCronJobSpec refuses, as a 422 naming each field.
func TestCronJobValidation(t *testing.T) {
	ts := startServer(t, Config{})
	st := ts.do(req{method: "POST", path: cronJobsPath, body: `{"metadata":{"name":"v"},"spec":{"concurrencyPolicy":"Sometimes",` +
		`"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}}}`}).status(t)
	assert.Equal(t, int32(http.StatusUnprocessableEntity), st.Code)
	var fields []string
	for _, c := range st.Details.Causes {
		fields = append(fields, c.Field)
	}
	assert.ElementsMatch(t, []string{"spec.schedule", "spec.concurrencyPolicy", "spec.jobTemplate.spec.template.spec.restartPolicy"}, fields, "%s", st.Message)
}

// batch/v1 is in discovery with cronjobs, its short name and category.
func TestCronJobsDiscovery(t *testing.T) {
	ts := startServer(t, Config{})
	var doc struct {
		GroupVersion string `json:"groupVersion"`
		Resources    []struct {
			Name       string   `json:"name"`
			Kind       string   `json:"kind"`
			ShortNames []string `json:"shortNames"`
			Categories []string `json:"categories"`
		} `json:"resources"`
	}
	require.NoError(t, json.Unmarshal(ts.get("/apis/batch/v1").mustCode(t, http.StatusOK), &doc))
	require.NotEmpty(t, doc.Resources)
	assert.Equal(t, "cronjobs", doc.Resources[0].Name)
	assert.Equal(t, "CronJob", doc.Resources[0].Kind)
	assert.Equal(t, []string{"cj"}, doc.Resources[0].ShortNames)
	assert.Equal(t, []string{"all"}, doc.Resources[0].Categories)
}

// mustMembers lists a JSON object's member names in order.
func mustMembers(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		names = append(names, tok.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return names
}

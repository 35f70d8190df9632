package protobuf_test

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
	"listwatch/internal/fixtures"
)

// roundTrip decodes a complete protobuf body to JSON and encodes the JSON
// again; the bytes must come back unchanged.
func roundTrip(t *testing.T, body []byte) (protobuf.Envelope, []byte) {
	t.Helper()
	s := protobuf.Default()
	env, js, err := s.DecodeObject(body, "", "")
	require.NoError(t, err)
	require.True(t, json.Valid(js), "%s", js)
	again, err := s.EncodeObject(env.APIVersion, env.Kind, js)
	require.NoError(t, err)
	require.Equal(t, body, again, "JSON was %s", js)
	return env, js
}

// The real server's GET and LIST answers: protobuf -> JSON -> protobuf
// gives back the recorded bytes, and the JSON is what the same server
// writes for the object.
func TestServerResponsesRoundTripByteForByte(t *testing.T) {
	for _, name := range []string{"protobuf-get-configmap.pb", "protobuf-get-deployment.pb", "protobuf-list-configmaps.pb"} {
		t.Run(name, func(t *testing.T) {
			roundTrip(t, fixtures.Read(t, name))
		})
	}
}

func TestConfigMapJSONIsTheServersJSON(t *testing.T) {
	_, js := roundTrip(t, fixtures.Read(t, "protobuf-get-configmap.pb"))
	// uid, resourceVersion and the times are this recording's; the rest
	// is what kube-apiserver writes for pb-cm, in its field order.
	v := regexp.MustCompile(`"uid":"([^"]+)","resourceVersion":"(\d+)","creationTimestamp":"([^"]+)".*"time":"([^"]+)"`).FindStringSubmatch(string(js))
	require.NotNil(t, v, "%s", js)
	want := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"pb-cm","namespace":"fixtures2",` +
		`"uid":"` + v[1] + `","resourceVersion":"` + v[2] + `","creationTimestamp":"` + v[3] + `",` +
		`"labels":{"app":"pb"},"managedFields":[{"manager":"fixture-recorder","operation":"Update","apiVersion":"v1",` +
		`"time":"` + v[4] + `","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:a":{},"f:b":{}},` +
		`"f:metadata":{"f:labels":{".":{},"f:app":{}}}}}]},"data":{"a":"1","b":"two"}}`
	assert.JSONEq(t, want, string(js))
	assert.Equal(t, want, string(js), "field order and encoding as kube-apiserver writes them")
}

func TestDeploymentJSON(t *testing.T) {
	env, js := roundTrip(t, fixtures.Read(t, "protobuf-get-deployment.pb"))
	assert.Equal(t, "apps/v1", env.APIVersion)
	assert.Equal(t, "Deployment", env.Kind)
	var d struct {
		Spec struct {
			Replicas int64
			Strategy struct {
				RollingUpdate struct{ MaxUnavailable, MaxSurge any }
			}
			Template struct {
				Metadata struct{ CreationTimestamp any }
			}
		}
		Status map[string]any
	}
	require.NoError(t, json.Unmarshal(js, &d))
	assert.Equal(t, int64(2), d.Spec.Replicas)
	// IntOrString: "25%" strings; Time zero: null; empty status: {}.
	assert.Equal(t, "25%", d.Spec.Strategy.RollingUpdate.MaxUnavailable)
	assert.Equal(t, "25%", d.Spec.Strategy.RollingUpdate.MaxSurge)
	assert.Nil(t, d.Spec.Template.Metadata.CreationTimestamp)
	assert.Empty(t, d.Status)
	assert.Contains(t, string(js), `"status":{}`)
}

// The request bodies client-go sends: create Pod/Service/Deployment and the
// DeleteOptions of a Delete.
func TestClientGoRequestBodiesRoundTrip(t *testing.T) {
	for _, name := range fixtures.Names(t, "protobuf-request-*.pb") {
		if name == "protobuf-request-create-pod.pb" {
			continue // TestOlderClientGoPodBody
		}
		t.Run(name, func(t *testing.T) {
			env, js := roundTrip(t, fixtures.Read(t, name))
			assert.NotEmpty(t, env.Kind)
			t.Logf("%s %s: %s", env.APIVersion, env.Kind, js)
		})
	}
}

func TestDeleteOptionsBody(t *testing.T) {
	env, js := roundTrip(t, fixtures.Read(t, "protobuf-request-delete-pod-deleteoptions.pb"))
	assert.Equal(t, "v1", env.APIVersion, "the client's group-version, not meta.k8s.io/v1")
	assert.Equal(t, "DeleteOptions", env.Kind)
	assert.Equal(t, `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"propagationPolicy":"Background"}`, string(js))
}

// The recorded protobuf watch: every frame decodes, and re-encoding every
// event from its JSON gives back every byte.
func TestWatchStreamByteForByte(t *testing.T) {
	s := protobuf.Default()
	body := fixtures.Read(t, "protobuf-watch-configmaps.pb")
	r := bytes.NewReader(body)
	var again []byte
	var types []string
	for {
		ev, err := s.ReadWatchFrame(r)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		types = append(types, ev.Type)
		env, js := roundTrip(t, ev.Object)
		obj, err := s.EncodeObject(env.APIVersion, env.Kind, js)
		require.NoError(t, err)
		again = s.AppendWatchFrame(again, ev.Type, obj)
		if ev.Type == "BOOKMARK" {
			assert.Regexp(t, `^\{"kind":"ConfigMap","apiVersion":"v1","metadata":\{"resourceVersion":"\d+"\}\}$`, string(js))
		}
	}
	// The three writes' events in order; the server's bookmarks come
	// where its timers put them.
	changes := slices.DeleteFunc(slices.Clone(types), func(typ string) bool { return typ == "BOOKMARK" })
	assert.Equal(t, []string{"ADDED", "MODIFIED", "DELETED"}, changes)
	assert.Contains(t, types, "BOOKMARK")
	assert.Equal(t, body, again)
}

// client-go v0.32 sends one PodStatus field fewer than v0.37, whose
// generated.proto the schema is built from: the body decodes to the same
// JSON, and encoding that JSON gives v0.37.2's bytes exactly.
func TestOlderClientGoPodBody(t *testing.T) {
	s := protobuf.Default()
	_, old, err := s.DecodeObject(fixtures.Read(t, "protobuf-request-create-pod.pb"), "", "")
	require.NoError(t, err)
	newer := fixtures.Read(t, "protobuf-request-create-pod-client-go-v0.37.2.pb")
	_, js := roundTrip(t, newer)
	assert.Equal(t, string(js), string(old))
	again, err := s.EncodeObject("v1", "Pod", old)
	require.NoError(t, err)
	assert.Equal(t, newer, again)
}

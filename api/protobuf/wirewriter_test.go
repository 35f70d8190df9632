package protobuf

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/fixtures"
)

// sameAsDynamic checks that the wire writer and the plain dynamicpb way
// agree on js: the same bytes, or the same error.
func sameAsDynamic(t *testing.T, s *Schema, apiVersion, kind string, js []byte, fuzzing bool) {
	t.Helper()
	m, err := s.kind(apiVersion, kind)
	require.NoError(t, err)
	got, err := appendMarshal(nil, m, js)
	if !json.Valid(js) {
		// The plain way's json.Decoder reads the first value and can miss
		// trailing garbage ("{}}0"); the writer refuses anything invalid.
		require.Error(t, err, "%q is not JSON", js)
		return
	}
	want, wantErr := marshalDynamic(m, js)
	if wantErr != nil {
		require.Error(t, err, "%s %s: the plain way says %v for %s", apiVersion, kind, wantErr, js)
		if !fuzzing {
			// The plain way fills maps in Go's random map order, so with
			// two bad map values either can be the one named: the fuzz
			// target's inputs only need to fail both ways.
			assert.Equal(t, wantErr.Error(), err.Error(), "%s", js)
		}
		return
	}
	require.NoError(t, err, "%s %s: %s", apiVersion, kind, js)
	assert.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got), "%s %s: %s", apiVersion, kind, js)
}

// Every object, list and Status recorded from the real server, of every
// kind the schema knows, is written to the same bytes both ways.
func TestWireWriterOnEveryRecording(t *testing.T) {
	s := Default()
	checked := 0
	for _, name := range fixtures.Names(t, "*.json") {
		body := fixtures.Read(t, name)
		var tm struct{ APIVersion, Kind string }
		if json.Unmarshal(body, &tm) != nil || !s.Knows(tm.APIVersion, tm.Kind) {
			continue
		}
		sameAsDynamic(t, s, tm.APIVersion, tm.Kind, body, false)
		checked++
	}
	for _, name := range fixtures.Names(t, "*protobuf-*.pb") {
		env, js, err := s.DecodeObject(fixtures.Read(t, name), "", "")
		if err != nil {
			continue // request bodies that are not objects
		}
		sameAsDynamic(t, s, env.APIVersion, env.Kind, js, false)
		checked++
	}
	assert.Greater(t, checked, 50, "recordings checked")
}

// The JSON the server never writes but a client may send: every corner
// of encoding/json's rules and of the Kubernetes types' own forms.
func TestWireWriterCorners(t *testing.T) {
	s := Default()
	cm := func(js string) { t.Helper(); sameAsDynamic(t, s, "v1", "ConfigMap", []byte(js), false) }
	pod := func(js string) { t.Helper(); sameAsDynamic(t, s, "v1", "Pod", []byte(js), false) }
	for _, js := range []string{
		`{}`, ` { } `, `null`, `[]`, `"x"`, `{"metadata":null}`, `{"metadata":{}}`, `{"data":{}}`,
		`{"data":{"b":"2","a":"1","b":"3"}}`, `{"data":{"k":null}}`, `{"data":{"\u006b":"v","k\ud800":"w"}}`,
		`{"data":{"k":"\u003c\u00e9\ud83d\ude00\" \\ \/ \b\f\n\r\t"}}`, "{\"data\":{\"k\":\"\xff\xfe\"}}",
		`{"data":5}`, `{"data":{"k":5}}`, `{"data":[]}`, `{"binaryData":{"b":"AAE="}}`, `{"binaryData":{"b":"A"}}`,
		`{"binaryData":{"b":""}}`, `{"binaryData":{"b":null}}`, `{"binaryData":{"b":"QU\/B"}}`,
		`{"immutable":true}`, `{"immutable":false}`, `{"immutable":"yes"}`, `{"immutable":null}`,
		`{"metadata":{"name":"x","name":"y"}}`, `{"metadata":{"generation":-1}}`, `{"metadata":{"generation":9223372036854775807}}`,
		`{"metadata":{"generation":9223372036854775808}}`, `{"metadata":{"generation":-9223372036854775808}}`,
		`{"metadata":{"generation":1.0}}`, `{"metadata":{"generation":1e3}}`, `{"metadata":{"generation":"1"}}`, `{"metadata":{"generation":-0}}`,
		`{"metadata":{"deletionGracePeriodSeconds":30}}`, `{"metadata":{"deletionGracePeriodSeconds":null}}`,
		`{"metadata":{"creationTimestamp":"2026-11-26T14:00:00Z"}}`, `{"metadata":{"creationTimestamp":"2026-11-26T14:00:00.5Z"}}`,
		`{"metadata":{"creationTimestamp":"2026-11-26T14:00:00+02:00"}}`, `{"metadata":{"creationTimestamp":"2026-02-30T14:00:00Z"}}`,
		`{"metadata":{"creationTimestamp":"2026-11-26T24:00:00Z"}}`, `{"metadata":{"creationTimestamp":"0001-01-01T00:00:00Z"}}`,
		`{"metadata":{"creationTimestamp":"1969-12-31T23:59:59Z"}}`, `{"metadata":{"creationTimestamp":5}}`, `{"metadata":{"creationTimestamp":"x"}}`,
		`{"metadata":{"labels":{"a":"b"},"annotations":{"z":"","a":"{\"k\":\"v\"}"},"finalizers":["a",null,"b"]}}`,
		`{"metadata":{"finalizers":"a"}}`, `{"metadata":{"finalizers":[1]}}`, `{"metadata":{"ownerReferences":[null,{"name":"o","controller":true}]}}`,
		`{"metadata":{"managedFields":[{"fieldsV1":{"f:data":{}},"time":"2026-11-26T14:00:00Z"}]}}`, `{"metadata":{"managedFields":[{"fieldsV1":[1, 2]}]}}`,
		`{"metadata":{"name":"` + strings.Repeat("n", 200) + `"},"data":{"k":"` + strings.Repeat("v", 20000) + `"}}`,
		`{"kind":"Pod","apiVersion":"v9","unknown":{"a":[1,{"b":null}]},"data":{"k":"v"}}`,
	} {
		cm(js)
	}
	for _, js := range []string{
		`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{"limits":{"cpu":"100m","memory":1024},"requests":{"cpu":0.5}}}]}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":""}}}]}}`, `{"spec":{"containers":[{"resources":{"limits":{"cpu":true}}}]}}`,
		`{"spec":{"containers":[{"resources":{"limits":{"cpu":null}}}]}}`, `{"spec":{"containers":[null]}}`,
		`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":"http","path":"/"},"periodSeconds":3}}]}}`,
		`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":8080}}}]}}`, `{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":2147483648}}}]}}`,
		`{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":-1}}}]}}`, `{"spec":{"containers":[{"livenessProbe":{"httpGet":{"port":[]}}}]}}`,
		`{"spec":{"volumes":[{"name":"v","configMap":{"name":"c","defaultMode":420}},{"name":"e","emptyDir":{"sizeLimit":"1Gi"}}]}}`,
		`{"spec":{"securityContext":{"runAsUser":-5},"activeDeadlineSeconds":5,"terminationGracePeriodSeconds":0}}`,
		`{"spec":{"overhead":{"cpu":"1"},"nodeSelector":{"b":"1","a":"2"}},"status":{"startTime":"2026-11-26T14:00:00Z","podIP":"10.0.0.1"}}`,
		`{"spec":{"containers":[{"name":"c","env":[{"name":"A","value":"1","valueFrom":null}]}]}}`,
	} {
		pod(js)
	}
	sameAsDynamic(t, s, "events.k8s.io/v1", "Event", []byte(`{"eventTime":"2026-11-23T22:21:36.123456Z","series":{"count":2,"lastObservedTime":"2026-11-23T22:21:36.000001Z"}}`), false)
	sameAsDynamic(t, s, "events.k8s.io/v1", "Event", []byte(`{"eventTime":"2026-11-23T22:21:36Z"}`), false)
	sameAsDynamic(t, s, "events.k8s.io/v1", "Event", []byte(`{"eventTime":"x"}`), false)
	sameAsDynamic(t, s, "v1", "DeleteOptions", []byte(`{"gracePeriodSeconds":0,"preconditions":{"uid":"u"},"dryRun":["All"]}`), false)
	sameAsDynamic(t, s, "v1", "Status", []byte(`{"status":"Failure","code":404,"details":{"causes":[{"field":"f"}],"retryAfterSeconds":1}}`), false)
	sameAsDynamic(t, s, "apps/v1", "Deployment", []byte(`{"spec":{"replicas":2,"strategy":{"rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},"progressDeadlineSeconds":600}}`), false)
	sameAsDynamic(t, s, "apiextensions.k8s.io/v1", "CustomResourceDefinition", []byte(`{"spec":{"group":"g","versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object",`+
		`"properties":{"a":{"type":"array","items":{"type":"string"},"default":["x"]},"b":{"additionalProperties":true},"c":{"additionalProperties":{"type":"integer","maximum":5.5}},`+
		`"d":{"items":[{"type":"string"}]},"e":{"dependencies":{"x":["y"],"z":{"type":"object"}}},"f":{"additionalProperties":"no"}}}}}]}}`), false)
}

// The writer allocates next to nothing: a ConfigMap is transcoded without
// building a message.
func TestWireWriterAllocations(t *testing.T) {
	s := Default()
	_, js, err := s.DecodeObject(fixtures.Read(t, "protobuf-get-configmap.pb"), "", "")
	require.NoError(t, err)
	m, err := s.kind("v1", "ConfigMap")
	require.NoError(t, err)
	dst := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := appendMarshal(dst[:0], m, js); err != nil {
			t.Fatal(err)
		}
	})
	// A handful (a few more under -race); the plain way needs hundreds.
	assert.LessOrEqual(t, allocs, 20.0)
}

// FuzzWireWriter feeds arbitrary JSON to both ways of writing protobuf:
// they must agree, byte for byte or error for error.
func FuzzWireWriter(f *testing.F) {
	s := Default()
	kinds := [][2]string{
		{"v1", "ConfigMap"}, {"v1", "Secret"}, {"v1", "Pod"}, {"v1", "Service"}, {"events.k8s.io/v1", "Event"},
		{"apps/v1", "Deployment"}, {"v1", "ConfigMapList"}, {"v1", "Status"}, {"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
	}
	for _, name := range fixtures.Names(f, "*.json") {
		body := fixtures.Read(f, name)
		var tm struct{ APIVersion, Kind string }
		if json.Unmarshal(body, &tm) == nil {
			for i, k := range kinds {
				if k == [2]string{tm.APIVersion, tm.Kind} {
					f.Add(uint8(i), body)
				}
			}
		}
	}
	f.Add(uint8(2), []byte(`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":"http"}},"resources":{"limits":{"cpu":"1"}}}]}}`))
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		kind := kinds[int(k)%len(kinds)]
		sameAsDynamic(t, s, kind[0], kind[1], data, true)
	})
}

// The schema's pooled stacks are shared by concurrent requests: objects
// transcoded at once come out as they do one at a time.
func TestWireStacksConcurrently(t *testing.T) {
	s := Default()
	body := fixtures.Read(t, "protobuf-get-deployment.pb")
	env, js, err := s.DecodeObject(body, "", "")
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			for range 200 {
				pb, err := s.EncodeObject(env.APIVersion, env.Kind, js)
				if err == nil && !bytes.Equal(pb, body) {
					err = errors.New("encoded differently")
				}
				var again []byte
				if err == nil {
					_, again, err = s.DecodeObject(body, "", "")
				}
				if err == nil && !bytes.Equal(again, js) {
					err = errors.New("decoded differently")
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

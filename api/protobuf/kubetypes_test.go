package protobuf_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
)

// jsonRoundTrip encodes JSON to protobuf and back.
func jsonRoundTrip(t *testing.T, apiVersion, kind, in string) string {
	t.Helper()
	s := protobuf.Default()
	raw, err := s.Marshal(apiVersion, kind, []byte(in))
	require.NoError(t, err)
	out, err := s.Unmarshal(apiVersion, kind, raw)
	require.NoError(t, err)
	return string(out)
}

// The Kubernetes types with their own JSON form, each through protobuf and
// back: what comes out is what kube-apiserver would write.
func TestKubernetesJSONMappings(t *testing.T) {
	const cmMeta = `"metadata":{"name":"x"}`
	tests := []struct {
		name, apiVersion, kind, in, want string
	}{
		{"Time: RFC 3339 seconds in UTC", "v1", "ConfigMap",
			`{"metadata":{"name":"x","creationTimestamp":"2026-11-23T23:21:36+01:00"}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","creationTimestamp":"2026-11-23T22:21:36Z"}}`},
		{"Time: a zero creationTimestamp absent (omitzero), a nil pointer Time absent", "v1", "ConfigMap",
			`{"metadata":{"name":"x"}}`,
			`{"kind":"ConfigMap","apiVersion":"v1",` + cmMeta + `}`},
		{"Time pointer and int64 pointer as numbers", "v1", "ConfigMap",
			`{"metadata":{"name":"x","deletionTimestamp":"2026-01-02T03:04:05Z","deletionGracePeriodSeconds":30,"generation":9007199254740993}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","generation":9007199254740993,"deletionTimestamp":"2026-01-02T03:04:05Z","deletionGracePeriodSeconds":30}}`},
		{"MicroTime: microseconds", "v1", "Event",
			`{"metadata":{"name":"e"},"involvedObject":{},"eventTime":"2026-11-23T22:21:36.123456Z"}`,
			`{"kind":"Event","apiVersion":"v1","metadata":{"name":"e"},"involvedObject":{},"source":{},"firstTimestamp":null,"lastTimestamp":null,"eventTime":"2026-11-23T22:21:36.123456Z","reportingComponent":"","reportingInstance":""}`},
		{"bytes: base64, map keys sorted", "v1", "Secret",
			`{"metadata":{"name":"x"},"data":{"z":"eg==","a":"YWJj"},"type":"Opaque"}`,
			`{"kind":"Secret","apiVersion":"v1",` + cmMeta + `,"data":{"a":"YWJj","z":"eg=="},"type":"Opaque"}`},
		{"IntOrString and Quantity", "v1", "Pod",
			`{"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"100m","memory":1024}},"readinessProbe":{"httpGet":{"port":"http"}},"livenessProbe":{"tcpSocket":{"port":8080}}}]}}`,
			`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"},"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"100m","memory":"1024"}},"livenessProbe":{"tcpSocket":{"port":8080}},"readinessProbe":{"httpGet":{"port":"http"}}}]},"status":{}}`},
		{"FieldsV1: raw JSON kept", "v1", "ConfigMap",
			`{"metadata":{"name":"x","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]}}`,
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}]}}`},
		{"inline structs: volumeSource, probe handler", "v1", "Pod",
			`{"metadata":{"name":"x"},"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}],"containers":null}}`,
			`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"},"spec":{"volumes":[{"name":"v","configMap":{"name":"cm"}}],"containers":null},"status":{}}`},
		{"Status with details and code", "v1", "Status",
			`{"status":"Failure","message":"nope","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}`,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"nope","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}`},
		{"unknown fields and kind in the body are dropped", "v1", "ConfigMap",
			`{"kind":"Other","x":1,"metadata":{"name":"x","y":[1]}}`,
			`{"kind":"ConfigMap","apiVersion":"v1",` + cmMeta + `}`},
		{"HTML-safe escaping as encoding/json", "v1", "ConfigMap",
			`{"metadata":{"name":"x"},"data":{"k":"<a&b>"}}`,
			`{"kind":"ConfigMap","apiVersion":"v1",` + cmMeta + `,"data":{"k":"\u003ca\u0026b\u003e"}}`},
		{"apps/v1 Deployment: int32 pointer, selector", "apps/v1", "Deployment",
			`{"metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`,
			`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{}}]}},"strategy":{}},"status":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, jsonRoundTrip(t, tt.apiVersion, tt.kind, tt.in))
			// And the output is a fixed point.
			assert.Equal(t, tt.want, jsonRoundTrip(t, tt.apiVersion, tt.kind, tt.want))
		})
	}
}

// Values of the wrong JSON type are errors naming the field, never a
// silent zero: a typed client could not decode what would be stored.
func TestWrongTypesAreFieldErrors(t *testing.T) {
	tests := []struct{ in, path string }{
		{`{"data":{"k":1}}`, ".data.k"},
		{`{"data":[1,2]}`, ".data"},
		{`{"binaryData":{"k":"not base64!"}}`, ".binaryData.k"},
		{`{"metadata":{"finalizers":[1]}}`, ".metadata.finalizers[0]"},
		{`{"immutable":"yes"}`, ".immutable"},
		{`{"metadata":{"generation":1.5}}`, ".metadata.generation"},
		{`{"metadata":{"creationTimestamp":"yesterday"}}`, ".metadata.creationTimestamp"},
		{`{"metadata":"x"}`, ".metadata"},
		{`[]`, "."},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := protobuf.Default().Marshal("v1", "ConfigMap", []byte(tt.in))
			var fe *protobuf.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			assert.Equal(t, tt.path, fe.Path)
		})
	}
}

func TestUnknownKindAndMalformedProtobuf(t *testing.T) {
	s := protobuf.Default()
	_, err := s.Marshal("v1", "Widget", []byte(`{}`))
	assert.ErrorIs(t, err, protobuf.ErrUnknownKind)
	assert.False(t, s.Knows("example.com/v1", "Widget"))
	assert.False(t, s.Knows("apps.example.com/v1", "Deployment"), "a custom resource's group is not a built-in one")
	assert.False(t, s.Knows("example.com/v1", "Status"), "nor are the meta kinds in it")
	assert.True(t, s.Knows("v1", "DeleteOptions"), "meta kinds come with every group version")
	assert.True(t, s.Knows("apps/v1", "DeploymentList"))

	_, err = s.Unmarshal("v1", "ConfigMap", []byte{0x0a, 0x05, 0x01})
	assert.Error(t, err, "truncated message")
	_, err = s.Unmarshal("v1", "ConfigMap", []byte{0x22, 0x03, 'y', 'e', 's'})
	assert.ErrorContains(t, err, "ConfigMap.immutable: wrong wire type 2", "a string where a bool belongs")
	_, err = s.Unmarshal("v1", "ConfigMap", []byte{0x0a, 0x02, 0x08, 0x07})
	assert.ErrorContains(t, err, "ObjectMeta.name: wrong wire type 0", "nested messages are checked too")
	js, err := s.Unmarshal("v1", "ConfigMap", []byte{0xa0, 0x1f, 0x01})
	assert.NoError(t, err, "an unknown field number is skipped")
	assert.Equal(t, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}`, string(js))
	_, _, err = s.DecodeObject([]byte(`{"kind":"ConfigMap"}`), "", "")
	assert.ErrorIs(t, err, protobuf.ErrNotProtobuf)
	_, _, err = s.DecodeObject(protobuf.Magic, "", "")
	assert.ErrorIs(t, err, protobuf.ErrEmptyProtobuf)
}

// An envelope without typeMeta takes the path's kind.
func TestDecodeObjectDefaults(t *testing.T) {
	s := protobuf.Default()
	raw, err := s.Marshal("v1", "Namespace", []byte(`{"metadata":{"name":"ns"}}`))
	require.NoError(t, err)
	env, js, err := s.DecodeObject(s.AppendEnvelope(nil, "", "", raw), "v1", "Namespace")
	require.NoError(t, err)
	assert.Equal(t, "Namespace", env.Kind)
	assert.Equal(t, `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ns"},"spec":{},"status":{}}`, string(js))
}

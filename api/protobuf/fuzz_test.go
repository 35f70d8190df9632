package protobuf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
	"listwatch/internal/fixtures"
)

// fuzzKinds are the kinds the fuzz targets transcode, picked by one byte.
var fuzzKinds = [][2]string{
	{"v1", "ConfigMap"}, {"v1", "Secret"}, {"v1", "Pod"}, {"v1", "Service"},
	{"v1", "Namespace"}, {"v1", "Event"}, {"apps/v1", "Deployment"},
	{"v1", "ConfigMapList"}, {"v1", "DeleteOptions"}, {"v1", "Status"},
}

// FuzzTranscode feeds arbitrary protobuf and JSON to the transcoder. It
// must never panic; whatever it accepts must reach a fixed point: protobuf
// -> JSON -> protobuf -> JSON gives the same JSON, and JSON -> protobuf ->
// JSON -> protobuf the same protobuf (so what a protobuf client sends is
// stored as JSON every typed client can read back).
func FuzzTranscode(f *testing.F) {
	s := protobuf.Default()
	for _, name := range fixtures.Names(f, "protobuf-*.pb") {
		if env, err := s.DecodeEnvelope(fixtures.Read(f, name)); err == nil {
			for i, k := range fuzzKinds {
				if k[0] == env.APIVersion && k[1] == env.Kind {
					f.Add(uint8(i), env.Raw)
				}
			}
		}
	}
	f.Add(uint8(0), []byte(`{"metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v"}}`))
	f.Add(uint8(2), []byte(`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"livenessProbe":{"httpGet":{"port":"http"}},"resources":{"limits":{"cpu":"1"}}}]}}`))
	f.Add(uint8(5), []byte(`{"eventTime":"2026-11-23T22:21:36.123456Z","series":{"count":2}}`))
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		kind := fuzzKinds[int(k)%len(fuzzKinds)]
		if js, err := s.Unmarshal(kind[0], kind[1], data); err == nil {
			pb, err := s.Marshal(kind[0], kind[1], js)
			require.NoError(t, err, "our own JSON must encode: %s", js)
			js2, err := s.Unmarshal(kind[0], kind[1], pb)
			require.NoError(t, err)
			require.Equal(t, string(js), string(js2))
		}
		if pb, err := s.Marshal(kind[0], kind[1], data); err == nil {
			js, err := s.Unmarshal(kind[0], kind[1], pb)
			require.NoError(t, err, "our own protobuf must decode")
			pb2, err := s.Marshal(kind[0], kind[1], js)
			require.NoError(t, err, "our own JSON must encode: %s", js)
			require.Equal(t, pb, pb2, "JSON was %s", js)
		}
	})
}

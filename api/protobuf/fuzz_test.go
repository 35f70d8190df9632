package protobuf_test

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

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

// FuzzConform feeds arbitrary JSON to Conform, the server's typed check
// of every built-in object it stores. Whatever Conform accepts must be an
// object the typed kind can hold: the transcoder (whose schema is the Go
// structs') encodes it, decodes it back, and Conform of the result is a
// fixed point with nothing more to drop. So no stored object can fail to
// decode in a typed client.
func FuzzConform(f *testing.F) {
	s := protobuf.Default()
	for _, name := range fixtures.Names(f, "fieldvalidation-*.json") {
		f.Add(uint8(0), fixtures.Read(f, name))
	}
	f.Add(uint8(0), []byte(`{"data":{"k":1},"binaryData":{"b":"AAA="},"foo":1e999999,"immutable":"yes"}`))
	f.Add(uint8(1), []byte(`{"type":"Opaque","data":{"k":"dg=="},"stringData":{"a":"b"}}`))
	f.Add(uint8(2), []byte(`{"spec":{"containers":[{"name":"c","ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"1"}}}]},"status":{"phase":"Pending"}}`))
	f.Add(uint8(6), []byte(`{"spec":{"replicas":3,"strategy":{"rollingUpdate":{"maxSurge":"25%"}},"x":[1]}}`))
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		kind := fuzzKinds[int(k)%7] // the served kinds
		got, err := s.Conform(kind[0], kind[1], data)
		if err != nil {
			return
		}
		require.True(t, json.Valid(got.JSON), "conformed JSON must be JSON: %q", got.JSON)
		require.True(t, utf8.Valid(got.JSON), "conformed JSON must be UTF-8: %q", got.JSON)
		pb, err := s.Marshal(kind[0], kind[1], got.JSON)
		require.NoError(t, err, "a conformed object must fit the typed kind: %s", got.JSON)
		_, err = s.Unmarshal(kind[0], kind[1], pb)
		require.NoError(t, err, "and read back: %s", got.JSON)
		again, err := s.Conform(kind[0], kind[1], got.JSON)
		require.NoError(t, err)
		require.Empty(t, again.Strict, "nothing left to drop in %s", got.JSON)
		require.Equal(t, string(got.JSON), string(again.JSON))
	})
}

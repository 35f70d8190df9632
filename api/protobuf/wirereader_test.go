package protobuf

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"listwatch/internal/fixtures"
)

// readSameAsDynamic checks that Unmarshal (the wire reader, or the plain
// way when it gives up) and the plain way alone agree on raw: the same
// JSON, or the same error.
func readSameAsDynamic(t *testing.T, s *Schema, apiVersion, kind string, raw []byte, fuzzing bool) {
	t.Helper()
	m, err := s.kind(apiVersion, kind)
	require.NoError(t, err)
	head := appendJSONString(append(appendJSONString([]byte(`{"kind":`), kind), `,"apiVersion":`...), apiVersion)
	want, wantErr := unmarshalDynamic(head, m, raw, apiVersion, kind)
	got, err := s.Unmarshal(apiVersion, kind, raw)
	if wantErr != nil {
		require.Error(t, err, "%s %s: the plain way says %v for %x", apiVersion, kind, wantErr, raw)
		if !fuzzing {
			// With two mistyped fields, the plain way names whichever
			// dynamicpb's Range meets first, which varies from run to run:
			// the fuzz target's inputs only need to fail both ways.
			assert.Equal(t, wantErr.Error(), err.Error(), "%x", raw)
		}
		return
	}
	require.NoError(t, err, "%s %s: %x", apiVersion, kind, raw)
	assert.Equal(t, string(want), string(got), "%s %s: %x", apiVersion, kind, raw)
}

// envelopeSameAsDynamic checks that the envelope b (after the magic) is
// read the same in place and the plain way.
func envelopeSameAsDynamic(t *testing.T, s *Schema, b []byte) {
	t.Helper()
	got, ok := decodePlainEnvelope(b)
	if !ok {
		return // DecodeEnvelope goes the plain way
	}
	want, err := s.decodeEnvelopeDynamic(b)
	require.NoError(t, err, "read in place, refused the plain way: %x", b)
	assert.Equal(t, want.APIVersion, got.APIVersion)
	assert.Equal(t, want.Kind, got.Kind)
	assert.Equal(t, string(want.Raw), string(got.Raw))
}

// Every protobuf body recorded (the real server's answers, client-go's
// and kubectl's requests) reads the same both ways, and in place: the
// reader does not give up on what generated code writes.
func TestWireReaderOnEveryRecording(t *testing.T) {
	s := Default()
	checked := 0
	for _, name := range fixtures.Names(t, "*protobuf-*.pb") {
		env, err := s.DecodeEnvelope(fixtures.Read(t, name))
		if err != nil || !s.Knows(env.APIVersion, env.Kind) {
			continue
		}
		readSameAsDynamic(t, s, env.APIVersion, env.Kind, env.Raw, false)
		body := fixtures.Read(t, name)
		envelopeSameAsDynamic(t, s, body[len(Magic):])
		_, plain := decodePlainEnvelope(body[len(Magic):])
		assert.True(t, plain, "%s's envelope is read in place", name)
		m, err := s.kind(env.APIVersion, env.Kind)
		require.NoError(t, err)
		_, err = readPlain(nil, m, env.Raw)
		assert.NoError(t, err, "%s is read in place", name)
		checked++
	}
	assert.Greater(t, checked, 8, "recordings checked")
}

// The wire forms generated code does not write, each of which the reader
// leaves to the plain way.
func TestWireReaderGivesUpOnTheUnusual(t *testing.T) {
	s := Default()
	tag := func(n protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, n, typ) }
	str := func(n protowire.Number, v string) []byte {
		return protowire.AppendString(tag(n, protowire.BytesType), v)
	}
	msg := func(n protowire.Number, parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return protowire.AppendBytes(tag(n, protowire.BytesType), b)
	}
	varint := func(n protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(n, protowire.VarintType), v)
	}
	for _, raw := range [][]byte{
		nil,
		msg(1, str(1, "x")),
		msg(1, str(1, "x"), str(1, "y")), // a string sent twice
		append(msg(1, str(1, "x")), msg(1, str(2, "g"))...), // metadata in two pieces
		msg(1, str(1, "x"), varint(999, 1)),                 // an unknown field
		msg(1, varint(1, 7)),                                // a wrong wire type
		msg(2, str(1, "k")),                                 // a map entry without value
		msg(2, str(2, "v"), str(1, "k")),                    // value before key
		append(msg(2, str(1, "k"), str(2, "1")), msg(2, str(1, "k"), str(2, "2"))...), // a key twice
		msg(1, msg(8, varint(1, 1), varint(2, 999))),                                  // nanoseconds in a Time
		msg(1, msg(8)), // an empty Time
		msg(1, msg(9, varint(1, uint64(1<<64-62135596800)))),                       // the zero time as a pointer
		msg(1, msg(8, varint(1, 5), varint(1, 6))),                                 // seconds twice
		msg(1, varint(7, 1<<40)),                                                   // an int64
		msg(1, varint(10, 1<<40)),                                                  // an int64 pointer
		append(msg(1, str(1, "x")), varint(4, 2)...),                               // a bool of 2
		append(msg(1, msg(17, str(1, "m"), msg(7, str(1, "{}")))), str(3, "b")...), // managedFields, binaryData as bytes
		msg(1, msg(17, msg(7, str(1, "{")))),                                       // FieldsV1 that is not JSON
		msg(1, msg(17, msg(7))),                                                    // FieldsV1 empty
		[]byte{0x0a, 0x05},                                                         // truncated
	} {
		readSameAsDynamic(t, s, "v1", "ConfigMap", raw, false)
	}
}

// The reader allocates next to nothing: a recorded Deployment is read
// without building a message.
func TestWireReaderAllocations(t *testing.T) {
	s := Default()
	env, err := s.DecodeEnvelope(fixtures.Read(t, "protobuf-get-deployment.pb"))
	require.NoError(t, err)
	m, err := s.kind(env.APIVersion, env.Kind)
	require.NoError(t, err)
	dst := make([]byte, 0, 8192)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := readPlain(dst[:0], m, env.Raw); err != nil {
			t.Fatal(err)
		}
	})
	// A handful (a few more under -race); the plain way needs hundreds.
	assert.LessOrEqual(t, allocs, 20.0)
}

// FuzzWireReader feeds arbitrary protobuf to Unmarshal and to the plain
// way alone: they must agree, JSON for JSON or error for error.
func FuzzWireReader(f *testing.F) {
	s := Default()
	kinds := [][2]string{
		{"v1", "ConfigMap"}, {"v1", "Secret"}, {"v1", "Pod"}, {"v1", "Service"}, {"events.k8s.io/v1", "Event"},
		{"apps/v1", "Deployment"}, {"v1", "ConfigMapList"}, {"v1", "DeleteOptions"}, {"apiextensions.k8s.io/v1", "CustomResourceDefinition"},
	}
	for _, name := range fixtures.Names(f, "*protobuf-*.pb") {
		if env, err := s.DecodeEnvelope(fixtures.Read(f, name)); err == nil {
			for i, k := range kinds {
				if k == [2]string{env.APIVersion, env.Kind} {
					f.Add(uint8(i), env.Raw)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, k uint8, raw []byte) {
		kind := kinds[int(k)%len(kinds)]
		readSameAsDynamic(t, s, kind[0], kind[1], raw, true)
		envelopeSameAsDynamic(t, s, raw)
	})
}

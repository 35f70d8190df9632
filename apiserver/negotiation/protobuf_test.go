package negotiation

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"listwatch/api"
	"listwatch/api/protobuf"
	"listwatch/apiserver/registry"
	"listwatch/internal/fixtures"
)

// testdata/protobuf holds Kubernetes protobuf bodies next to the JSON the
// real k8s.io/apimachinery v0.32 serializers write for the same object:
// kubectl-*.pb were captured from kubectl v1.32.4's own requests, the
// others encoded with the real protobuf serializer (see its README.md).

func readProtobufTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "protobuf", name))
	require.NoError(t, err)
	return b
}

// resourceOfKind finds a built-in resource by kind.
func resourceOfKind(t testing.TB, kind string) *registry.Resource {
	t.Helper()
	for _, r := range registry.Builtin() {
		if r.Kind == kind {
			return r
		}
	}
	t.Fatalf("no resource of kind %s", kind)
	return nil
}

// requireStatus checks err is a Status with the code and a message
// containing msg.
func requireStatus(t *testing.T, err error, code int32, msg string) {
	t.Helper()
	require.Error(t, err)
	st, ok := api.StatusOf(err)
	require.True(t, ok, "not a Status: %v", err)
	assert.Equal(t, code, st.Code, "message: %s", st.Message)
	assert.Contains(t, st.Message, msg)
}

// TestProtobufGolden: our JSON for each protobuf body is byte for byte the
// JSON Kubernetes' own serializer writes for that object, so the object we
// decode is the one the equivalent JSON create would have produced.
func TestProtobufGolden(t *testing.T) {
	cases := []struct{ name, kind string }{
		{"kubectl-configmap", "ConfigMap"},
		{"kubectl-configmap-hash", "ConfigMap"},
		{"kubectl-secret", "Secret"},
		{"kubectl-secret-docker", "Secret"},
		{"kubectl-namespace", "Namespace"},
		{"configmap-full", "ConfigMap"},
		{"configmap-immutable-false", "ConfigMap"},
		{"configmap-server-fields", "ConfigMap"},
		{"secret-full", "Secret"},
		{"namespace-full", "Namespace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := resourceOfKind(t, c.kind)
			want := readProtobufTestdata(t, c.name+".json")
			got, err := protobufToJSON(res, readProtobufTestdata(t, c.name+".pb"))
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))

			fromJSON, err := DecodeObject(res, want)
			require.NoError(t, err)
			fromProtobuf, err := DecodeObject(res, got)
			require.NoError(t, err)
			assert.Equal(t, fromJSON, fromProtobuf)
		})
	}
}

// A tiny protobuf encoder for hand-made bodies.

func pbTag(field int, wt protowire.Type) []byte {
	return protowire.AppendTag(nil, protowire.Number(field), wt)
}

func pbVarint(field int, v uint64) []byte {
	return protowire.AppendVarint(pbTag(field, protowire.VarintType), v)
}

func pbBytes(field int, b []byte) []byte {
	return protowire.AppendBytes(pbTag(field, protowire.BytesType), b)
}

func pbString(field int, s string) []byte { return pbBytes(field, []byte(s)) }

func pbMsg(field int, parts ...[]byte) []byte { return pbBytes(field, cat(parts...)) }

func pbEntry(field int, k, v string) []byte {
	return pbMsg(field, pbString(1, k), pbString(2, v))
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// pbUnknownFields is one unknown field of every wire type, a group with a
// nested group included.
var pbUnknownFields = cat(
	pbVarint(1000, 1<<63),
	pbTag(1001, protowire.Fixed64Type), []byte("12345678"),
	pbTag(1002, protowire.Fixed32Type), []byte("1234"),
	pbString(1003, "ignored"),
	pbTag(1004, protowire.StartGroupType), pbVarint(1, 5), pbTag(1005, protowire.StartGroupType), pbString(2, "x"), pbTag(1005, protowire.EndGroupType), pbTag(1004, protowire.EndGroupType),
)

// pbBody wraps an object's message in the envelope.
func pbBody(apiVersion, kind string, raw ...[]byte) []byte {
	return cat([]byte("k8s\x00"), pbMsg(1, pbString(1, apiVersion), pbString(2, kind)), pbMsg(2, raw...))
}

// TestProtobufWireSemantics: protobuf's rules, as the generated code
// applies them: unknown fields of every wire type are skipped at every
// level, a map key sent twice keeps the last value, an embedded message
// sent twice is merged, defaults fill a missing kind.
func TestProtobufWireSemantics(t *testing.T) {
	u := pbUnknownFields
	cms := resourceOfKind(t, "ConfigMap")
	cases := []struct {
		name string
		res  *registry.Resource
		body []byte
		want string
	}{
		{"unknown fields everywhere", cms,
			cat([]byte("k8s\x00"), u, pbMsg(1, u, pbString(1, "v1"), u, pbString(2, "ConfigMap"), u), u,
				pbMsg(2, u, pbMsg(1, u, pbString(1, "x"), u, pbMsg(11, u, pbString(1, "a"), u, pbString(2, "b"), u),
					pbMsg(8, u, pbVarint(1, 1700000000), u), u), u, pbEntry(2, "k", "v"), u), u,
				pbString(3, ""), pbString(4, "application/vnd.kubernetes.protobuf"), u),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","creationTimestamp":"2023-11-14T22:13:20Z","labels":{"a":"b"}},"data":{"k":"v"}}`},
		{"last map value wins, keys sorted", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbString(1, "x")), pbEntry(2, "z", "1"), pbEntry(2, "a", "2"), pbEntry(2, "z", "3")),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"a":"2","z":"3"}}`},
		{"map entry without key or value", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbString(1, "x")), pbMsg(2, pbString(2, "v")), pbMsg(3, pbString(1, "k"))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"":"v"},"binaryData":{"k":""}}`},
		{"metadata in two pieces is merged", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbString(1, "x"), pbEntry(11, "a", "1")), pbMsg(1, pbEntry(11, "b", "2"), pbString(14, "f"))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"a":"1","b":"2"},"finalizers":["f"]}}`},
		{"missing kind and apiVersion default to the path's", cms,
			cat([]byte("k8s\x00"), pbMsg(2, pbMsg(1, pbString(1, "x")))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`},
		{"no raw at all", cms, cat([]byte("k8s\x00"), pbMsg(1, pbString(2, "ConfigMap"))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{}}`},
		// A message sent twice is merged, as the protobuf spec says (gogo's
		// Time.Unmarshal would keep only the last); an empty pointer Time
		// reads as none.
		{"times: nanoseconds dropped, empty is null, repeats merged", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbMsg(8, pbVarint(1, 1), pbVarint(2, 999)), pbMsg(8, pbVarint(2, 5)), pbMsg(9), pbVarint(10, 0))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"creationTimestamp":"1970-01-01T00:00:01Z","deletionGracePeriodSeconds":0}}`},
		{"negative numbers are 10-byte varints", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbVarint(7, uint64(1<<64-1)), pbVarint(10, uint64(1<<64-30)))),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"generation":-1,"deletionGracePeriodSeconds":-30}}`},
		{"strings are escaped as encoding/json does", cms,
			pbBody("v1", "ConfigMap", pbMsg(1, pbString(1, "x")), pbEntry(2, "k", "<\xff\u2028\"")),
			`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"data":{"k":"\u003c�\u2028\""}}`},
		{"a Secret body on the configmaps path decodes, for decodeObject to refuse", cms,
			pbBody("v1", "Secret", pbMsg(1, pbString(1, "s"))),
			`{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s"}}`},
		{"namespace without spec or status", resourceOfKind(t, "Namespace"),
			pbBody("", "", pbMsg(1, pbString(1, "n"))),
			`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"n"},"spec":{},"status":{}}`},
		{"secret with bools", resourceOfKind(t, "Secret"),
			pbBody("v1", "Secret", pbVarint(5, 2), pbMsg(2, pbString(1, "k")), pbString(3, "Opaque")),
			`{"kind":"Secret","apiVersion":"v1","metadata":{},"immutable":true,"data":{"k":""},"type":"Opaque"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := protobufToJSON(c.res, c.body)
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
		})
	}
	_, err := DecodeObject(cms, must(protobufToJSON(cms, pbBody("v1", "Secret", pbMsg(1, pbString(1, "s"))))))
	requireStatus(t, err, http.StatusBadRequest, `Secret in version "v1" cannot be handled as a ConfigMap`)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestProtobufMalformed: anything malformed is a 400 BadRequest Status
// that says what is wrong, never a panic.
func TestProtobufMalformed(t *testing.T) {
	cms := resourceOfKind(t, "ConfigMap")
	meta := func(parts ...[]byte) []byte { return pbBody("v1", "ConfigMap", pbMsg(1, parts...)) }
	cases := []struct {
		name string
		body []byte
		msg  string
	}{
		{"empty", nil, "the object provided is unrecognized (must be of type ConfigMap): empty body (<empty>)"},
		{"only the magic", []byte("k8s\x00"), "empty body"},
		{"JSON sent as protobuf", []byte(`{"kind":"ConfigMap"}`), "does not appear to be a protobuf message"},
		{"truncated envelope", []byte("k8s\x00\x0a"), "cannot parse invalid wire-format data (6b3873000a)"},
		{"length past the end", []byte("k8s\x00\x12\x05ab"), "cannot parse invalid wire-format data"},
		{"huge length", cat([]byte("k8s\x00\x12"), protowire.AppendVarint(nil, 1<<63)), "cannot parse invalid wire-format data"},
		{"varint too long", []byte("k8s\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"), "cannot parse invalid wire-format data"},
		{"field number 0", []byte("k8s\x00\x02\x00"), "cannot parse invalid wire-format data"},
		{"wire type 6", []byte("k8s\x00\x0e"), "cannot parse invalid wire-format data"},
		{"lone end group", cat([]byte("k8s\x00"), pbTag(9, protowire.EndGroupType)), "cannot parse invalid wire-format data"},
		{"group never ends", cat([]byte("k8s\x00"), pbTag(9, protowire.StartGroupType), pbVarint(1, 1)), "cannot parse invalid wire-format data"},
		{"kind as a varint", cat([]byte("k8s\x00"), pbMsg(1, pbVarint(2, 1))), "the object provided is unrecognized (must be of type ConfigMap): TypeMeta.kind: wrong wire type 0"},
		{"name as a varint", meta(pbVarint(1, 7)), `ConfigMap in version "v1" cannot be handled as a ConfigMap: v1 ConfigMap: ObjectMeta.name: wrong wire type 0`},
		{"labels as a fixed32", meta(pbTag(11, protowire.Fixed32Type), []byte("1234")), "cannot be handled as a ConfigMap"},
		{"truncated label", meta(pbBytes(11, []byte{0x0a, 0x05, 'a'})), "cannot be handled as a ConfigMap"},
		{"generation as a string", meta(pbString(7, "1")), "cannot be handled as a ConfigMap"},
		{"immutable as a string", pbBody("v1", "ConfigMap", pbString(4, "yes")), "cannot be handled as a ConfigMap"},
		{"fieldsV1 not JSON", meta(pbMsg(17, pbMsg(7, pbString(1, "\xa1\x01")))), "FieldsV1 holds 2 bytes that are not JSON"},
		{"unknown kind", pbBody("v1", "Widget", pbMsg(1, pbString(1, "x"))), `Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := protobufToJSON(cms, c.body)
			requireStatus(t, err, http.StatusBadRequest, c.msg)
			assert.Equal(t, api.ReasonBadRequest, api.ReasonOf(err))
		})
	}

	// Every truncation of a real body either still decodes (when it ends
	// on a field boundary of the envelope) or is a 400.
	for _, name := range []string{"configmap-full", "secret-full", "namespace-full", "configmap-server-fields"} {
		full := readProtobufTestdata(t, name+".pb")
		for n := range len(full) {
			_, err := protobufToJSON(cms, full[:n])
			if err != nil {
				st, ok := api.StatusOf(err)
				require.True(t, ok, "%s[:%d]: %v", name, n, err)
				require.Equal(t, int32(http.StatusBadRequest), st.Code, "%s[:%d]: %s", name, n, st.Message)
			}
		}
	}
}

func BenchmarkProtobufToJSON(b *testing.B) {
	for _, name := range []string{"kubectl-configmap", "configmap-full"} {
		b.Run(name, func(b *testing.B) {
			body := readProtobufTestdata(b, name+".pb")
			res := resourceOfKind(b, "ConfigMap")
			b.ReportAllocs()
			for b.Loop() {
				if _, err := protobufToJSON(res, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzProtobufBody: any body is JSON that decodes, or a 400 Status;
// never a panic, never invalid JSON. The seed corpus is in
// testdata/fuzz/FuzzProtobufBody (kubectl's bodies and hand-made edge
// cases); run longer with
//
//	go test ./apiserver -run '^$' -fuzz FuzzProtobufBody -fuzztime 2m
func FuzzProtobufBody(f *testing.F) {
	f.Add(pbBody("v1", "ConfigMap", pbUnknownFields, pbMsg(1, pbString(1, "x"), pbEntry(11, "a", "b")), pbEntry(2, "k", "v")))
	res := registry.Builtin()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, r := range res {
			js, err := protobufToJSON(r, body)
			if err != nil {
				st, ok := api.StatusOf(err)
				if !ok || st.Code != http.StatusBadRequest {
					t.Fatalf("%s: want a 400 Status, got %v", r.Kind, err)
				}
				continue
			}
			if !json.Valid(js) {
				t.Fatalf("%s: invalid JSON %q", r.Kind, js)
			}
			obj, err := DecodeObject(r, js)
			if err != nil {
				if _, ok := api.StatusOf(err); !ok {
					t.Fatalf("%s: error without a Status: %v", r.Kind, err)
				}
				continue
			}
			if _, err := DecodeObject(r, obj.AppendJSON(nil)); err != nil {
				t.Fatalf("%s: our own encoding of an accepted object does not decode: %v", r.Kind, err)
			}
		}
	})
}

// protobufToJSON is ProtobufToJSON for res's path.
func protobufToJSON(res *registry.Resource, body []byte) ([]byte, error) {
	return ProtobufToJSON(body, res.APIVersion(), res.Kind)
}

// TestProtobufWatchFrameIsTheRecording: each event of the recorded
// protobuf watch, turned into the JSON frame our cacher writes and then
// re-encoded, is the recorded frame byte for byte.
func TestProtobufWatchFrameIsTheRecording(t *testing.T) {
	s := protobuf.Default()
	body := fixtures.Read(t, "protobuf-watch-configmaps.pb")
	r := bytes.NewReader(body)
	var again []byte
	for {
		ev, err := s.ReadWatchFrame(r)
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		_, js, err := s.DecodeObject(ev.Object, "", "")
		require.NoError(t, err)
		frame := append(append(append([]byte(`{"type":"`+ev.Type+`","object":`), js...), '}'), '\n')
		again = append(again, ProtobufWatchFrame(frame)...)
	}
	assert.Equal(t, body, again)

	// An object that does not fit its schema is an ERROR event.
	_, js, err := s.DecodeObject(protobufErrorObject(t, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","data":{"k":1}}}`), "", "")
	require.NoError(t, err)
	assert.Contains(t, string(js), `"reason":"InternalError"`)
	assert.Contains(t, string(js), `.data.k: expected a string, not a number`)
}

// protobufErrorObject re-encodes a JSON frame and returns its event's
// object, requiring an ERROR event.
func protobufErrorObject(t *testing.T, frame string) []byte {
	t.Helper()
	ev, err := protobuf.Default().ReadWatchFrame(bytes.NewReader(ProtobufWatchFrame([]byte(frame))))
	require.NoError(t, err)
	require.Equal(t, "ERROR", ev.Type)
	return ev.Object
}

// TestProtobufWatchFramesRemembers: the same shared frame is re-encoded
// once; another frame, even with the same bytes, is encoded on its own;
// the oldest frames are forgotten first.
func TestProtobufWatchFramesRemembers(t *testing.T) {
	p := NewProtobufWatchFrames(2)
	frame := func(name string) []byte {
		return []byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name + `"}}}` + "\n")
	}
	a, b, c := frame("a"), frame("b"), frame("c")
	first := p.Frame(a)
	assert.Equal(t, ProtobufWatchFrame(a), first)
	again := p.Frame(a)
	assert.Same(t, &first[0], &again[0], "remembered, not re-encoded")
	twin := p.Frame(frame("a"))
	assert.Equal(t, first, twin)
	assert.NotSame(t, &first[0], &twin[0], "another frame with the same bytes is its own entry")
	p.Frame(b)
	p.Frame(c)
	later := p.Frame(a)
	assert.Equal(t, first, later)
	assert.NotSame(t, &first[0], &later[0], "a was forgotten")
}

// TestSharedWatchFramesByteBudget: frames are forgotten, oldest first,
// once what is remembered would pass the byte budget; a frame larger than
// the budget is made every time and never kept.
func TestSharedWatchFramesByteBudget(t *testing.T) {
	made := 0
	double := func(f []byte) []byte { made++; return append(bytes.Clone(f), f...) }
	frame := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	p := NewSharedWatchFrames(100, 90, double) // room for three frames of 10 bytes (30 each)
	a, b, c, d := frame(10), frame(10), frame(10), frame(10)
	for _, f := range [][]byte{a, b, c, a, b, c} {
		p.Frame(f)
	}
	assert.Equal(t, 3, made, "three fit")
	p.Frame(d)
	assert.Equal(t, 4, made)
	assert.Equal(t, int64(90), p.bytes)
	p.Frame(b)
	assert.Equal(t, 4, made, "b is still there")
	p.Frame(a)
	assert.Equal(t, 5, made, "a, the oldest, was forgotten for d")

	big := frame(50)
	p.Frame(big)
	p.Frame(big)
	assert.Equal(t, 7, made, "too big to keep")
	assert.LessOrEqual(t, p.bytes, int64(90))
}

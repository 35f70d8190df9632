package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fuzz targets for every parser in this package. Their seed corpora, in
// testdata/fuzz/<FuzzName>/, are the recorded fixtures (every watch event,
// every object body) and the selector tables checked against Kubernetes, so
// a plain `go test` replays them all. To fuzz for real:
//
//	go test -run '^$' -fuzz FuzzEventDecode -fuzztime 60s ./api/
//
// Anything the fuzzer finds is saved under testdata/fuzz and becomes a seed.

// Arbitrary bytes are an event or a clean error, never a panic. What we
// accept is valid JSON, and an accepted event encodes to valid JSON that
// decodes to the same event again.
func FuzzEventDecode(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Event
		if err := e.UnmarshalJSON(data); err != nil {
			require.ErrorIs(t, err, ErrInvalidJSON)
			return
		}
		require.True(t, json.Valid(data), "accepted invalid JSON %q", data)
		first, err := json.Marshal(&e)
		require.NoError(t, err)
		require.True(t, json.Valid(first), "wrote invalid JSON %q", first)

		var again Event
		require.NoError(t, again.UnmarshalJSON(first), "%q", first)
		second, err := json.Marshal(&again)
		require.NoError(t, err)
		require.Equal(t, string(first), string(second))
		require.Equal(t, e.Type, again.Type)
		if e.Object != nil {
			require.Equal(t, e.Object.Key(), again.Object.Key())
			require.Equal(t, e.Object.Metadata.ResourceVersion, again.Object.Metadata.ResourceVersion)
		}
	})
}

// Arbitrary bytes are an object or a clean error. An accepted object
// encodes to valid JSON that is a fixed point of decode-then-encode, and
// its DeepCopy is equal and encodes the same.
func FuzzObjectRoundTrip(f *testing.F) {
	f.Add([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","labels":{"x":"y"}},"data":{"k":"v"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var o Object
		if err := o.UnmarshalJSON(data); err != nil {
			require.ErrorIs(t, err, ErrInvalidJSON)
			return
		}
		require.True(t, json.Valid(data), "accepted invalid JSON %q", data)
		first := o.AppendJSON(nil)
		require.True(t, json.Valid(first), "wrote invalid JSON %q", first)

		c := o.DeepCopy()
		require.Equal(t, &o, c)
		require.Equal(t, string(first), string(c.AppendJSON(nil)))

		var again Object
		require.NoError(t, again.UnmarshalJSON(first), "%q", first)
		require.Equal(t, string(first), string(again.AppendJSON(nil)))
	})
}

// A selector that parses has a canonical form that parses to the same
// selector, and both match the same label sets.
func FuzzParseLabelSelector(f *testing.F) {
	f.Add("app=web,tier in (a,b),!canary", "app", "web")
	f.Fuzz(func(t *testing.T, s, key, value string) {
		sel, err := ParseLabelSelector(s)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidSelector)
			require.NotEmpty(t, err.Error())
			return
		}
		canonical := sel.String()
		again, err := ParseLabelSelector(canonical)
		require.NoError(t, err, "canonical form %q of %q", canonical, s)
		require.Equal(t, sel, again, "%q -> %q", s, canonical)
		require.Equal(t, canonical, again.String())

		for _, labels := range labelSetsFor(sel, key, value) {
			assert.Equal(t, sel.Matches(labels), again.Matches(labels), "%q vs %q on %v", s, canonical, labels)
		}
	})
}

// labelSetsFor builds label sets that exercise each requirement: every key
// absent, present with each of its values, and present with the fuzzer's
// value.
func labelSetsFor(sel LabelSelector, key, value string) []map[string]string {
	sets := []map[string]string{nil, {key: value}}
	all := map[string]string{}
	for _, r := range sel.Requirements() {
		for _, v := range append(r.Values, value, "") {
			sets = append(sets, map[string]string{r.Key: v})
			all[r.Key] = v
		}
	}
	return append(sets, all)
}

// The same for field selectors, matched against objects.
func FuzzParseFieldSelector(f *testing.F) {
	f.Add("metadata.name=alpha,metadata.namespace!=kube-system", "alpha", "fixtures")
	f.Fuzz(func(t *testing.T, s, name, namespace string) {
		sel, err := ParseFieldSelector(s)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidSelector)
			require.NotEmpty(t, err.Error())
			return
		}
		canonical := sel.String()
		again, err := ParseFieldSelector(canonical)
		require.NoError(t, err, "canonical form %q of %q", canonical, s)
		require.Equal(t, sel, again, "%q -> %q", s, canonical)
		require.Equal(t, canonical, again.String())
		_ = sel.ValidateMetadataFields()

		objects := []*Object{nil, {Metadata: ObjectMeta{Name: name, Namespace: namespace}}}
		for _, r := range sel.Requirements() {
			objects = append(objects,
				&Object{Metadata: ObjectMeta{Name: r.Value, Namespace: namespace}},
				&Object{Metadata: ObjectMeta{Name: name, Namespace: r.Value}})
		}
		for _, o := range objects {
			assert.Equal(t, sel.MatchesObject(o), again.MatchesObject(o), "%q vs %q", s, canonical)
		}
	})
}

// resourceVersions either parse to a number that formats back to an
// equivalent resourceVersion, or fail with the checkable error.
func FuzzParseResourceVersion(f *testing.F) {
	for _, s := range []string{"", "0", "1", "116", "abc", "-1", "18446744073709551616", "007"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseResourceVersion(s)
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidResourceVersion)
			return
		}
		back, err := ParseResourceVersion(FormatResourceVersion(n))
		require.NoError(t, err)
		require.Equal(t, n, back)
	})
}

// DecodeEvent reads what UnmarshalJSON reads, and stops at the event's end
// whatever follows it: that is how a watch stream is framed and decoded in
// one scan.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}}`), []byte(`{"type":`))
	f.Add([]byte(`{"object":{"kind":"Status","code":410},"type":"ERROR"}`), []byte("\n"))
	f.Fuzz(func(t *testing.T, data, next []byte) {
		var want Event
		wantErr := want.UnmarshalJSON(data)
		stream := append(append(append([]byte(nil), data...), '\n'), next...)
		got, n, err := DecodeEvent(stream)
		if wantErr == nil {
			require.NoError(t, err, "%q", stream)
			require.Equal(t, len(bytes.TrimRight(data, " \t\r\n")), n, "the event ends where its bytes end")
			a, _ := json.Marshal(&want)
			b, _ := json.Marshal(&got)
			require.Equal(t, string(a), string(b))
			return
		}
		if err != nil {
			require.ErrorIs(t, err, ErrInvalidJSON)
			return
		}
		// data was not one event alone, but the stream starts with one.
		require.LessOrEqual(t, n, len(stream))
		var again Event
		require.NoError(t, again.UnmarshalJSON(stream[:n]), "%q", stream[:n])
	})
}

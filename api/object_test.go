package api

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func decodeObject(t *testing.T, s string) *Object {
	t.Helper()
	var o Object
	require.NoError(t, json.Unmarshal([]byte(s), &o))
	return &o
}

func encode(t *testing.T, v json.Marshaler) string {
	t.Helper()
	b, err := v.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

func TestObjectKey(t *testing.T) {
	cases := []struct{ ns, name, want string }{
		{"fixtures", "alpha", "fixtures/alpha"},
		{"", "fixtures", "fixtures"}, // cluster-scoped, e.g. a Namespace
		{"", "", ""},
	}
	for _, c := range cases {
		o := Object{Metadata: ObjectMeta{Namespace: c.ns, Name: c.name}}
		assert.Equal(t, c.want, o.Key())
	}
}

func TestObjectGetSetRemove(t *testing.T) {
	o := decodeObject(t, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v"},"immutable":false}`)
	assert.JSONEq(t, `{"k":"v"}`, string(o.Get("data")))
	assert.Nil(t, o.Get("spec"))

	require.NoError(t, o.Set("data", json.RawMessage(`{"k":"v2"}`)), "replace keeps the position")
	require.NoError(t, o.Set("binaryData", json.RawMessage(`{}`)), "a new field goes last")
	assert.Equal(t, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"k":"v2"},"immutable":false,"binaryData":{}}`, encode(t, o))

	for _, name := range []string{"kind", "apiVersion", "metadata"} {
		assert.Error(t, o.Set(name, json.RawMessage(`"x"`)), name)
	}
	assert.Error(t, o.Set("data", json.RawMessage(`{"k":`)))
	assert.Error(t, o.Set("data", nil))

	value := json.RawMessage(`{"k":"v3"}`)
	require.NoError(t, o.Set("data", value))
	value[2] = 'X'
	assert.JSONEq(t, `{"k":"v3"}`, string(o.Get("data")), "Set copies the value")

	o.Remove("immutable")
	o.Remove("absent")
	assert.Equal(t, []string{"data", "binaryData"}, fieldNames(o.Fields))
}

func fieldNames(fs []Field) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

func TestObjectDeepCopyIsIndependent(t *testing.T) {
	deleted := time.Date(2026, 11, 21, 16, 0, 0, 0, time.UTC)
	orig := decodeObject(t, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"ns",`+
		`"creationTimestamp":"2026-11-21T16:16:42Z","labels":{"app":"a"},"annotations":{"n":"1"},"finalizers":["f"]},"spec":{"x":1}}`)
	orig.Metadata.DeletionTimestamp = &deleted
	before := encode(t, orig)

	c := orig.DeepCopy()
	assert.Equal(t, orig, c)
	c.Metadata.Labels["app"] = "changed"
	c.Metadata.Annotations["n"] = "2"
	*c.Metadata.DeletionTimestamp = deleted.Add(time.Hour)
	c.Metadata.Extra[0].Value[2] = 'X'
	c.Fields[0].Value[2] = 'X'
	c.Fields = append(c.Fields, Field{Name: "status", Value: json.RawMessage(`{}`)})

	assert.Equal(t, before, encode(t, orig), "changing the copy left the original alone")
	assert.Nil(t, (*Object)(nil).DeepCopy())
}

// Members we do not model come back in the order they arrived, at the top
// level and inside metadata; the metadata members Kubernetes writes before
// labels go back there.
func TestUnknownFieldsRoundTripInOrder(t *testing.T) {
	in := `{"kind":"Widget","apiVersion":"example.com/v1","metadata":{"name":"w","namespace":"ns",` +
		`"selfLink":"/x","uid":"u","resourceVersion":"7","generation":3,"creationTimestamp":"2026-11-21T16:16:42Z",` +
		`"deletionTimestamp":"2026-11-21T17:00:00Z","deletionGracePeriodSeconds":30,"labels":{"a":"1","b":"2"},` +
		`"annotations":{"z":"\u003c\u0026\u003e"},"ownerReferences":[{"kind":"X"}],"finalizers":["a","b"],"managedFields":[]},` +
		`"zeta":1,"alpha":{"nested":[1,2.5e3,-0.1,true,null,"s\u00e9\n"]},"spec":null}`
	o := decodeObject(t, in)
	assert.Equal(t, []string{"zeta", "alpha", "spec"}, fieldNames(o.Fields))
	assert.Equal(t, []string{"selfLink", "deletionGracePeriodSeconds", "ownerReferences", "finalizers", "managedFields"},
		fieldNames(o.Metadata.Extra))
	assert.Equal(t, in, encode(t, o))

	// Extra members sent in another order come out in Kubernetes' order.
	shuffled := decodeObject(t, `{"metadata":{"finalizers":["a"],"deletionGracePeriodSeconds":0,"selfLink":"/y"}}`)
	assert.Equal(t, `{"metadata":{"selfLink":"/y","deletionGracePeriodSeconds":0,"finalizers":["a"]}}`,
		encode(t, shuffled))
}

func TestMetadataFields(t *testing.T) {
	o := decodeObject(t, `{"metadata":{"name":"n","generateName":"g-","namespace":"ns","uid":"u","resourceVersion":"12",`+
		`"generation":4,"creationTimestamp":"2026-11-21T16:16:42+02:00","labels":{"a":"b"},"annotations":null}}`)
	m := o.Metadata
	assert.Equal(t, "n", m.Name)
	assert.Equal(t, "g-", m.GenerateName)
	assert.Equal(t, "ns", m.Namespace)
	assert.Equal(t, "u", m.UID)
	assert.Equal(t, "12", m.ResourceVersion)
	assert.Equal(t, int64(4), m.Generation)
	assert.True(t, m.CreationTimestamp.Equal(time.Date(2026, 11, 21, 14, 16, 42, 0, time.UTC)))
	assert.Equal(t, map[string]string{"a": "b"}, m.Labels)
	assert.Nil(t, m.Annotations)
	assert.Contains(t, encode(t, o), `"creationTimestamp":"2026-11-21T14:16:42Z"`, "times are written in UTC")
}

// No kind writes a zero creationTimestamp, whether its metadata is an
// ObjectMeta or a ListMeta: ObjectMeta's json tag says omitzero in
// k8s.io/apimachinery v0.37.2 (1.32 wrote "creationTimestamp":null for
// every ObjectMeta).
func TestZeroCreationTimestampIsLeftOut(t *testing.T) {
	for _, kind := range [][2]string{{"v1", "ConfigMap"}, {"v1", "ConfigMapList"}, {"meta.k8s.io/v1", "Table"},
		{"db.example.com/v1", "Table"}, {"v1", "Status"}, {"", ""}} {
		o := Object{APIVersion: kind[0], Kind: kind[1], Metadata: ObjectMeta{ResourceVersion: "5"}}
		got := encode(t, &o)
		assert.NotContains(t, got, "creationTimestamp", "%v", kind)
		assert.Contains(t, got, `"metadata":{"resourceVersion":"5"}`, "%v", kind)
	}
}

// Bad input is an error that wraps ErrInvalidJSON, never a panic, and the
// strictness covers the fields we keep verbatim: anything we accept we can
// write back as valid JSON.
func TestBadJSONIsACheckableError(t *testing.T) {
	cases := map[string]string{
		"empty":                  ``,
		"not an object":          `[1]`,
		"truncated":              `{"kind":"ConfigMap","metadata":{"name":"x"`,
		"trailing garbage":       `{"kind":"A"} x`,
		"two objects":            `{}{}`,
		"missing colon":          `{"kind" "A"}`,
		"trailing comma":         `{"kind":"A",}`,
		"unquoted name":          `{kind:"A"}`,
		"kind not a string":      `{"kind":1}`,
		"metadata not an object": `{"metadata":[]}`,
		"name not a string":      `{"metadata":{"name":5}}`,
		"bad generation":         `{"metadata":{"generation":"5"}}`,
		"fractional generation":  `{"metadata":{"generation":1.5}}`,
		"bad timestamp":          `{"metadata":{"creationTimestamp":"yesterday"}}`,
		"timestamp out of range": `{"metadata":{"creationTimestamp":"0000-01-01T00:00:00+01:00"}}`,
		"label not a string":     `{"metadata":{"labels":{"a":1}}}`,
		"labels not an object":   `{"metadata":{"labels":"a=b"}}`,
		"leading zero":           `{"x":01}`,
		"bare minus":             `{"x":-}`,
		"bad fraction":           `{"x":1.}`,
		"bad exponent":           `{"x":1e}`,
		"plus sign":              `{"x":+1}`,
		"control char":           "{\"x\":\"a\x01b\"}",
		"bad escape":             `{"x":"\q"}`,
		"short unicode escape":   `{"x":"\u12"}`,
		"unterminated string":    `{"x":"abc}`,
		"bad literal":            `{"x":nul}`,
		"unclosed array":         `{"x":[1,2}`,
		"array trailing comma":   `{"x":[1,]}`,
		"nested object no name":  `{"x":{1:2}}`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			var o Object
			err := o.UnmarshalJSON([]byte(in))
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidJSON)
			// encoding/json checks the syntax itself before it calls us, and
			// then says so with a *json.SyntaxError.
			assert.Error(t, json.Unmarshal([]byte(in), &o))

			var e Event
			err = e.UnmarshalJSON([]byte(`{"type":"ADDED","object":` + in + `}`))
			require.Error(t, err)
		})
	}
}

func TestBadListAndStatusAndEvent(t *testing.T) {
	for _, in := range []string{
		`{"items":{}}`, `{"items":[1]}`, `{"items":[{"kind":1}]}`, `{"metadata":{"resourceVersion":5}}`, `{"items":[`,
	} {
		var l List
		assert.ErrorIs(t, l.UnmarshalJSON([]byte(in)), ErrInvalidJSON, in)
	}
	var s Status
	assert.ErrorIs(t, s.UnmarshalJSON([]byte(`{"code":"404"}`)), ErrInvalidJSON)

	for _, in := range []string{
		`{"type":"ADDED"}`, `{"type":"ADDED","object":null}`, `{"type":"SOMETHING","object":{}}`,
		`{"object":{}}`, `{"type":5,"object":{}}`, `{"type":"ERROR","object":{"code":"x"}}`, `[]`,
	} {
		var e Event
		assert.ErrorIs(t, e.UnmarshalJSON([]byte(in)), ErrInvalidJSON, in)
	}
}

func TestDeepNestingIsBounded(t *testing.T) {
	for _, depth := range []int{maxDepth + 1, 100000} {
		in := `{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
		var o Object
		err := o.UnmarshalJSON([]byte(in))
		require.ErrorIs(t, err, ErrInvalidJSON)
		assert.Contains(t, err.Error(), "nested too deeply")
	}
	ok := `{"x":` + strings.Repeat(`{"a":`, maxDepth-1) + `1` + strings.Repeat("}", maxDepth-1) + `}`
	var o Object
	require.NoError(t, json.Unmarshal([]byte(ok), &o), "nesting up to the limit is fine")
	assert.Equal(t, ok, strings.Replace(encode(t, &o), `"metadata":{},`, "", 1))
}

func TestDecodeReplacesPreviousContents(t *testing.T) {
	o := decodeObject(t, `{"kind":"A","metadata":{"name":"a","labels":{"x":"y"}},"data":1}`)
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"B"}`), o))
	assert.Equal(t, &Object{Kind: "B"}, o)

	s := NewNotFound(GroupResource{Resource: "x"}, "y")
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"Status","code":500}`), s))
	assert.Equal(t, &Status{Kind: "Status", Code: 500}, s)
}

func TestEmptyListHasItemsArray(t *testing.T) {
	rv := recorded(t, "list-empty.json", `"resourceVersion":"(\d+)"`)[0]
	l := List{APIVersion: "v1", Kind: "ConfigMapList", Metadata: ListMeta{ResourceVersion: rv}}
	assert.Equal(t, string(wireForm(t, "list-empty.json", readFixture(t, "list-empty.json"))), encode(t, &l))

	n := int64(1)
	l.Metadata = ListMeta{ResourceVersion: "1", Continue: "tok", RemainingItemCount: &n}
	assert.Contains(t, encode(t, &l), `"metadata":{"resourceVersion":"1","continue":"tok","remainingItemCount":1}`)

	var back List
	require.NoError(t, json.Unmarshal([]byte(`{"items":null}`), &back))
	assert.NotNil(t, back.Items)
}

func TestEventMarshalRejectsHalfFormedEvents(t *testing.T) {
	for _, e := range []Event{
		{Type: Added},
		{Type: Error},
		{Type: "NOPE", Object: &Object{}},
	} {
		_, err := json.Marshal(&e)
		assert.Error(t, err, e.Type)
	}
}

func TestStringsEscapedLikeEncodingJSON(t *testing.T) {
	for _, s := range []string{"plain", `q"b\s`, "<a>&", "\n\r\t\b\f\x00\x1f", "é\u2028\u2029", "bad\xffutf8", "\ufffd"} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(AppendJSONString(nil, s, EscapeInvalidUTF8)), "%q", s)
	}
	// The other way with invalid UTF-8: U+FFFD itself, not its escape.
	assert.Equal(t, "\"bad\ufffdutf8 \\u003c\"", string(AppendJSONString(nil, "bad\xffutf8 <", ReplaceInvalidUTF8)))
}

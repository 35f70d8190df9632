package patch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestMergePatch(t *testing.T) {
	cases := []struct {
		name, doc, patch, want string
		strategic              bool
	}{
		{"merge objects", `{"a":{"x":1,"y":2},"b":1}`, `{"a":{"y":3,"z":4}}`, `{"a":{"x":1,"y":3,"z":4},"b":1}`, false},
		{"null deletes", `{"a":{"x":1},"b":1}`, `{"a":{"x":null},"b":null}`, `{"a":{}}`, false},
		{"lists are replaced", `{"a":[1,2,3]}`, `{"a":[4]}`, `{"a":[4]}`, false},
		{"object over scalar", `{"a":1}`, `{"a":{"b":2}}`, `{"a":{"b":2}}`, false},
		{"numbers stay exact", `{"n":12345678901234567890}`, `{"m":0.1}`, `{"m":0.1,"n":12345678901234567890}`, false},
		{"directives are not data", `{"spec":{"c":[{"name":"a"}]}}`, `{"spec":{"$setElementOrder/c":[{"name":"b"}],"c":[{"name":"b","$patch":"merge"}]}}`, `{"spec":{"c":[{"name":"b"}]}}`, true},
		{"$patch delete", `{"a":{"x":1},"b":1}`, `{"a":{"$patch":"delete"}}`, `{"b":1}`, true},
		{"$patch replace", `{"a":{"x":1,"y":2}}`, `{"a":{"$patch":"replace","z":3}}`, `{"a":{"z":3}}`, true},
		{"delete list element", `{"a":[1]}`, `{"a":[{"name":"x","$patch":"delete"},{"name":"y"}]}`, `{"a":[{"name":"y"}]}`, true},
		{"merge patch keeps dollar keys", `{}`, `{"$x":1}`, `{"$x":1}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := applyMergePatch([]byte(c.doc), []byte(c.patch), c.strategic)
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
	_, err := applyMergePatch([]byte(`{}`), []byte(`[1]`), false)
	assert.ErrorIs(t, err, errBadMergePatch)
}

func TestJSONPatch(t *testing.T) {
	doc := `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1}`
	cases := []struct {
		name, patch, want, err string
	}{
		{"add member", `[{"op":"add","path":"/n","value":null}]`, `{"a":{"b":[1,2,3]},"c":"x","d~e/f":1,"n":null}`, ""},
		{"add to array", `[{"op":"add","path":"/a/b/1","value":9}]`, `{"a":{"b":[1,9,2,3]},"c":"x","d~e/f":1}`, ""},
		{"append", `[{"op":"add","path":"/a/b/-","value":4}]`, `{"a":{"b":[1,2,3,4]},"c":"x","d~e/f":1}`, ""},
		{"negative index, as kube-apiserver allows", `[{"op":"remove","path":"/a/b/-1"}]`, `{"a":{"b":[1,2]},"c":"x","d~e/f":1}`, ""},
		{"replace root member", `[{"op":"replace","path":"/c","value":{"y":1}}]`, `{"a":{"b":[1,2,3]},"c":{"y":1},"d~e/f":1}`, ""},
		{"escaped pointer", `[{"op":"remove","path":"/d~0e~1f"}]`, `{"a":{"b":[1,2,3]},"c":"x"}`, ""},
		{"remove array element", `[{"op":"remove","path":"/a/b/0"}]`, `{"a":{"b":[2,3]},"c":"x","d~e/f":1}`, ""},
		{"move", `[{"op":"move","from":"/c","path":"/z"}]`, `{"a":{"b":[1,2,3]},"z":"x","d~e/f":1}`, ""},
		{"copy", `[{"op":"copy","from":"/a","path":"/a2"}]`, `{"a":{"b":[1,2,3]},"a2":{"b":[1,2,3]},"c":"x","d~e/f":1}`, ""},
		{"test passes", `[{"op":"test","path":"/a/b","value":[1,2,3]}]`, doc, ""},
		{"test fails", `[{"op":"test","path":"/c","value":"y"}]`, "", "test failed"},
		{"replace missing", `[{"op":"replace","path":"/nope","value":1}]`, "", "missing"},
		{"index out of range", `[{"op":"add","path":"/a/b/7","value":1}]`, "", "invalid index"},
		{"through a scalar", `[{"op":"add","path":"/c/x","value":1}]`, "", "missing path"},
		{"bad pointer", `[{"op":"add","path":"c","value":1}]`, "", "missing path"},
		{"move into itself", `[{"op":"move","from":"/a","path":"/a/x"}]`, "", "missing"},
		{"remove root", `[{"op":"remove","path":""}]`, "", "nonexistent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ops, runnable, err := decodeJSONPatch([]byte(c.patch))
			require.NoError(t, err)
			require.True(t, runnable)
			got, err := applyJSONPatch([]byte(doc), ops)
			if c.err != "" {
				require.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(got))
		})
	}
	for _, bad := range []string{`{"op":"add"}`, `[`, `[1]`} {
		_, _, err := decodeJSONPatch([]byte(bad))
		assert.Error(t, err, "%s does not decode", bad)
	}
	// Operations json-patch v4 only refuses when it runs them.
	for _, late := range []string{`[{"op":"add","path":"/x"}]`, `[{"op":"frob","path":"/a"}]`, `[{"op":"remove","path":5}]`} {
		_, runnable, err := decodeJSONPatch([]byte(late))
		require.NoError(t, err, late)
		assert.False(t, runnable, late)
	}
}

// doublingPatch is the patch of docs/limits.md: an array, then n copies of it
// into itself, each doubling it.
func doublingPatch(n int) []byte {
	var b strings.Builder
	b.WriteString(`[{"op":"add","path":"/zz","value":[0]}`)
	for range n {
		b.WriteString(`,{"op":"copy","from":"/zz","path":"/zz/-"}`)
	}
	b.WriteString("]")
	return []byte(b.String())
}

// rejected is the message of every JSON patch that does not apply.
const rejected = "the server rejected our request due to an error in our request"

const testDoc = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"}}`

// fiftyCopies is the doubling attack at its full size. It is refused at
// the same copy as 22 doubling copies, once the copies pass 3 MiB, and
// costs as much: seconds under -race, so -short runs the 22 only.
const fiftyCopies = "50 doubling copies (2.4 KB)"

// mergeTooLarge is a merge patch past MaxResultBytes: the same check as
// the JSON patch past it (checkResultSize), the costliest case here, so
// -short runs the JSON patch's only.
const mergeTooLarge = "a merge patch whose result is too large"

func TestLimits(t *testing.T) {
	cases := []struct {
		name      string
		patchType string
		patch     []byte
		code      int32 // 0: applies
		message   string
	}{
		{fiftyCopies, JSONPatchType, doublingPatch(50), 422, rejected},
		{"22 doubling copies (1.1 KB)", JSONPatchType, doublingPatch(22), 422, rejected},
		{"10 doubling copies", JSONPatchType, doublingPatch(10), 0, ""},
		{"too many operations", JSONPatchType, []byte("[" + strings.Repeat(`{"op":"test","path":"/kind","value":"ConfigMap"},`, MaxJSONPatchOperations) +
			`{"op":"test","path":"/kind","value":"ConfigMap"}]`), 413, "The allowed maximum operations in a JSON patch is 10000, got 10001"},
		{mergeTooLarge, MergePatchType,
			[]byte(`{"data":{"a":"` + strings.Repeat("x", MaxResultBytes) + `"}}`), 413, "more than the limit of 3145728"},
		{"a JSON patch whose result is too large", JSONPatchType,
			[]byte(`[{"op":"add","path":"/data","value":"` + strings.Repeat("x", MaxResultBytes) + `"}]`), 413, "the patched object is"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && c.name == fiftyCopies {
				t.Skip("-short: refused at the same copy as 22 doubling copies; the full run executes it")
			}
			if testing.Short() && c.name == mergeTooLarge {
				t.Skip("-short: the same checkResultSize as the JSON patch whose result is too large, and 3 MiB to merge under -race; the full run executes it")
			}
			apply, err := Func(c.patchType, c.patch, true)
			if err == nil {
				_, err = apply([]byte(testDoc))
			}
			if c.code == 0 {
				require.NoError(t, err)
				return
			}
			var st *api.Status
			require.ErrorAs(t, err, &st)
			assert.Equal(t, c.code, st.Code)
			assert.Contains(t, st.Message, c.message)
		})
	}
}

// BenchmarkDoublingPatch measures what doublingPatch costs now: it is
// refused after about 3 MiB of copying (see B/op), where it used to grow
// the server by gigabytes.
func BenchmarkDoublingPatch(b *testing.B) {
	patch := doublingPatch(50)
	b.ReportAllocs()
	for b.Loop() {
		apply, err := Func(JSONPatchType, patch, true)
		if err == nil {
			_, err = apply([]byte(testDoc))
		}
		var st *api.Status
		if !errors.As(err, &st) || st.Code != 422 {
			b.Fatalf("want 422, got %v", err)
		}
	}
}

// FuzzPatch: whatever the patch, every patch type either applies it and
// returns valid JSON no larger than MaxResultBytes, or answers a 4xx
// Status; never a panic, never unbounded work (the doubling seed).
func FuzzPatch(f *testing.F) {
	doc := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","labels":{"a":"b"}},"data":{"k":"v","l":[1,2]}}`)
	for _, s := range []string{`{"data":{"k":null}}`, `{"metadata":{"$patch":"delete"}}`, `[{"op":"add","path":"/data/l/-","value":3}]`,
		`[{"op":"move","from":"/data","path":"/d"}]`, `[{"op":"copy","from":"/metadata","path":"/metadata/labels/x"}]`, `{"$setElementOrder/data":[1]}`,
		string(doublingPatch(30)), `[{"op":"copy","from":"","path":"/data/self"}]`, `[{"op":"add","path":"/data/l/-1","value":0}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, patch string) {
		for _, pt := range []string{MergePatchType, StrategicPatchType, JSONPatchType} {
			for _, strictly := range []bool{true, false} {
				apply, err := Func(pt, []byte(patch), strictly)
				if err == nil {
					var out []byte
					if out, err = apply(doc); err == nil {
						require.True(t, json.Valid(out), "%s result %q", pt, out)
						require.LessOrEqual(t, len(out), MaxResultBytes)
						continue
					}
				}
				var st *api.Status
				require.ErrorAs(t, err, &st, "%s: %v", pt, err)
				require.True(t, st.Code >= 400 && st.Code < 500, "%s: %d %s", pt, st.Code, st.Message)
			}
		}
	})
}

// TestRefusedAsTheRealServer: patches kube-apiserver 1.37 refuses, with
// its code and message, and the directive that decides.
func TestRefusedAsTheRealServer(t *testing.T) {
	const float = "json: cannot unmarshal number 1e999999 into Go value of type float64"
	cases := []struct {
		name, patchType, patch string
		strictly               bool
		code                   int32
		message                string
	}{
		{"a huge number in a merge patch", MergePatchType, `{"data":{"k":1e999999}}`, true, 400, "error decoding patch: " + float},
		{"a huge number in an unknown field", MergePatchType, `{"x":1e999999}`, true, 400, "error decoding patch: " + float},
		{"a huge generation", MergePatchType, `{"metadata":{"generation":1e999999}}`, true, 400, "error decoding patch: " + float},
		{"a huge number in a strategic merge patch", StrategicPatchType, `{"x":1e999999}`, true, 400, float},
		{"strategic, Ignore", StrategicPatchType, `{"x":1e999999}`, false, 400, float},
		{"a huge number in a JSON patch", JSONPatchType, `[{"op":"add","path":"/x","value":1e999999}]`, true, 400,
			"error decoding patch: json: cannot unmarshal number 1e999999 into Go struct field jsonPatchOp.value of type float64"},
		{"a JSON patch that is an object", JSONPatchType, `{"op":"add"}`, true, 400,
			"error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"},
		{"a JSON patch that is an object, Ignore", JSONPatchType, `{"op":"add"}`, false, 400,
			"json: cannot unmarshal object into Go value of type jsonpatch.Patch"},
		{"a path that is a number", JSONPatchType, `[{"op":"remove","path":5}]`, true, 400,
			"error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string"},
		{"a merge patch that is an array", MergePatchType, `[1]`, true, 400,
			"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"a merge patch that is null", MergePatchType, `null`, true, 400, "Invalid JSON Patch"},
		{"op bogus", JSONPatchType, `[{"op":"bogus","path":"/x"}]`, true, 422, rejected},
		{"remove of a missing path", JSONPatchType, `[{"op":"remove","path":"/nope"}]`, true, 422, rejected},
		{"a failed test", JSONPatchType, `[{"op":"test","path":"/kind","value":"Secret"}]`, true, 422, rejected},
		{"add under a missing parent", JSONPatchType, `[{"op":"add","path":"/a/b/c","value":"v"}]`, true, 422, rejected},
		{"move from a missing path", JSONPatchType, `[{"op":"move","from":"/nope","path":"/x"}]`, true, 422, rejected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apply, err := Func(c.patchType, []byte(c.patch), c.strictly)
			if err == nil {
				_, err = apply([]byte(testDoc))
			}
			var st *api.Status
			require.ErrorAs(t, err, &st)
			assert.Equal(t, c.code, st.Code)
			assert.Equal(t, c.message, st.Message)
			if c.code == 422 {
				assert.Equal(t, api.ReasonInvalid, st.Reason)
				assert.Equal(t, &api.StatusDetails{}, st.Details)
			}
		})
	}
	// Ignore does not decode a merge or JSON patch first: the number is
	// copied as it is, and the typed decoding of the result decides.
	for _, c := range [][2]string{{MergePatchType, `{"x":1e999999}`}, {JSONPatchType, `[{"op":"add","path":"/x","value":1e999999}]`}} {
		apply, err := Func(c[0], []byte(c[1]), false)
		require.NoError(t, err, c[0])
		out, err := apply([]byte(testDoc))
		require.NoError(t, err, c[0])
		assert.Contains(t, string(out), `"x":1e999999`, c[0])
	}
}

package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/fixtures"
)

// The recordings of a real kube-apiserver v1.37 live in the repository's
// testdata/fixtures (testdata/README.md says where they came from); the
// internal/fixtures package finds them and fails a test that asks for one
// that is missing.

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	return fixtures.Read(t, name)
}

// fixtureNames lists the recordings matching pattern that hold built-in
// API objects or watch streams of them. Left out: discovery and OpenAPI
// documents (not objects), and custom resources, which the real server
// serves as unstructured JSON with its keys sorted (crd-widget-*,
// crd-list-empty, watch-crd-*, the created v137-crontab), not in a
// built-in type's field order.
func fixtureNames(t testing.TB, pattern string) []string {
	t.Helper()
	var names []string
	for _, n := range fixtures.Names(t, pattern) {
		if hasAnyPrefix(n, "discovery-", "crd-discovery-", "kinds-discovery-", "v137-discovery-", "openapi-", "v137-openapi-",
			"crd-widget-", "crd-list-empty", "watch-crd-", "v137-crontab-create-warn-") {
			continue
		}
		names = append(names, n)
	}
	require.NotEmpty(t, names, "no fixtures match %s", pattern)
	return names
}

// wireForm is what our encoder must produce for a recorded body: the body
// without the one newline the server adds after compact JSON, and for the
// pretty-printed recordings (curl's User-Agent, ?pretty=true) the compact
// form of the same bytes.
func wireForm(t testing.TB, name string, body []byte) []byte {
	t.Helper()
	if strings.Contains(name, "pretty") {
		var buf bytes.Buffer
		require.NoError(t, json.Compact(&buf, body))
		return buf.Bytes()
	}
	require.True(t, bytes.HasSuffix(body, []byte("\n")), "%s: compact bodies end with a newline", name)
	return bytes.TrimSuffix(body, []byte("\n"))
}

// fixtureEvents returns every line of every watch stream recording.
func fixtureEvents(t testing.TB) map[string][]byte {
	t.Helper()
	lines := map[string][]byte{}
	for _, pattern := range []string{"watch-*.jsonl", "ws-*.jsonl"} {
		for _, name := range fixtureNames(t, pattern) {
			sc := bufio.NewScanner(bytes.NewReader(readFixture(t, name)))
			sc.Buffer(nil, 1<<20)
			for n := 1; sc.Scan(); n++ {
				lines[name+":"+itoa(n)] = append([]byte(nil), sc.Bytes()...)
			}
			require.NoError(t, sc.Err())
		}
	}
	return lines
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func itoa(n int) string { return FormatResourceVersion(uint64(n)) }

// Every recorded body that is a JSON object (objects, lists, tables,
// Statuses) decodes into Object and encodes back to the same bytes: field
// order, unknown fields, managedFields, escapes and all.
func TestFixturesRoundTripAsObject(t *testing.T) {
	for _, name := range fixtureNames(t, "*.json") {
		body := readFixture(t, name)
		if len(body) == 0 {
			continue
		}
		t.Run(name, func(t *testing.T) {
			var o Object
			require.NoError(t, json.Unmarshal(body, &o))
			got, err := json.Marshal(&o)
			require.NoError(t, err)
			assert.Equal(t, string(wireForm(t, name, body)), string(got))
		})
	}
}

func TestFixturesRoundTripAsList(t *testing.T) {
	names := append(fixtureNames(t, "list*.json"), "deletecollection-200.json")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, name)
			var l List
			require.NoError(t, json.Unmarshal(body, &l))
			require.NotEmpty(t, l.Metadata.ResourceVersion)
			for _, item := range l.Items {
				assert.Empty(t, item.Kind, "list items carry no kind")
				assert.NotEmpty(t, item.Metadata.Name)
			}
			got, err := json.Marshal(&l)
			require.NoError(t, err)
			assert.Equal(t, string(wireForm(t, name, body)), string(got))
		})
	}
}

func TestFixturesRoundTripAsStatus(t *testing.T) {
	names := append(fixtureNames(t, "error-*.json"), "delete-200.json")
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, name)
			var s Status
			require.NoError(t, json.Unmarshal(body, &s))
			assert.Equal(t, "Status", s.Kind)
			got, err := json.Marshal(&s)
			require.NoError(t, err)
			assert.Equal(t, string(wireForm(t, name, body)), string(got))
		})
	}
}

// Every line of every recorded watch stream (HTTP and WebSocket, including
// BOOKMARKs, ERROR/410 and kubectl's Table events) is one Event that encodes
// back to the same bytes (kube-apiserver 1.37 writes no zero
// creationTimestamp, ObjectMeta's omitzero, and neither do we).
func TestFixtureEventsRoundTrip(t *testing.T) {
	types := map[EventType]int{}
	for name, line := range fixtureEvents(t) {
		var e Event
		require.NoError(t, json.Unmarshal(line, &e), name)
		types[e.Type]++
		if e.Type == Error {
			require.NotNil(t, e.Status, name)
			assert.Nil(t, e.Object, name)
		} else {
			require.NotNil(t, e.Object, name)
			assert.NotEmpty(t, e.Object.Metadata.ResourceVersion, name)
		}
		got, err := json.Marshal(&e)
		require.NoError(t, err, name)
		assert.Equal(t, string(line), string(got), name)
		assert.Equal(t, string(line), string(e.AppendJSON(nil)), name)
	}
	for _, typ := range []EventType{Added, Modified, Deleted, Bookmark, Error} {
		assert.Positive(t, types[typ], "the recordings hold %s events", typ)
	}
}

func TestFixtureBookmarkAndInitialEventsEnd(t *testing.T) {
	var bookmarks []*Object
	for _, line := range fixtureEvents(t) {
		var e Event
		require.NoError(t, json.Unmarshal(line, &e))
		if e.Type == Bookmark {
			bookmarks = append(bookmarks, e.Object)
		}
	}
	require.NotEmpty(t, bookmarks)
	sawEnd := false
	for _, b := range bookmarks {
		assert.Empty(t, b.Metadata.Name, "a bookmark names no object")
		assert.True(t, b.Metadata.CreationTimestamp.IsZero())
		if b.Metadata.Annotations[InitialEventsEndAnnotation] == "true" {
			sawEnd = true
		}
	}
	assert.True(t, sawEnd, "watch-sendinitialevents.jsonl ends its initial events with an annotated bookmark")
}

// fixtureStatusCases builds, for every recorded Status, the same Status with
// our constructors from the same inputs.
func fixtureStatusCases(t *testing.T) map[string]*Status {
	t.Helper()
	cm := GroupResource{Resource: "configmaps"}
	listOptions := GroupKind{Group: "meta.k8s.io", Kind: "ListOptions"}
	_, selErr := ParseLabelSelector("app===demo")
	require.Error(t, selErr)
	_, rvErr := ParseResourceVersion("abc")
	require.Error(t, rvErr)
	continueToken := func(name string) string {
		var s Status
		require.NoError(t, json.Unmarshal(readFixture(t, name), &s))
		return s.Metadata.Continue
	}
	return map[string]*Status{
		"error-400-bad-labelselector.json":             NewBadRequest(selErr.Error()),
		"error-400-continue-with-resourceversion.json": NewBadRequest("specifying resource version is not allowed when using continue"),
		"error-400-malformed-json-body.json": NewBadRequest(`the object provided is unrecognized (must be of type ConfigMap): ` +
			`couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Con ...)`),
		"error-404-delete-notfound.json":    NewNotFound(cm, "beta"),
		"error-404-get-notfound.json":       NewNotFound(cm, "does-not-exist"),
		"error-404-namespace-notfound.json": NewNotFound(GroupResource{Resource: "namespaces"}, "fixtures"),
		"error-404-unknown-resource.json":   NewGenericNotFound(),
		"error-405-method-not-allowed.json": NewMethodNotSupported(),
		"error-409-alreadyexists.json":      NewAlreadyExists(cm, "alpha"),
		"error-409-conflict-stale-rv.json":  NewConflict(cm, "alpha", OptimisticLockErrorMsg),
		"error-409-delete-precondition.json": NewResourceVersionPreconditionConflict(
			GroupKind{Kind: "ConfigMap"}, "alpha", "1", recorded(t, "error-409-delete-precondition.json", `in record \((\d+)\)`)[0]),
		"error-410-expired-continue.json": NewContinueExpired(continueToken("error-410-expired-continue.json")),
		"error-410-expired-continue-earlier-capture-pretty.json": NewContinueExpired(
			continueToken("error-410-expired-continue-earlier-capture-pretty.json")),
		"error-410-expired-list-rv-exact.json":                        NewListExpired(),
		"error-410-expired-list-rv-exact-earlier-capture-pretty.json": NewListExpired(),
		"error-415-patch-wrong-content-type.json":                     NewGenericServerResponse(415, "415: Unsupported Media Type"),
		"error-422-invalid-name.json": NewInvalid(GroupKind{Kind: "ConfigMap"}, "Bad_Name", []StatusCause{
			FieldInvalid("metadata.name", "Bad_Name", strings.Join(IsDNS1123Subdomain("Bad_Name"), "; ")),
		}),
		"error-422-rvmatch-without-rv.json": NewInvalid(listOptions, "", []StatusCause{
			FieldForbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"),
		}),
		"error-422-sendinitialevents-without-rvmatch.json": NewInvalid(listOptions, "", []StatusCause{
			FieldForbidden("resourceVersionMatch", "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"),
		}),
		// kube-apiserver 1.37 answers a LIST's unparsable resourceVersion
		// with 400 (1.32 answered 500), a WATCH's still with 500.
		"error-400-list-bad-rv.json":  NewBadRequest("invalid resource version: " + rvErr.Error()),
		"error-500-watch-bad-rv.json": ErrorToStatus(rvErr),
		"error-504-list-future-rv.json": NewTooLargeResourceVersion(1000000,
			recordedUint(t, "error-504-list-future-rv.json", `current: (\d+)`)[0], 1),
		"delete-200.json": NewDeleted(cm, "beta", recorded(t, "delete-200.json", `"uid":"([^"]+)"`)[0]),
	}
}

func TestConstructorsReproduceFixtures(t *testing.T) {
	cases := fixtureStatusCases(t)
	// Every recorded Status has a constructor.
	for _, name := range append(fixtureNames(t, "error-*.json"), "delete-200.json") {
		assert.Contains(t, cases, name, "no constructor reproduces %s", name)
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := json.Marshal(s)
			require.NoError(t, err)
			assert.Equal(t, string(wireForm(t, name, readFixture(t, name))), string(got))
		})
	}
}

// recorded returns the submatches of re in a recording: the numbers and
// names that differ on every recording run (a uid, the revision a watch
// cache started at), so the constructors are checked against this run's.
func recorded(t testing.TB, name, re string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindSubmatch(readFixture(t, name))
	require.NotNil(t, m, "%s has no %s", name, re)
	out := make([]string, len(m)-1)
	for i, b := range m[1:] {
		out[i] = string(b)
	}
	return out
}

func recordedUint(t testing.TB, name, re string) []uint64 {
	t.Helper()
	var out []uint64
	for _, s := range recorded(t, name, re) {
		n, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
}

func TestConstructorsReproduceWatchErrors(t *testing.T) {
	for _, name := range []string{"watch-410-too-old-rv.jsonl", "watch-410-expired-earlier-capture.jsonl"} {
		rv := recordedUint(t, name, `too old resource version: (\d+) \((\d+)\)`)
		e := Event{Type: Error, Status: NewTooOldResourceVersion(rv[0], rv[1])}
		got, err := json.Marshal(&e)
		require.NoError(t, err)
		assert.Equal(t, string(wireForm(t, name, readFixture(t, name))), string(got), name)
	}
}

// The router's other refusals come out of NewGenericServerResponse too.
func TestGenericServerResponseMatchesSpecificConstructors(t *testing.T) {
	assert.Equal(t, NewGenericNotFound(), NewGenericServerResponse(404, "404 page not found"))
	assert.Equal(t, NewMethodNotSupported(), NewGenericServerResponse(405, "405: Method Not Allowed"))
}

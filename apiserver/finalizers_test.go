package apiserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// withoutDeletionTime replaces metadata.deletionTimestamp (a time, so never
// the recording's) by a marker saying it is set, for requireSameJSON.
func withoutDeletionTime(t *testing.T, b []byte) []byte {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(b, &v), "%s", b)
	if obj, ok := v["object"].(map[string]any); ok {
		v = obj
	}
	if md, ok := v["metadata"].(map[string]any); ok && md["deletionTimestamp"] != nil {
		md["deletionTimestamp"] = "<set>"
	}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	if bytes.HasSuffix(b, []byte("\n")) {
		out = append(out, '\n')
	}
	return out
}

// sameAsRecorded compares got with a recorded body, deletion time aside.
func sameAsRecorded(t *testing.T, want, got []byte) {
	t.Helper()
	assert.Equal(t, normalize(t, withoutDeletionTime(t, want)), normalize(t, withoutDeletionTime(t, got)), "got: %s", got)
}

func recordedEvents(t *testing.T, name string) [][]byte {
	t.Helper()
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(fixture(t, name)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func eventJSON(t *testing.T, ev api.Event) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": ev.Type, "object": json.RawMessage(ev.Object.AppendJSON(nil))})
	require.NoError(t, err)
	return b
}

// A ConfigMap with a finalizer, deleted, then released: exactly the
// recorded sequence of answers and watch events.
func TestFinalizerHoldsDeletionAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	w := ts.watch(chunked, cms2+"?watch=1&resourceVersion="+strconv.FormatInt(ts.revision(), 10))
	defer w.close()

	created := ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fin-cm","finalizers":["example.com/hold"]},"data":{"a":"1","b":"2"}}`})
	requireSameJSON(t, "finalizer-create-configmap-201.json", created.mustCode(t, http.StatusCreated))

	before := time.Now()
	del := ts.do(req{method: "DELETE", path: cms2 + "/fin-cm"})
	after := time.Now()
	sameAsRecorded(t, fixture(t, "finalizer-delete-configmap-200.json"), del.mustCode(t, http.StatusOK))
	marked := del.object(t)
	require.NotNil(t, marked.Metadata.DeletionTimestamp)
	stampedBetween(t, *marked.Metadata.DeletionTimestamp, before, after)
	assert.Equal(t, del.body, ts.get(cms2+"/fin-cm").mustCode(t, http.StatusOK), "the object stays as it is")

	again := ts.do(req{method: "DELETE", path: cms2 + "/fin-cm"})
	assert.Equal(t, del.body, again.mustCode(t, http.StatusOK), "a second delete changes nothing")

	more := ts.do(req{method: "PATCH", path: cms2 + "/fin-cm", body: `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	more.mustCode(t, http.StatusUnprocessableEntity)
	assert.Contains(t, more.status(t).Message, `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/more"}`)

	released := ts.do(req{method: "PATCH", path: cms2 + "/fin-cm", body: `{"metadata":{"finalizers":null}}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}})
	sameAsRecorded(t, fixture(t, "finalizer-patch-remove-200.json"), released.mustCode(t, http.StatusOK))
	assert.Equal(t, marked.Metadata.ResourceVersion, released.object(t).Metadata.ResourceVersion, "the answer carries the old resourceVersion")
	requireSameJSON(t, "finalizer-get-after-removal-404.json", ts.get(cms2+"/fin-cm").mustCode(t, http.StatusNotFound))

	want := recordedEvents(t, "watch-finalizer-configmap.jsonl")
	require.Len(t, want, 3)
	var rvs []int64
	for _, rec := range want {
		ev := w.next()
		sameAsRecorded(t, rec, eventJSON(t, ev))
		rvs = append(rvs, revisionOf(ev.Object))
	}
	assert.Equal(t, []int64{rvs[0], rvs[0] + 1, rvs[0] + 2}, rvs, "create, mark, delete: three revisions, no MODIFIED for the release")
}

const pods2 = "/api/v1/namespaces/fixtures2/pods"

func podJSON(name, nodeName string) string {
	node := ""
	if nodeName != "" {
		node = `"nodeName":"` + nodeName + `",`
	}
	return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"` + name + `"},"spec":{` + node + `"containers":[{"name":"main","image":"busybox"}]}}`
}

// An unscheduled Pod is deleted at once, but through a mark: MODIFIED
// with deletionTimestamp, then DELETED (watch-pod-delete-unscheduled.jsonl).
func TestUnscheduledPodDeletedThroughAMark(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	w := ts.watch(chunked, pods2+"?watch=1&resourceVersion="+strconv.FormatInt(ts.revision(), 10))
	defer w.close()
	ts.do(req{method: "POST", path: pods2, body: podJSON("grace-pod", "")}).mustCode(t, http.StatusCreated)

	del := ts.do(req{method: "DELETE", path: pods2 + "/grace-pod"})
	del.mustCode(t, http.StatusOK)
	gone := del.object(t)
	require.NotNil(t, gone.Metadata.DeletionTimestamp)
	assert.JSONEq(t, `0`, string(metaField(t, del.body, "deletionGracePeriodSeconds")))
	ts.get(pods2+"/grace-pod").mustCode(t, http.StatusNotFound)

	types := []api.EventType{}
	var last api.Event
	for range recordedEvents(t, "watch-pod-delete-unscheduled.jsonl") {
		last = w.next()
		types = append(types, last.Type)
	}
	assert.Equal(t, []api.EventType{api.Added, api.Modified, api.Deleted}, types)
	// The real server answers with the deletion's revision; the store's
	// Delete returns the last stored state with its own (one less).
	assert.Equal(t, revisionOf(last.Object)-1, revisionOf(gone), "the answer is the last stored state")
	wantMeta := metaKeys(t, fixture(t, "pod-delete-unscheduled-200.json"))
	assert.Equal(t, wantMeta, metaKeys(t, del.body))
}

// A Pod on a node waits out its grace period; a delete with
// gracePeriodSeconds 0 finishes it (watch-pod-delete-bound-graceful.jsonl).
func TestBoundPodGracefulDeletion(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	w := ts.watch(chunked, pods2+"?watch=1&resourceVersion="+strconv.FormatInt(ts.revision(), 10))
	defer w.close()
	ts.do(req{method: "POST", path: pods2, body: podJSON("bound-pod", "fake-node")}).mustCode(t, http.StatusCreated)

	before := time.Now()
	graceful := ts.do(req{method: "DELETE", path: pods2 + "/bound-pod"})
	after := time.Now()
	graceful.mustCode(t, http.StatusOK)
	obj := graceful.object(t)
	require.NotNil(t, obj.Metadata.DeletionTimestamp)
	stampedBetween(t, *obj.Metadata.DeletionTimestamp, before.Add(30*time.Second), after.Add(30*time.Second))
	assert.JSONEq(t, `30`, string(metaField(t, graceful.body, "deletionGracePeriodSeconds")))
	ts.get(pods2+"/bound-pod").mustCode(t, http.StatusOK)
	assert.Equal(t, metaKeys(t, fixture(t, "pod-delete-bound-graceful-200.json")), metaKeys(t, graceful.body))

	longer := ts.do(req{method: "DELETE", path: pods2 + "/bound-pod?gracePeriodSeconds=60"})
	assert.Equal(t, graceful.body, longer.mustCode(t, http.StatusOK), "a delete may only shorten the wait")

	now := ts.do(req{method: "DELETE", path: pods2 + "/bound-pod", body: `{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0}`})
	now.mustCode(t, http.StatusOK)
	assert.JSONEq(t, `0`, string(metaField(t, now.body, "deletionGracePeriodSeconds")))
	ts.get(pods2+"/bound-pod").mustCode(t, http.StatusNotFound)

	var types []api.EventType
	for range recordedEvents(t, "watch-pod-delete-bound-graceful.jsonl") {
		types = append(types, w.next().Type)
	}
	assert.Equal(t, []api.EventType{api.Added, api.Modified, api.Modified, api.Deleted}, types)
}

// A ConfigMap without finalizers goes at once: one DELETED, a Status.
func TestPlainDeleteUnchanged(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"plain"}}`}).mustCode(t, http.StatusCreated)
	w := ts.watch(chunked, cms2+"?watch=1&resourceVersion="+strconv.FormatInt(ts.revision(), 10))
	defer w.close()
	del := ts.do(req{method: "DELETE", path: cms2 + "/plain?propagationPolicy=Background"})
	del.mustCode(t, http.StatusOK)
	assert.Equal(t, "Success", del.status(t).Status)
	assert.Equal(t, api.Deleted, w.next().Type)
}

func metaField(t *testing.T, body []byte, name string) json.RawMessage {
	t.Helper()
	var v struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &v))
	return v.Metadata[name]
}

// metaKeys lists the metadata members, managedFields aside.
func metaKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var v struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(body, &v))
	var keys []string
	for k := range v.Metadata {
		if k != "managedFields" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// stampedBetween asserts that a timestamp the server set while a request
// ran lies between the times taken before and after it, at the whole
// seconds an RFC 3339 timestamp keeps. How long the request took does not
// matter, so a busy machine cannot fail it.
func stampedBetween(t *testing.T, stamp, before, after time.Time) {
	t.Helper()
	assert.False(t, stamp.Before(before.Truncate(time.Second)), "%v is before %v", stamp, before)
	assert.False(t, stamp.After(after), "%v is after %v", stamp, after)
}

// propagationPolicy Orphan or Foreground marks the object with the garbage
// collector's finalizer, as kube-apiserver 1.37.2 answers (checked against
// the reference): the DELETE answers the marked object; a later DELETE
// may change the policy, and Background, leaving no finalizer, deletes it.
// Both policy and orphanDependents is 422; Events get no finalizer.
func TestDeleteAddsGarbageCollectorFinalizers(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures2")
	for _, name := range []string{"o", "f"} {
		ts.do(req{method: "POST", path: cms2, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"}}`}).mustCode(t, http.StatusCreated)
	}
	finalizers := func(r response) []string {
		var f []string
		require.NoError(t, json.Unmarshal(metaField(t, r.body, "finalizers"), &f))
		return f
	}
	orphan := ts.do(req{method: "DELETE", path: cms2 + "/o?propagationPolicy=Orphan"})
	orphan.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"orphan"}, finalizers(orphan))
	assert.NotNil(t, orphan.object(t).Metadata.DeletionTimestamp)
	assert.JSONEq(t, "0", string(metaField(t, orphan.body, "deletionGracePeriodSeconds")))
	bg := ts.do(req{method: "DELETE", path: cms2 + "/o?propagationPolicy=Background"})
	assert.Equal(t, "Success", bg.status(t).Status, "no finalizer left: deleted")
	ts.get(cms2+"/o").mustCode(t, http.StatusNotFound)

	fg := ts.do(req{method: "DELETE", path: cms2 + "/f?propagationPolicy=Foreground"})
	fg.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"foregroundDeletion"}, finalizers(fg))
	again := ts.do(req{method: "DELETE", path: cms2 + "/f?orphanDependents=true"})
	again.mustCode(t, http.StatusOK)
	assert.Equal(t, []string{"orphan"}, finalizers(again), "a later DELETE changes the policy")

	both := ts.do(req{method: "DELETE", path: cms2 + "/f", body: `{"propagationPolicy":"Orphan","orphanDependents":true}`})
	both.mustCode(t, http.StatusUnprocessableEntity)
	assert.Equal(t, `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set`,
		both.status(t).Message)

	ts.do(req{method: "POST", path: "/api/v1/namespaces/fixtures2/events", body: `{"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},"involvedObject":{"kind":"ConfigMap","name":"f"}}`}).mustCode(t, http.StatusCreated)
	ev := ts.do(req{method: "DELETE", path: "/api/v1/namespaces/fixtures2/events/e?propagationPolicy=Orphan"})
	assert.Equal(t, "Success", ev.status(t).Status, "Events have no garbage collection policy")
}

package apiserver

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// Events are not watch-cached, as in kube-apiserver 1.37.2
// (registry.Resource.NotWatchCached): every watch of them is a store watch
// of its own, as the recordings kinds-watch-events-*.jsonl show the real
// server's etcd watch.

const kindsEvents = "/api/v1/namespaces/kinds/events"

// coreEventJSON is a core Event about Deployment web.
func coreEventJSON(name string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":%q},`+
		`"involvedObject":{"kind":"Deployment","namespace":"kinds","name":"web"},"reason":"R","message":"m","type":"Normal"}`, name)
}

func (ts *testServer) createEvent(name string) *api.Object {
	ts.t.Helper()
	return ts.do(req{method: http.MethodPost, path: kindsEvents, body: coreEventJSON(name)}).object(ts.t)
}

func TestEventsHaveNoWatchCache(t *testing.T) {
	ts := startServer(t, Config{})
	for _, c := range ts.debugView().Caches {
		assert.NotContains(t, []string{"events", "events.events.k8s.io"}, c.Resource)
	}
	assert.NotEmpty(t, ts.debugView().Caches, "the other resources are cached")
}

// kinds-watch-events-rv0.jsonl: from resourceVersion 0, the current events
// as ADDED, then the changes; kinds-watch-events-from-rv.jsonl: from a
// list's resourceVersion with bookmarks allowed, the change and then the
// end at the timeout with no bookmark, where a watch cache sends one
// before the deadline.
func TestEventsWatchIsAStoreWatch(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	first := ts.createEvent("web.1")

	w := ts.watch(chunked, kindsEvents+"?watch=1&resourceVersion=0&timeoutSeconds=300")
	requireEvent(t, w.next(), api.Added, "web.1")
	second := ts.createEvent("web.2")
	requireEvent(t, w.next(), api.Added, "web.2")
	w.close()

	w = ts.watch(chunked, kindsEvents+"?watch=1&resourceVersion="+first.Metadata.ResourceVersion+"&allowWatchBookmarks=true&timeoutSeconds=3")
	added := requireEvent(t, w.next(), api.Added, "web.2")
	assert.Equal(t, second.Metadata.ResourceVersion, added.Metadata.ResourceVersion)
	assert.Equal(t, "Event", added.Kind)
	require.NoError(t, w.ended(), "the end at the timeout, no bookmark before it")

	// A watch-list: the events, then the initial-events-end bookmark at the
	// revision they were read at.
	w = ts.watch(chunked, kindsEvents+"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=300")
	requireEvent(t, w.next(), api.Added, "web.1")
	requireEvent(t, w.next(), api.Added, "web.2")
	bm := w.next()
	require.Equal(t, api.Bookmark, bm.Type)
	assert.Equal(t, "true", bm.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
	assert.Equal(t, strconv.FormatInt(ts.revision(), 10), bm.Object.Metadata.ResourceVersion)
	assert.Equal(t, "Event", bm.Object.Kind)
	w.close()

	// A selector: an event that stops matching is DELETED.
	w = ts.watch(chunked, kindsEvents+"?watch=1&resourceVersion="+second.Metadata.ResourceVersion+"&fieldSelector=reason%3DR")
	ts.do(req{method: http.MethodPatch, path: kindsEvents + "/web.1", body: `{"reason":"Other"}`,
		header: map[string]string{"Content-Type": "application/merge-patch+json"}}).mustCode(t, http.StatusOK)
	gone := requireEvent(t, w.next(), api.Deleted, "web.1")
	assert.Equal(t, strconv.FormatInt(ts.revision(), 10), gone.Metadata.ResourceVersion, "stamped with the change's revision")
	assert.JSONEq(t, `"R"`, string(gone.Get("reason")), "the state before the change")
}

// A compacted resourceVersion is etcd's 410, in-stream
// (etcd3/errors.go interpretWatchError), not the watch cache's "too old
// resource version: N (M)".
func TestEventsWatchFromACompactedRevision(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	old := ts.createEvent("web.1")
	ts.createEvent("web.2")
	ts.Faults().CompactNow()
	w := ts.watch(chunked, kindsEvents+"?watch=1&resourceVersion="+old.Metadata.ResourceVersion)
	ev := w.next()
	require.Equal(t, api.Error, ev.Type)
	assert.Equal(t, int32(http.StatusGone), ev.Status.Code)
	assert.Equal(t, api.ReasonExpired, ev.Status.Reason)
	assert.Equal(t, "The resourceVersion for the provided watch is too old.", ev.Status.Message)
	require.NoError(t, w.ended(), "the stream ends after the ERROR event")
}

// Lists are the store's: a limit pages even from resourceVersion 0 (the
// watch cache would ignore it), and a resourceVersion the store has not
// reached is 504 at once.
func TestEventsListFromTheStore(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	ts.createEvent("web.1")
	ts.createEvent("web.2")
	l := ts.get(kindsEvents + "?resourceVersion=0&limit=1").list(t)
	assert.Len(t, l.Items, 1)
	assert.NotEmpty(t, l.Metadata.Continue)
	future := strconv.FormatInt(ts.revision()+10, 10)
	st := response{code: http.StatusGatewayTimeout, body: ts.get(kindsEvents+"?resourceVersion="+future).mustCode(t, http.StatusGatewayTimeout)}.status(t)
	assert.Contains(t, st.Message, "Too large resource version")
	ts.get(kindsEvents+"/web.1?resourceVersion="+future).mustCode(t, http.StatusGatewayTimeout)
}

// Stopping the server ends a store watch cleanly, as it ends the watch
// caches' watches.
func TestStopEndsEventWatchesCleanly(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	ts.createEvent("web.1")
	w := ts.watch(chunked, kindsEvents+"?watch=1&timeoutSeconds=300")
	requireEvent(t, w.next(), api.Added, "web.1")
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, ts.Stop(ctx))
	assert.NoError(t, w.ended())
}

// fieldsOf is an object's fields other than apiVersion, kind and metadata,
// in order, as written.
func fieldsOf(t *testing.T, o *api.Object) []string {
	t.Helper()
	out := make([]string, 0, len(o.Fields))
	for _, f := range o.Fields {
		out = append(out, f.Name+"="+string(f.Value))
	}
	return out
}

// The two Event APIs are one collection, converted as kube-apiserver
// 1.37.2 converts (kinds-eventsv1-list.json, kinds-eventsv1-list-as-core.json):
// every Event read through events.k8s.io, and one written through it read
// through core/v1, is field for field and in order what the real server
// answered.
func TestEventsAreOneCollectionAsRecorded(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	script := controllerKindsScript(t)
	ts.replay(script, "kinds-event-create-201.json").mustCode(t, http.StatusCreated)
	created := ts.replay(script, "kinds-eventsv1-create-201.json")
	created.mustCode(t, http.StatusCreated)
	recorded := response{code: http.StatusCreated, body: fixture(t, "kinds-eventsv1-create-201.json")}
	assert.Equal(t, fieldsOf(t, recorded.object(t)), fieldsOf(t, created.object(t)))

	for file, convertedOnly := range map[string]string{
		"kinds-eventsv1-list.json":         "", // both converted from the stored core Events
		"kinds-eventsv1-list-as-core.json": "web.2",
	} {
		got := ts.replay(script, file).list(t)
		want := response{code: http.StatusOK, body: fixture(t, file)}.list(t)
		assert.Equal(t, want.APIVersion, got.APIVersion, file)
		require.Len(t, got.Items, len(want.Items), file)
		for i, w := range want.Items {
			g := got.Items[i]
			require.Equal(t, w.Metadata.Name, g.Metadata.Name, file)
			if convertedOnly == "" || convertedOnly == g.Metadata.Name {
				assert.Equal(t, fieldsOf(t, w), fieldsOf(t, g), "%s %s", file, g.Metadata.Name)
				continue
			}
			// Written through core/v1 and read through it: what the
			// client sent (the real server also writes its struct's
			// empty fields).
			for _, f := range g.Fields {
				assert.JSONEq(t, string(w.Get(f.Name)), string(f.Value), "%s %s %s", file, g.Metadata.Name, f.Name)
			}
		}
	}
}

// A watch through either API sees the Events written through the other,
// converted.
func TestEventsWatchAcrossAPIs(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	rv := strconv.FormatInt(ts.revision(), 10)
	v1 := ts.watch(chunked, "/apis/events.k8s.io/v1/namespaces/kinds/events?watch=1&resourceVersion="+rv+"&fieldSelector=regarding.name%3Dweb")
	core := ts.watch(chunked, kindsEvents+"?watch=1&resourceVersion="+rv)
	ts.createEvent("web.1")
	ts.do(req{method: http.MethodPost, path: "/apis/events.k8s.io/v1/namespaces/kinds/events", body: `{"apiVersion":"events.k8s.io/v1","kind":"Event",` +
		`"metadata":{"name":"web.2"},"eventTime":"2026-11-26T08:00:01.000001Z","reportingController":"example.com/controller",` +
		`"reportingInstance":"controller-1","action":"Scale","reason":"Scaled","regarding":{"kind":"Deployment","namespace":"kinds","name":"web"},` +
		`"note":"scaled","type":"Normal"}`}).mustCode(t, http.StatusCreated)

	ev := requireEvent(t, v1.next(), api.Added, "web.1")
	assert.Equal(t, "events.k8s.io/v1", ev.APIVersion)
	assert.JSONEq(t, `"m"`, string(ev.Get("note")))
	assert.JSONEq(t, `{"kind":"Deployment","namespace":"kinds","name":"web"}`, string(ev.Get("regarding")))
	requireEvent(t, v1.next(), api.Added, "web.2")

	requireEvent(t, core.next(), api.Added, "web.1")
	ev = requireEvent(t, core.next(), api.Added, "web.2")
	assert.Equal(t, "v1", ev.APIVersion)
	assert.JSONEq(t, `"scaled"`, string(ev.Get("message")))
	assert.JSONEq(t, `"example.com/controller"`, string(ev.Get("reportingComponent")))
	assert.JSONEq(t, `{"kind":"Deployment","namespace":"kinds","name":"web"}`, string(ev.Get("involvedObject")))

	// Deleted through one, gone from both.
	ts.do(req{method: http.MethodDelete, path: "/apis/events.k8s.io/v1/namespaces/kinds/events/web.1"}).mustCode(t, http.StatusOK)
	ts.get(kindsEvents+"/web.1").mustCode(t, http.StatusNotFound)
	requireEvent(t, core.next(), api.Deleted, "web.1")
}

// kubectl get events and kubectl events (both read core/v1) show an Event
// whichever API wrote it.
func TestKubectlShowsEventsOfBothAPIs(t *testing.T) {
	kubectlFullRunOnly(t)
	ts := startServer(t, Config{})
	ts.createNamespace("kinds")
	script := controllerKindsScript(t)
	ts.replay(script, "kinds-event-create-201.json").mustCode(t, http.StatusCreated)
	ts.replay(script, "kinds-eventsv1-create-201.json").mustCode(t, http.StatusCreated)
	k := newKubectl(t, ts)
	for _, args := range [][]string{{"get", "events", "-n", "kinds"}, {"events", "-n", "kinds"}} {
		out := k.run(args...)
		assert.Contains(t, out, "ScalingReplicaSet", "kubectl %v", args)
		assert.Contains(t, out, "Scaled up replica set web-rs from 0 to 1", "kubectl %v", args)
		assert.Contains(t, out, "Scaled ", "kubectl %v: the events.k8s.io one", args)
		assert.Contains(t, out, "scaled", "kubectl %v: its note", args)
	}
}

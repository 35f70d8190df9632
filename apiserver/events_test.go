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

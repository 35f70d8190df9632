package apiserver

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// A watch-list (sendInitialEvents=true with allowWatchBookmarks=true) from
// a client that accepts gzip is compressed in 1.37 (WatchListCompression,
// beta and on; endpoints/handlers/watch.go): Content-Encoding: gzip,
// Vary: Accept-Encoding, and the body a series of complete gzip members,
// one per flush, so each event can be read as soon as its member arrives.
func TestWatchListIsGzipped(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	alpha := ts.createConfigMap("fixtures", "alpha", nil, map[string]string{"k": "v"})
	const watchList = "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=600"
	resp := ts.openWatch(cms+watchList, "gzip, deflate")
	defer resp.Body.Close()
	assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
	assert.Equal(t, "Accept-Encoding", resp.Header.Get("Vary"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))

	// The initial events and the bookmark that ends them: one member or
	// more (a busy server may flush in between), each complete alone.
	br := bufio.NewReader(resp.Body)
	var initial []api.Event
	for len(initial) == 0 || initial[len(initial)-1].Type != api.Bookmark {
		initial = append(initial, readGzipMember(t, br)...)
	}
	require.Len(t, initial, 2)
	assert.Equal(t, api.Added, initial[0].Type)
	assert.Equal(t, alpha.Metadata.UID, initial[0].Object.Metadata.UID)
	assert.Equal(t, "true", initial[1].Object.Metadata.Annotations[api.InitialEventsEndAnnotation])

	// A live event comes in a member of its own, readable before anything
	// else is written (a periodic bookmark, on a slow run, in another).
	beta := ts.createConfigMap("fixtures", "beta", nil, nil)
	var live []api.Event
	for len(live) == 0 {
		for _, ev := range readGzipMember(t, br) {
			if ev.Type != api.Bookmark {
				live = append(live, ev)
			}
		}
	}
	require.Len(t, live, 1)
	assert.Equal(t, api.Added, live[0].Type)
	assert.Equal(t, beta.Metadata.UID, live[0].Object.Metadata.UID)
}

// Only a watch-list is compressed, and only for a client whose
// Accept-Encoding has the token gzip as ContentEncodingSupported reads it
// (endpoints/handlers/responsewriters/compression.go: no quality values).
func TestOnlyWatchListsAreGzipped(t *testing.T) {
	ts := startServer(t, Config{})
	ts.createNamespace("fixtures")
	const list = "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
	cases := []struct {
		name, query, acceptEncoding string
		gzipped                     bool
	}{
		{"watch-list", list + "&allowWatchBookmarks=true", "gzip", true},
		{"gzip among others", list + "&allowWatchBookmarks=true", "br, gzip", true},
		{"no Accept-Encoding", list + "&allowWatchBookmarks=true", "", false},
		{"gzip with a quality value", list + "&allowWatchBookmarks=true", "gzip;q=1.0", false},
		{"initial events without bookmarks", list, "gzip", false},
		// A watch from no resourceVersion is defaulted to a watch-list
		// (TestLegacyWatchIsAWatchList), as the real 1.37.2 compresses it.
		{"a watch from no resourceVersion", "&allowWatchBookmarks=true", "gzip", true},
		{"a watch from a resourceVersion", "&allowWatchBookmarks=true&resourceVersion=" + strconv.FormatInt(ts.revision(), 10), "gzip", false},
		{"one asking for no initial events", "&allowWatchBookmarks=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan", "gzip", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := ts.openWatch(cms+"?watch=1&timeoutSeconds=600"+c.query, c.acceptEncoding)
			defer resp.Body.Close()
			assert.Equal(t, c.gzipped, resp.Header.Get("Content-Encoding") == "gzip", "%v", resp.Header)
			assert.Equal(t, c.gzipped, resp.Header.Get("Vary") == "Accept-Encoding", "%v", resp.Header)
		})
	}
}

// openWatch starts a watch with the given Accept-Encoding (none if empty)
// and returns the response once its headers are in. The test server's
// client decompresses nothing, so the body is what the server wrote.
// safetyTimeout only turns a hang into a failure.
func (ts *testServer) openWatch(path, acceptEncoding string) *http.Response {
	ts.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	ts.t.Cleanup(cancel)
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL()+path, nil)
	require.NoError(ts.t, err)
	hr.Header.Set("User-Agent", "fixture-recorder")
	hr.Header.Set("Accept", "application/json")
	if acceptEncoding != "" {
		hr.Header.Set("Accept-Encoding", acceptEncoding)
	}
	resp, err := ts.client.Do(hr)
	require.NoError(ts.t, err)
	require.Equal(ts.t, http.StatusOK, resp.StatusCode)
	return resp
}

// readGzipMember reads one complete gzip member from br and returns the
// watch events it holds.
func readGzipMember(t *testing.T, br *bufio.Reader) []api.Event {
	t.Helper()
	zr, err := gzip.NewReader(br)
	require.NoError(t, err)
	zr.Multistream(false)
	b, err := io.ReadAll(zr)
	require.NoError(t, err, "a complete member")
	var events []api.Event
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var ev api.Event
		require.NoError(t, dec.Decode(&ev))
		events = append(events, ev)
	}
	return events
}

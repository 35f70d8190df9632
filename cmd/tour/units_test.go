package main

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/narrate"
)

// The wiretap finds the watch events in raw reads: after the response
// headers, several chunks in one read, an ERROR Status; it ignores partial
// chunks and bytes that are not events.
func TestWiretapInspect(t *testing.T) {
	added := `{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"demo","namespace":"default","resourceVersion":"5"}}}` + "\n"
	gone := `{"type":"ERROR","object":{"kind":"Status","status":"Failure","reason":"Expired","code":410}}` + "\n"
	chunk := func(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }
	tests := []struct {
		name string
		read string
		want []string // wireEvent summaries, in order
	}{
		{"headers then a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk(added),
			[]string{"ADDED default/demo 5"}},
		{"two chunks in one read", chunk(added) + chunk(gone), []string{"ADDED default/demo 5", "ERROR 410"}},
		{"a partial chunk", chunk(added)[:40], nil},
		{"headers only", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n", nil},
		{"not an event", chunk(`{"kind":"ConfigMapList","items":[]}`), nil},
		{"the terminating chunk", "0\r\n\r\n", nil},
		{"garbage", "zz\r\nnothing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var out bytes.Buffer
			tap := &wiretap{tr: narrate.New(&out, narrate.WithoutTimes()), seen: func(e wireEvent) {
				got = append(got, fmt.Sprintf("%s %s %s", e.typ, e.key, e.rv))
				if e.code != 0 {
					got[len(got)-1] = fmt.Sprintf("%s %d", e.typ, e.code)
				}
			}}
			tap.inspect([]byte(tc.read))
			assert.Equal(t, tc.want, got)
			assert.Equal(t, len(tc.want), strings.Count(out.String(), "client read chunk"))
		})
	}
}

// The spotlight keeps the followed objects and the watch's life, and drops
// the routine lines.
func TestSpotlight(t *testing.T) {
	s := &spotlight{follow: []string{"default/demo"}}
	tests := []struct {
		layer, line string
		trip        bool
		want        bool
	}{
		{narrate.Store, "rev 5 ADDED /registry/configmaps/default/demo", false, true},
		{narrate.Store, "rev 6 ADDED /registry/configmaps/default/busy", false, false},
		{narrate.Store, "watch /registry/pods/ from rev 3: live", false, false},
		{narrate.WatchCache, "configmaps: rev 5 ADDED /registry/configmaps/default/demo: sent to 1 of 1 watchers", false, false},
		{narrate.WatchCache, "configmaps: rev 5 ADDED /registry/configmaps/default/demo: sent to 1 of 1 watchers", true, true},
		{narrate.WatchCache, "configmaps: watch from rev 7: too old, oldest replayable is 12: 410", false, true},
		{narrate.WatchCache, "pods: fault: killed 0 watch connections", false, false},
		{narrate.HTTP, "watch 1: wrote 244 bytes, 1 frames (flushed: true)", false, false},
		{narrate.HTTP, "watch 1: wrote 244 bytes, 1 frames (flushed: true)", true, true},
		{narrate.HTTP, "watch 1: timeout after 3s: ending the response (terminating chunk)", false, true},
		{narrate.HTTP, "GET /api/v1/namespaces/default/configmaps?limit=500&resourceVersion=0 → 200", false, true},
		{narrate.HTTP, "GET /api/v1/namespaces/default/configmaps?allowWatchBookmarks=true&watch=true → 200", false, false},
		{narrate.HTTP, "apiserver listening on http://127.0.0.1:1", false, false},
		{narrate.StreamWatcher, "stream ended (EOF): closing ResultChan", false, true},
		{narrate.StreamWatcher, "ADDED default/busy rv=9", false, false},
		{narrate.Reflector, "configmaps: event ADDED default/busy rv=9", false, false},
		{narrate.Reflector, "configmaps: event BOOKMARK rv=5", false, true},
		{narrate.Reflector, "configmaps: backoff 1.2s, then re-list", false, true},
		{narrate.DeltaFIFO, "queued Updated default/demo (1 delta)", false, true},
		{narrate.DeltaFIFO, "queued Updated default/busy (1 delta)", false, false},
		{narrate.Indexer, "indexed default/demo rv=5 (2 cached)", false, false},
		{narrate.Handler, "tour UPDATE default/demo rv=5→6", false, true},
		{networkLayer, "cable unplugged", false, true},
	}
	for _, tc := range tests {
		s.trip.Store(tc.trip)
		assert.Equal(t, tc.want, s.keep(tc.layer, tc.line), "%s %q (trip %v)", tc.layer, tc.line, tc.trip)
	}
	s.quiet.Store(true)
	assert.False(t, s.keep(networkLayer, "anything"), "quiet drops everything")
	all := &spotlight{all: true}
	assert.True(t, all.keep(narrate.Store, "watch /registry/pods/ from rev 3: live"), "-all keeps everything")
}

// Prose wraps at the width, and colour escapes take no room.
func TestWrap(t *testing.T) {
	var b strings.Builder
	wrap(&b, "   \x1b[1;33mNotice:\x1b[0m ", strings.Repeat("word ", 40))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	require.Greater(t, len(lines), 2)
	for _, l := range lines {
		assert.LessOrEqual(t, visibleLen(l), width, "%q", l)
	}
	assert.True(t, strings.HasPrefix(lines[1], strings.Repeat(" ", len("   Notice: "))+"word"), "%q", lines[1])
}

// A printed narration line is split into layer and message, with or
// without colour; anything else is not narration.
func TestNarrationParsing(t *testing.T) {
	tests := []struct {
		line, layer, msg string
		ok               bool
	}{
		{"+  0.002s store         rev 5 ADDED /registry/configmaps/default/demo\n", "store", "rev 5 ADDED /registry/configmaps/default/demo", true},
		{"+ 12.345s \x1b[33mdeltafifo     \x1b[0mqueued Added default/demo (1 delta)\n", "deltafifo", "queued Added default/demo (1 delta)", true},
		{"━━ 2. One event's trip ━━━━\n", "", "", false},
		{"   Notice: one number travels the whole way\n", "", "", false},
	}
	for _, tc := range tests {
		layer, msg, ok := narration(tc.line)
		assert.Equal(t, tc.ok, ok, "%q", tc.line)
		assert.Equal(t, tc.layer, layer, "%q", tc.line)
		assert.Equal(t, tc.msg, msg, "%q", tc.line)
	}
}

// Each step of the trip is recognised from its layer's line.
func TestTripStep(t *testing.T) {
	tests := []struct{ layer, msg, want string }{
		{"store", "rev 5 ADDED /registry/configmaps/default/demo", "store"},
		{"http", "CREATE configmaps default/demo → rv 5", ""},
		{"http", "watch 1: wrote 244 bytes, 1 frames (flushed: true)", "http (server wrote)"},
		{"http", `client read chunk "f4\r\n" + 244 bytes {…default/demo…}`, "http (client read)"},
		{"handler", "tour ADD default/demo rv=5", "handler"},
		{"handler", "tour ADD default/alpha rv=4", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tripStep(tc.layer, tc.msg, "default/demo"), "%s %q", tc.layer, tc.msg)
	}
	e := newEvidence()
	assert.Equal(t, tripSteps, e.missingTripSteps())
	for _, s := range tripSteps {
		e.tripSteps[s] = true
	}
	assert.Empty(t, e.missingTripSteps())
}

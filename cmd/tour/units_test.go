package main

import (
	"bytes"
	"fmt"
	"slices"
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
		{"the terminating chunk", "0\r\n\r\n", []string{"END"}},
		{"garbage", "zz\r\nnothing", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			var out bytes.Buffer
			tap := &wiretap{tr: narrate.New(&out, narrate.WithoutTimes()), seen: func(e wireEvent) {
				got = append(got, fmt.Sprintf("%s %s %s", e.typ, e.key, e.rv))
				if e.end {
					got[len(got)-1] = "END"
				}
				if e.code != 0 {
					got[len(got)-1] = fmt.Sprintf("%s %d", e.typ, e.code)
				}
			}}
			tap.inspect([]byte(tc.read))
			assert.Equal(t, tc.want, got)
			events := len(tc.want)
			if slices.Contains(tc.want, "END") {
				events-- // the end is not narrated as a chunk
			}
			assert.Equal(t, events, strings.Count(out.String(), "client read chunk"))
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
		{narrate.Queue, "queued Updated default/demo (1 delta)", false, true},
		{narrate.Queue, "queued Updated default/busy (1 delta)", false, false},
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
		{"+ 12.345s \x1b[33mqueue         \x1b[0mqueued Added default/demo (1 delta)\n", "queue", "queued Added default/demo (1 delta)", true},
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

// A line wider than maxColumns is folded at a space (or & / ,), each
// piece at most maxColumns wide, the rest indented to the message column;
// nothing is lost, and colour escapes take no room.
func TestFold(t *testing.T) {
	url := "watch open (http) /api/v1/namespaces/default/configmaps?allowWatchBookmarks=true&resourceVersion=4&timeoutSeconds=3&watch=true"
	tests := []struct {
		name, in string
		lines    int
	}{
		{"short", "+  0.001s store         rev 5 ADDED /registry/configmaps/default/demo\n", 1},
		{"a long URL", "+  0.021s streamwatcher " + url + "\n", 3},
		{"coloured", "+  0.021s \x1b[36mstreamwatcher \x1b[0m" + url + "\n", 3},
		{"prose", "   " + strings.Repeat("word ", 30) + "\n", 2},
		{"no break character", "+  0.021s http          " + strings.Repeat("x", 150) + "\n", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := fold(tc.in)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			assert.Len(t, lines, tc.lines, out)
			for i, l := range lines {
				assert.LessOrEqual(t, visibleLen(l), maxColumns, "%q", l)
				if i > 0 && strings.HasPrefix(tc.in, "+") {
					assert.True(t, strings.HasPrefix(l, strings.Repeat(" ", messageColumn)) && l[messageColumn] != ' ', "%q", l)
				}
			}
			squash := func(s string) string { return strings.Join(strings.Fields(s), "") }
			assert.Equal(t, squash(tc.in), squash(out), "nothing is lost")
			assert.True(t, strings.HasSuffix(out, "\n"))
		})
	}
}

// The frame tap skips the 101 answer and cuts websocket frames, however
// the reads split them: 7-bit and 16-bit lengths, a close frame.
func TestFrameTap(t *testing.T) {
	frame := func(op byte, payload string) string {
		if len(payload) < 126 {
			return string([]byte{0x80 | op, byte(len(payload))}) + payload
		}
		return string([]byte{0x80 | op, 126, byte(len(payload) >> 8), byte(len(payload))}) + payload
	}
	big := `{"type":"ADDED","object":{"metadata":{"name":"demo","namespace":"default"}}}` + strings.Repeat(" ", 230) + "\n"
	stream := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n" +
		frame(0x1, "{}\n") + frame(0x1, big) + frame(0x8, "\x03\xe8")
	for _, step := range []int{1, 7, 64, len(stream)} {
		f := &frameTap{}
		for i := 0; i < len(stream); i += step {
			f.pending = append(f.pending, stream[i:min(i+step, len(stream))]...)
			f.cut()
		}
		got := f.all()
		require.Len(t, got, 3, "reads of %d bytes", step)
		assert.Equal(t, []byte{0x81, 0x03}, got[0].header)
		assert.Equal(t, []byte{0x81, 0x7e, byte(len(big) >> 8), byte(len(big))}, got[1].header, "a 16-bit length")
		assert.Equal(t, big, string(got[1].payload))
		assert.Equal(t, byte(0x8), got[2].opcode)
		assert.Equal(t, 1000, closeCode(got[2].payload))
		assert.Empty(t, f.pending)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		assert.Equal(t, want, thousands(n))
	}
}

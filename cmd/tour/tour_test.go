package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/informer"
	"listwatch/internal/leakcheck"
	"listwatch/narrate"
)

// runTour runs the whole tour in-process and returns what it printed.
func runTour(t *testing.T, o options) string {
	t.Helper()
	// Each stage waits on what it shows; the bounds only turn a hang into a
	// failure, so they are generous enough for a busy machine under -race.
	if o.StageTimeout == 0 {
		o.StageTimeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, &out, o)
	require.NoError(t, err, "the tour failed; it printed:\n%s", out.String())
	return out.String()
}

// section returns the text from the heading of the chapter titled title
// to the next heading.
func section(t *testing.T, out, title string) string {
	t.Helper()
	i := strings.Index(out, ". "+title+" ━")
	require.GreaterOrEqual(t, i, 0, "no chapter %q", title)
	start := strings.LastIndex(out[:i], "━━ ")
	rest := out[start:]
	if end := strings.Index(rest[1:], "\n━━ "); end >= 0 {
		rest = rest[:end+1]
	}
	return rest
}

// Chapter titles, as the tests find them.
const (
	titleTrip      = "One event's trip through every layer"
	titleWebsocket = "The same watch over a websocket"
	titleToday     = "The same change on today's default path: watch-list, atomic RealFIFO"
	titleTimeout   = "The server ends the watch: a timeout"
	titleContinue  = "The wrong fix: continue on a closed channel"
	titleKill      = "The connection dies: tcpkill"
	titleRetry     = "RetryWatcher: resume from the last resourceVersion, stop on 410"
	titleExpired   = "Away too long: 410 Expired, re-list, tombstone"
	titleConverged = "Converged"
	titleSummary   = "What you saw"
)

// checks is how many ✓ the summary has: one per chapter but the last.
const checks = 11

// requireNarrow fails if a printed line is wider than maxColumns.
func requireNarrow(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		assert.LessOrEqual(t, visibleLen(line), maxColumns, "line %d is too wide: %q", i+1, line)
	}
}

// layerLine reports whether line is a narration line of layer.
func layerLine(line, layer string) bool {
	if !strings.HasPrefix(line, "+") {
		return false
	}
	f := strings.Fields(line[1:]) // "+  0.007s store  rev 5 ..."
	return len(f) >= 3 && strings.HasSuffix(f[0], "s") && f[1] == layer
}

// The tour runs end to end, every stage happens, every layer speaks, one
// event is followed through all of them in data-flow order, and the cache
// converges.
func TestTourRunsEveryStage(t *testing.T) {
	defer leakcheck.Check(t)()
	out := runTour(t, options{Queue: informer.DeltaFIFO})

	assert.NotContains(t, out, "\x1b[", "no colour unless asked for")
	requireNarrow(t, out)

	// Every layer's name starts at least one line.
	for _, layer := range []string{narrate.Store, narrate.WatchCache, narrate.HTTP, narrate.StreamWatcher,
		narrate.Reflector, narrate.Queue, narrate.Indexer, narrate.Processor, narrate.Handler, networkLayer} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if layerLine(line, layer) {
				found = true
				break
			}
		}
		assert.True(t, found, "no line from layer %q", layer)
	}

	// Chapter 2: the trip of default/demo through every layer. The server's
	// layers and the client's run in different goroutines, so their lines
	// may interleave either way; on each side, though, every layer prints
	// before it hands the event on, so the client's lines come in
	// data-flow order.
	trip := section(t, out, titleTrip)
	lines := strings.Split(trip, "\n")
	has := func(layer, marker string) bool {
		for _, line := range lines {
			if layerLine(line, layer) && strings.Contains(line, marker) {
				return true
			}
		}
		return false
	}
	for _, m := range []struct{ layer, marker string }{
		{narrate.Store, "ADDED /registry/configmaps/default/demo"},
		{narrate.WatchCache, "ADDED /registry/configmaps/default/demo"},
		{narrate.HTTP, "wrote"},
	} {
		assert.True(t, has(m.layer, m.marker), "chapter 2 has no %s line with %q:\n%s", m.layer, m.marker, trip)
	}
	order := []struct{ layer, marker string }{
		{narrate.HTTP, "client read chunk"},
		{narrate.StreamWatcher, "ADDED default/demo"},
		{narrate.Reflector, "event ADDED default/demo"},
		{narrate.Queue, "queued Added default/demo"},
		{narrate.Indexer, "default/demo"},
		{narrate.Processor, "default/demo"},
		{narrate.Handler, "ADD default/demo"},
	}
	next := 0
	for _, line := range lines {
		if next < len(order) && layerLine(line, order[next].layer) && strings.Contains(line, order[next].marker) {
			next++
		}
	}
	require.Equal(t, len(order), next, "the client's side of the trip stopped before %v; chapter 2 was:\n%s", order[min(next, len(order)-1)], trip)

	// Chapter 3: the server's timeout, a clean EOF, a re-watch without a re-list.
	ch3 := section(t, out, titleTimeout)
	assert.Contains(t, ch3, "timeout after 3s")
	assert.Contains(t, ch3, "stream ended (EOF)")
	assert.Contains(t, ch3, "re-watch from rv")
	assert.NotContains(t, ch3, "GET /api/v1/namespaces/default/configmaps?", "no re-list after a timeout")

	// Chapter 4: a reset connection, a re-watch.
	ch4 := section(t, out, titleKill)
	assert.Contains(t, ch4, "FAULT killed 1 watch connection")
	assert.Contains(t, ch4, "re-watch from rv")
	assert.NotContains(t, ch4, "GET /api/v1/namespaces/default/configmaps?", "no re-list after a reset")

	// Chapter 5: 410 in the stream, a re-list, a tombstone.
	ch5 := section(t, out, titleExpired)
	assert.Contains(t, ch5, "FAULT compacted history")
	assert.Contains(t, ch5, `"code":410`)
	assert.Contains(t, ch5, "too old resource version")
	assert.Contains(t, ch5, "GET /api/v1/namespaces/default/configmaps?resourceVersion=", "the re-list")
	assert.Contains(t, ch5, "DeletedFinalStateUnknown")
	assert.Contains(t, ch5, "tombstone default/alpha")
	// Every key the queue says it queued is shown: busy's too, where it
	// lands, and the handler's OnAdd for it.
	assert.Contains(t, ch5, "3 keys queued")
	assert.Contains(t, ch5, "queued Replaced default/busy")
	assert.Contains(t, ch5, "tour ADD default/busy")
	assert.NotRegexp(t, `store +rev \d+ \w+ /registry/configmaps/default/busy`, ch5, "the burst of writes to busy is one note, not ten store lines")

	// Today's default path: no LIST, the state over the watch, the atomic
	// queue, the same change to both handlers.
	today := section(t, out, titleToday)
	assert.Contains(t, today, "sendInitialEvents=true")
	assert.Contains(t, today, "(initial-events-end bookmark)")
	assert.Contains(t, today, "one ReplacedAll delta")
	assert.Regexp(t, `handler +today UPDATE default/demo rv=(\d+)→(\d+)`, today)
	assert.Regexp(t, `handler +tour UPDATE default/demo rv=(\d+)→(\d+)`, today)
	assert.NotContains(t, today, "GET /api/v1/namespaces/default/configmaps?", "no LIST")
	assert.NotContains(t, today, "today: stopped", "its shutdown is not part of the story")

	assertSideStories(t, out)
	assertDocsQuoteTheTour(t, out)

	// The cache converges; the checklist has every check.
	assert.Contains(t, section(t, out, titleConverged), "informer cache:")
	final := section(t, out, titleSummary)
	assert.Equal(t, checks, strings.Count(final, "✓"), final)
	assert.NotContains(t, final, "✗")
	assert.Contains(t, final, "converged")
}

// assertSideStories checks the chapters that tell the articles' side
// stories: the websocket next to chunked, the `continue` loop's spin
// counter and its fix, RetryWatcher resuming and stopping.
func assertSideStories(t *testing.T, out string) {
	t.Helper()
	// The same events, as a chunk and as a frame, and both endings.
	ws := section(t, out, titleWebsocket)
	var chunks, frames int
	for _, line := range strings.Split(ws, "\n") {
		switch {
		case layerLine(line, chunkedLayer) && strings.Contains(line, `\r\n" + `):
			chunks++
		case layerLine(line, websocketLayer) && strings.Contains(line, "81 7e "):
			frames++
		}
	}
	assert.Equal(t, 2, chunks, "two events as chunks (replayed ADDED, live MODIFIED):\n%s", ws)
	assert.Equal(t, chunks, frames, "as many websocket text frames as chunks:\n%s", ws)
	assert.Regexp(t, `(?m)chunked +"f4\\r\\n" \+ 244 bytes .*ADDED default/demo rv=5$`, ws)
	assert.Regexp(t, `(?m)websocket +81 7e 00 f4 \+ 244 bytes +ADDED default/demo rv=5$`, ws)
	assert.Contains(t, ws, "101 Switching Protocols")
	assert.Contains(t, ws, "the terminating chunk")
	assert.Contains(t, ws, "88 02 03 e8: a close frame, status 1000")
	assert.NotContains(t, ws, "reflector ", "the informer's lines are kept out of a side story")

	// The hot loop: an event, the close, a growing spin counter, the fix.
	loop := section(t, out, titleContinue)
	assert.Contains(t, loop, "got MODIFIED default/demo")
	assert.Contains(t, loop, "ResultChan closed (the timeout); the loop says `continue`")
	var counts []int
	for _, m := range regexp.MustCompile(`spin counter: +([0-9,]+) receives`).FindAllStringSubmatch(loop, -1) {
		n, err := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		require.NoError(t, err)
		counts = append(counts, n)
	}
	require.Len(t, counts, spinReports, loop)
	assert.True(t, slices.IsSorted(counts) && counts[0] > 0, "the counter only grows: %v", counts)
	assert.Regexp(t, `the fix: on !ok, return; watch again from the last rv, (\d+)`, loop)
	assert.Regexp(t, `(?s)the fix: .*got MODIFIED default/demo rv=\d+.*closed again at the timeout`, loop)

	// RetryWatcher: away, resumed from its last rv with the missed change;
	// away again across a compaction: 410, stopped, channel closed.
	rw := section(t, out, titleRetry)
	m := regexp.MustCompile(`retrywatcher +re-watch #1 from rv=(\d+)`).FindStringSubmatch(rw)
	require.NotNil(t, m, rw)
	resumed := regexp.MustCompile(`(?s)re-watch #1 from rv=` + m[1] + `.*plugged back in\n[^\n]*consumer +got MODIFIED default/demo rv=(\d+)`).FindStringSubmatch(rw)
	require.NotNil(t, resumed, "the change made while away arrives after the re-watch:\n%s", rw)
	assert.Greater(t, atoi(t, resumed[1]), atoi(t, m[1]))
	assert.Contains(t, rw, "FAULT compacted history")
	assert.Regexp(t, `retrywatcher +stopped at rv=\d+: ERROR 410 Expired`, rw)
	assert.Contains(t, rw, "consumer      got ERROR 410 Expired")
	assert.Contains(t, rw, "ResultChan closed: the RetryWatcher gave up")
	assert.NotContains(t, rw, "reflector ", "the informer's lines are kept out of a side story")
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// With RealFIFO, with colour and without the spotlight, the tour works the
// same; colour shows up as escape sequences.
func TestTourRealFIFOColourAll(t *testing.T) {
	defer leakcheck.Check(t)()
	out := runTour(t, options{Queue: informer.RealFIFO, Colour: true, All: true})
	assert.Contains(t, out, "\x1b[")
	assert.Contains(t, out, "DeletedFinalStateUnknown")
	assert.Contains(t, out, "apiserver listening on", "-all shows lines the spotlight hides")
	assert.Equal(t, checks, strings.Count(out, "✓"))
	requireNarrow(t, out)
}

// With AtomicFIFO, client-go's default since 1.36, the tour works the
// same: the re-list arrives as one ReplacedAll delta, and the handler still
// gets the tombstone.
func TestTourAtomicFIFO(t *testing.T) {
	defer leakcheck.Check(t)()
	out := runTour(t, options{Queue: informer.AtomicFIFO})
	assert.Contains(t, out, "one ReplacedAll delta")
	// docs/workshop-solutions.md (5b) quotes this line.
	assert.Regexp(t, `replaced at rv \d+: 2 objects listed, one ReplacedAll delta, 1 delta queued`, out)
	assert.Contains(t, out, "DeletedFinalStateUnknown")
	assert.Equal(t, checks, strings.Count(out, "✓"))
}

// A stage that does not happen in time fails the tour with an error naming
// it, and the tour still cleans up after itself.
func TestTourFailsClearly(t *testing.T) {
	defer leakcheck.Check(t)()
	var out bytes.Buffer
	err := run(context.Background(), &out, options{StageTimeout: time.Nanosecond})
	require.Error(t, err)
	// Usually chapter 1; a later one if the first wait found its stage
	// done before its nanosecond ran out.
	assert.Regexp(t, `^chapter \d+: `, err.Error())
	assert.Contains(t, err.Error(), "did not happen within")
	assert.Contains(t, out.String(), "✗")
}

// A cancelled context (Ctrl-C) ends the tour with the context's error.
func TestTourCancelled(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := run(ctx, &bytes.Buffer{}, options{})
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
}

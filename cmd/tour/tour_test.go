package main

import (
	"bytes"
	"context"
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
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, &out, o)
	require.NoError(t, err, "the tour failed; it printed:\n%s", out.String())
	return out.String()
}

// section returns the text from chapter n's heading to the next one's.
func section(t *testing.T, out string, n int) string {
	t.Helper()
	start := strings.Index(out, "━━ "+itoa(n)+". ")
	require.GreaterOrEqual(t, start, 0, "chapter %d missing", n)
	rest := out[start:]
	if end := strings.Index(rest[1:], "\n━━ "); end >= 0 {
		rest = rest[:end+1]
	}
	return rest
}

func itoa(n int) string { return string(rune('0' + n)) }

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

	// Every layer's name starts at least one line.
	for _, layer := range []string{narrate.Store, narrate.WatchCache, narrate.HTTP, narrate.StreamWatcher,
		narrate.Reflector, narrate.DeltaFIFO, narrate.Indexer, narrate.Processor, narrate.Handler, networkLayer} {
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
	trip := section(t, out, 2)
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
		{narrate.DeltaFIFO, "queued Added default/demo"},
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
	ch3 := section(t, out, 3)
	assert.Contains(t, ch3, "timeout after 3s")
	assert.Contains(t, ch3, "stream ended (EOF)")
	assert.Contains(t, ch3, "re-watch from rv")
	assert.NotContains(t, ch3, "GET /api/v1/namespaces/default/configmaps?", "no re-list after a timeout")

	// Chapter 4: a reset connection, a re-watch.
	ch4 := section(t, out, 4)
	assert.Contains(t, ch4, "FAULT killed 1 watch connection")
	assert.Contains(t, ch4, "re-watch from rv")
	assert.NotContains(t, ch4, "GET /api/v1/namespaces/default/configmaps?", "no re-list after a reset")

	// Chapter 5: 410 in the stream, a re-list, a tombstone.
	ch5 := section(t, out, 5)
	assert.Contains(t, ch5, "FAULT compacted history")
	assert.Contains(t, ch5, `"code":410`)
	assert.Contains(t, ch5, "too old resource version")
	assert.Contains(t, ch5, "GET /api/v1/namespaces/default/configmaps?resourceVersion=", "the re-list")
	assert.Contains(t, ch5, "DeletedFinalStateUnknown")
	assert.Contains(t, ch5, "tombstone default/alpha")

	// Chapter 6 and the checklist: converged, six checks.
	assert.Contains(t, section(t, out, 6), "informer cache:")
	final := section(t, out, 7)
	assert.Equal(t, 6, strings.Count(final, "✓"), final)
	assert.NotContains(t, final, "✗")
	assert.Contains(t, final, "converged")
}

// With RealFIFO, with colour and without the spotlight, the tour works the
// same; colour shows up as escape sequences.
func TestTourRealFIFOColourAll(t *testing.T) {
	defer leakcheck.Check(t)()
	out := runTour(t, options{Queue: informer.RealFIFO, Colour: true, All: true})
	assert.Contains(t, out, "\x1b[")
	assert.Contains(t, out, "DeletedFinalStateUnknown")
	assert.Contains(t, out, "apiserver listening on", "-all shows lines the spotlight hides")
	assert.Equal(t, 6, strings.Count(out, "✓"))
}

// A stage that does not happen in time fails the tour with an error naming
// it, and the tour still cleans up after itself.
func TestTourFailsClearly(t *testing.T) {
	defer leakcheck.Check(t)()
	var out bytes.Buffer
	err := run(context.Background(), &out, options{StageTimeout: time.Nanosecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chapter 1")
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

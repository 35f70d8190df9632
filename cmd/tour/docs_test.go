package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/docs/doccheck"
)

// narrationLine is a line of the tour's narration: "+  0.003s layer msg".
var narrationLine = regexp.MustCompile(`^\+ *[0-9.]+s `)

// digits are what differs between runs: times, ports, resourceVersions.
var digits = regexp.MustCompile(`[0-9]+`)

// durations differ between runs in more than their digits: 958ms, 1.375s.
var durations = regexp.MustCompile(`\b[0-9]+(?:\.[0-9]+)?(?:ns|µs|ms|s|m)\b`)

// squash removes all whitespace, so that a folded line and the line it was
// folded from compare equal, and makes every duration the same.
func squash(s string) string {
	return strings.Join(strings.Fields(durations.ReplaceAllString(s, "DURATION")), "")
}

// tourLines returns every narration line of out, continuation lines of a
// folded line joined back on, without the time, whitespace removed.
func tourLines(out string) []string {
	var lines []string
	cur := ""
	flush := func() {
		if cur != "" {
			lines = append(lines, squash(narrationLine.ReplaceAllString(cur, "")))
		}
		cur = ""
	}
	for _, l := range strings.Split(out, "\n") {
		switch {
		case narrationLine.MatchString(l):
			flush()
			cur = l
		case cur != "" && strings.HasPrefix(l, strings.Repeat(" ", messageColumn)):
			cur += l
		default:
			flush()
		}
	}
	flush()
	return lines
}

// assertDocsQuoteTheTour checks every block of tour narration quoted in
// docs/ (a ```text block of "+  0.003s layer ..." lines) against a real
// run's output: each quoted line must be one the tour prints, up to the
// numbers in it. A block that shows something else (another program, a
// run with other flags) must say so on its fence: ```text illustrative.
func assertDocsQuoteTheTour(t *testing.T, out string) {
	t.Helper()
	printed := tourLines(out)
	pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	quoted := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, blk := range doccheck.Blocks(string(b)) {
			if blk.Info != "text" || blk.Illustrative() {
				continue
			}
			for i, l := range blk.Lines {
				if !narrationLine.MatchString(l) {
					continue
				}
				quoted++
				want := squash(narrationLine.ReplaceAllString(l, ""))
				re := regexp.MustCompile("^" + digits.ReplaceAllString(regexp.QuoteMeta(want), "[0-9]+") + "$")
				found := false
				for _, p := range printed {
					if re.MatchString(p) {
						found = true
						break
					}
				}
				assert.True(t, found, "%s:%d quotes a line the tour does not print (mark the block "+
					"```text illustrative if it shows another run):\n%s", filepath.Base(page), blk.Line+1+i, l)
			}
		}
	}
	assert.NotZero(t, quoted, "no quoted tour lines found in docs/: is the check looking in the right place?")
}

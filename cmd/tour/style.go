package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// width is the column the tour's prose wraps at.
const width = 78

// maxColumns is the widest line the tour prints. A narration line longer
// than that (a watch URL, a connection error) is folded, the rest indented
// to the message column, so that the tour reads in any terminal.
const maxColumns = 100

// messageColumn is where a narration line's message starts: "+  0.007s ",
// then the layer name padded to 14.
const messageColumn = 24

// console serialises everything the tour writes: the Tracer's lines come
// from many goroutines, the chapter text from the tour, and they must not
// interleave mid-line (nor race on a bytes.Buffer in tests).
type console struct {
	mu     sync.Mutex
	w      io.Writer
	colour bool
	// written, if set, is told about every write once it is done: the
	// tour uses it to know that a narration line has actually been
	// printed, not merely produced.
	written func(s string)
}

// Write implements io.Writer; the Tracer writes through it, one whole line
// per call.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	_, err := io.WriteString(c.w, fold(string(p)))
	c.mu.Unlock()
	if c.written != nil {
		c.written(string(p))
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// fold breaks every line of s wider than maxColumns: at the last space
// (or '&', '/', ',') that fits, else anywhere, continuing on a line
// indented to the message column (narration) or to the line's own indent.
func fold(s string) string {
	if !strings.Contains(s, "\n") && visibleLen(s) <= maxColumns {
		return s
	}
	var b strings.Builder
	lines := strings.SplitAfter(s, "\n")
	for _, line := range lines {
		body := strings.TrimSuffix(line, "\n")
		nl := line[len(body):]
		indent := len(body) - len(strings.TrimLeft(body, " "))
		if strings.HasPrefix(body, "+") {
			indent = messageColumn
		}
		pad := strings.Repeat(" ", indent)
		for visibleLen(body) > maxColumns {
			cut := cutAt(body, maxColumns, indent+10)
			b.WriteString(strings.TrimRight(body[:cut], " ") + "\n")
			body = pad + strings.TrimLeft(body[cut:], " ")
		}
		b.WriteString(body + nl)
	}
	return b.String()
}

// cutAt returns the byte index to break line at so that the first part
// has at most limit visible runes: after the last break character past
// the visible column min, or at limit itself.
func cutAt(line string, limit, min int) int {
	col, esc, best, end := 0, false, -1, len(line)
	for i, r := range line {
		switch {
		case esc:
			esc = r != 'm'
			continue
		case r == '\x1b':
			esc = true
			continue
		}
		if col == limit {
			end = i
			break
		}
		col++
		if col > min && strings.ContainsRune(" &/,", r) {
			best = i + utf8.RuneLen(r)
		}
	}
	if best > 0 {
		return best
	}
	return end
}

// narration splits a line the Tracer wrote into its layer and message;
// ok is false for anything else (headings, prose).
func narration(line string) (layer, msg string, ok bool) {
	line = stripANSI(strings.TrimSpace(line))
	if !strings.HasPrefix(line, "+") {
		return "", "", false
	}
	f := strings.Fields(line[1:]) // "0.003s", layer, message...
	if len(f) < 3 || !strings.HasSuffix(f[0], "s") {
		return "", "", false
	}
	_, msg, _ = strings.Cut(line, " "+f[1]+" ")
	return f[1], strings.TrimSpace(msg), true
}

// stripANSI removes colour escape sequences.
func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	esc := false
	for _, r := range s {
		switch {
		case esc:
			esc = r != 'm'
		case r == '\x1b':
			esc = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// print writes s as one unit.
func (c *console) print(s string) {
	// A write error (a closed pipe) must not stop the tour; the exit code
	// still tells whether every stage happened.
	_, _ = c.Write([]byte(s))
}

func (c *console) paint(code, s string) string {
	if !c.colour {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// chapter prints a chapter heading and its prose: what is about to
// happen, and what to notice in the lines that follow.
func (c *console) chapter(n int, ch chapterText) {
	title, what, notice := ch.title, ch.what, ch.notice
	var b strings.Builder
	head := fmt.Sprintf("━━ %d. %s ", n, title)
	if pad := width - len([]rune(head)); pad > 0 {
		head += strings.Repeat("━", pad)
	}
	b.WriteString("\n" + c.paint("1;36", head) + "\n")
	if what != "" {
		wrap(&b, "   ", what)
	}
	if notice != "" {
		wrap(&b, "   "+c.paint("1;33", "Notice:")+" ", notice)
	}
	b.WriteString("\n")
	c.print(b.String())
}

// note prints a short indented remark of the tour's own between lines.
func (c *console) note(format string, args ...any) {
	var b strings.Builder
	wrap(&b, "   "+c.paint("2", "»")+" ", fmt.Sprintf(format, args...))
	c.print(b.String())
}

// result prints one line of the final checklist.
func (c *console) result(ok bool, text string) {
	mark := c.paint("1;32", "✓")
	if !ok {
		mark = c.paint("1;31", "✗")
	}
	var b strings.Builder
	wrap(&b, "   "+mark+" ", text)
	c.print(b.String())
}

// wrap writes text word-wrapped at width, the first line after prefix and
// the rest indented to match it (escape sequences in prefix take no room).
func wrap(b *strings.Builder, prefix, text string) {
	indent := strings.Repeat(" ", visibleLen(prefix))
	line, lead := prefix, indent
	col := visibleLen(prefix)
	for _, word := range strings.Fields(text) {
		n := len([]rune(word))
		if col > len(lead) && col+1+n > width {
			b.WriteString(line + "\n")
			line, col = lead, len(lead)
		}
		if col > len(lead) {
			line += " "
			col++
		}
		line += word
		col += n
	}
	b.WriteString(line + "\n")
}

// visibleLen is the number of runes of s outside ANSI escape sequences.
func visibleLen(s string) int {
	n, esc := 0, false
	for _, r := range s {
		switch {
		case esc:
			esc = r != 'm'
		case r == '\x1b':
			esc = true
		default:
			n++
		}
	}
	return n
}

// isTerminal reports whether f is a character device, i.e. a terminal
// rather than a file or a pipe: colour only makes sense there.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

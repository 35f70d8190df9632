package doccheck

import (
	"regexp"
	"slices"
	"strings"
)

// Block is one fenced code block of a Markdown page.
type Block struct {
	// Info is the word after the opening fence: "sh", "console", "go",
	// "mermaid", or "" for none.
	Info string
	// Attrs are any further words on the fence line, e.g. "illustrative"
	// in ```sh illustrative.
	Attrs []string
	// Line is the 1-based line of the opening fence.
	Line int
	// Lines are the block's contents, without the fences.
	Lines []string
}

// Illustrative reports whether a shell block is only shown, never run: a
// console session, an sh block marked on its fence (```sh illustrative), or
// one whose first line is the comment "# illustrative", alone or followed by
// a reason ("# illustrative: minutes of load").
func (b Block) Illustrative() bool {
	if b.Info == "console" || slices.Contains(b.Attrs, "illustrative") {
		return true
	}
	if len(b.Lines) == 0 {
		return false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(b.Lines[0]), "# illustrative")
	return ok && (rest == "" || rest[0] == ':' || rest[0] == ' ')
}

// Commands returns the commands of an sh block: one per line, with
// backslash-continued lines joined, comments and blank lines left out.
func (b Block) Commands() []string {
	var cmds []string
	var cur strings.Builder
	for _, l := range b.Lines {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur.WriteString(strings.TrimSuffix(t, "\\"))
			continue
		}
		cur.WriteString(t)
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		cmds = append(cmds, cur.String())
	}
	return cmds
}

// Blocks returns the fenced code blocks of a page, in order. Fences are
// lines starting with ``` (indentation allowed); an unclosed block runs to
// the end of the page.
func Blocks(md string) []Block {
	var blocks []Block
	var cur *Block
	for i, line := range strings.Split(md, "\n") {
		t := strings.TrimSpace(line)
		if !strings.HasPrefix(t, "```") {
			if cur != nil {
				cur.Lines = append(cur.Lines, line)
			}
			continue
		}
		if cur == nil {
			info := strings.Fields(strings.TrimPrefix(t, "```"))
			cur = &Block{Line: i + 1}
			if len(info) > 0 {
				cur.Info, cur.Attrs = info[0], info[1:]
			}
			continue
		}
		blocks = append(blocks, *cur)
		cur = nil
	}
	if cur != nil {
		blocks = append(blocks, *cur)
	}
	return blocks
}

// Link is one inline Markdown link, [text](Target).
type Link struct {
	Text, Target string
	Line         int
}

// Relative reports whether the link points into the repository: not a URL,
// not a mail address, not an anchor of the same page.
func (l Link) Relative() bool {
	t := l.Target
	return !(strings.Contains(t, "://") || strings.HasPrefix(t, "mailto:") || strings.HasPrefix(t, "#"))
}

// Path is the target without its #anchor.
func (l Link) Path() string {
	p, _, _ := strings.Cut(l.Target, "#")
	return p
}

var (
	linkRE       = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
	goRunRE      = regexp.MustCompile(`go run (\./[A-Za-z0-9_./-]*)`)
)

// Links returns the inline links of a page, outside code blocks and
// inline code.
func Links(md string) []Link {
	var links []Link
	fenced := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = inlineCodeRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			links = append(links, Link{Text: m[1], Target: m[2], Line: i + 1})
		}
	}
	return links
}

// GoRunTargets returns the package paths of every "go run ./path" in text,
// anywhere (prose, inline code, code blocks), without a trailing slash or
// full stop. Wildcards ("go run ./examples/..." in prose) are not paths and
// are left out.
func GoRunTargets(text string) []string {
	var out []string
	for _, m := range goRunRE.FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], "...") {
			continue
		}
		out = append(out, strings.TrimSuffix(strings.TrimSuffix(m[1], "."), "/"))
	}
	return out
}

// ShowsWhatItTeaches reports whether a command a page tells the reader to
// run prints what the page is about. A plain `go test` prints only "ok";
// one with -v prints every test it runs, a benchmark its numbers, a fuzz
// run its progress. Any other command is assumed to.
func ShowsWhatItTeaches(cmd string) bool {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "go" || f[1] != "test" {
		return true
	}
	for _, a := range f[2:] {
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name {
		case "bench", "fuzz":
			return true
		case "v":
			return !hasValue || value == "true"
		}
	}
	return false
}

// QuickBench turns a "go test -bench" command into one that runs every
// benchmark it selects exactly once (-benchtime=1x -count=1): enough to
// prove that the command and its benchmarks still work, without spending
// minutes re-measuring. Any other command is returned unchanged.
func QuickBench(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "go" || f[1] != "test" {
		return cmd
	}
	bench := false
	out := make([]string, 0, len(f)+2)
	for i := 0; i < len(f); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(f[i], "-"), "=")
		if !strings.HasPrefix(f[i], "-") {
			out = append(out, f[i])
			continue
		}
		switch name {
		case "bench":
			bench = true
		case "count", "benchtime":
			if !hasValue {
				i++ // skip the value too
			}
			continue
		}
		out = append(out, f[i])
	}
	if !bench {
		return cmd
	}
	return strings.Join(append(out[:2:2], append([]string{"-benchtime=1x", "-count=1"}, out[2:]...)...), " ")
}

package doccheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The test runs in docs/doccheck; the pages are in docs/, the repository's
// root two levels up.
const (
	docsDir = ".."
	rootDir = "../.."
)

// commandTimeout only turns a command that hangs into a failure. It is no
// bound on how fast a command must be: a benchmark that takes a minute on a
// quiet laptop takes many on a loaded CI machine, and passes there too.
const commandTimeout = 15 * time.Minute

// page is one Markdown file of docs/.
type page struct {
	name string // e.g. "04-streamwatcher.md"
	text string
}

func pages(t *testing.T) []page {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(docsDir, "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, names, "no pages in docs/")
	var ps []page
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		ps = append(ps, page{name: filepath.Base(n), text: string(b)})
	}
	return ps
}

func where(p page, line int) string { return fmt.Sprintf("docs/%s:%d", p.name, line) }

// Every relative link points to a file or directory that exists.
func TestRelativeLinksResolve(t *testing.T) {
	for _, p := range pages(t) {
		for _, l := range Links(p.text) {
			if !l.Relative() || l.Path() == "" {
				continue
			}
			target := filepath.Join(docsDir, filepath.FromSlash(l.Path()))
			_, err := os.Stat(target)
			assert.NoError(t, err, "%s: link [%s](%s) points to nothing", where(p, l.Line), l.Text, l.Target)
		}
	}
}

// Every `go run ./path` names a directory holding a main package.
func TestGoRunTargetsArePrograms(t *testing.T) {
	for _, p := range pages(t) {
		for _, target := range GoRunTargets(p.text) {
			assert.True(t, isMainPackage(target), "docs/%s: `go run %s` names no main package", p.name, target)
		}
	}
}

var packageMainRE = regexp.MustCompile(`(?m)^package main\b`)

func isMainPackage(target string) bool {
	files, _ := filepath.Glob(filepath.Join(rootDir, filepath.FromSlash(target), "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if b, err := os.ReadFile(f); err == nil && packageMainRE.Match(b) {
			return true
		}
	}
	return false
}

// delegated reports whether a command is run by another test: the tour by
// cmd/tour's test, each example by the examples' test, and a test of a
// nested module by that module's own stage of ./test.sh (checked by
// TestModuleTestCommandsNameTests instead).
func delegated(cmd string) bool {
	if _, _, ok := moduleTestCommand(cmd); ok {
		return true
	}
	return strings.HasPrefix(cmd, "go run ./cmd/tour") || strings.HasPrefix(cmd, "go run ./examples/")
}

// moduleTestRE matches "cd MODULE && go test ... -run NAME ...": one test of
// a nested module, which the docs show so that a reader can run it alone.
var moduleTestRE = regexp.MustCompile(`^cd ([a-z0-9/]+) && go test .*-run '?\^?([A-Z][A-Za-z0-9_]*)\$?'? `)

// moduleTestCommand returns the module directory and the test a command
// runs, if it is a nested module's test run by name.
func moduleTestCommand(cmd string) (dir, test string, ok bool) {
	m := moduleTestRE.FindStringSubmatch(cmd + " ")
	if m == nil || !strings.HasPrefix(m[2], "Test") {
		return "", "", false
	}
	return m[1], m[2], true
}

// A nested module's test shown in the docs names a module and a test that
// exist. Running it is left to the module's stage of ./test.sh, which runs
// every test of it under -race: compiling a module such as controllerruntime
// again from here would double the cost and prove nothing more.
func TestModuleTestCommandsNameTests(t *testing.T) {
	found := 0
	for _, p := range pages(t) {
		for _, b := range Blocks(p.text) {
			if b.Info != "sh" || b.Illustrative() {
				continue
			}
			for _, cmd := range b.Commands() {
				dir, test, ok := moduleTestCommand(cmd)
				if !ok {
					continue
				}
				found++
				_, err := os.Stat(filepath.Join(rootDir, dir, "go.mod"))
				require.NoError(t, err, "%s: %q: %s is no module", where(p, b.Line), cmd, dir)
				files, err := filepath.Glob(filepath.Join(rootDir, dir, "*_test.go"))
				require.NoError(t, err)
				var defined bool
				for _, f := range files {
					src, err := os.ReadFile(f)
					require.NoError(t, err)
					defined = defined || strings.Contains(string(src), "func "+test+"(t *testing.T)")
				}
				assert.True(t, defined, "%s: %q: no func %s in %s", where(p, b.Line), cmd, test, dir)
			}
		}
	}
	assert.NotZero(t, found, "no page shows a nested module's test: this check has nothing to check")
}

// Every shell block is run or marked illustrative; the ones that are run
// succeed within the time limit.
func TestShellBlocksRunOrAreIllustrative(t *testing.T) {
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the docs' commands need go on PATH")
	path := filepath.Dir(goBin) + string(os.PathListSeparator) + os.Getenv("PATH")

	for _, p := range pages(t) {
		for _, b := range Blocks(p.text) {
			switch b.Info {
			case "bash", "shell", "zsh":
				t.Errorf("%s: a ```%s block: use ```sh (run by this test) or ```console (illustrative)", where(p, b.Line), b.Info)
				continue
			case "sh":
			default:
				continue
			}
			if b.Illustrative() {
				continue
			}
			for _, cmd := range b.Commands() {
				if strings.HasPrefix(cmd, "$ ") {
					t.Errorf("%s: %q: a prompt in a ```sh block; a session with prompts and output is ```console", where(p, b.Line), cmd)
					continue
				}
				if strings.Contains(cmd, "test.sh") || strings.Contains(cmd, "./...") {
					t.Errorf("%s: %q would run the whole suite from inside it; mark the block # illustrative", where(p, b.Line), cmd)
					continue
				}
				if delegated(cmd) {
					continue // TestGoRunTargetsArePrograms checked it; its own test runs it
				}
				if !ShowsWhatItTeaches(cmd) {
					t.Errorf("%s: %q prints only \"ok\": add -v, so that the reader sees the tests it runs, or show a go run instead", where(p, b.Line), cmd)
					continue
				}
				if testing.Short() {
					continue
				}
				// Each command is mostly a build and a link, or a
				// benchmark's set-up, and none shares a file or a port
				// with another, so they run side by side (go test's
				// -parallel, one per core by default).
				t.Run(fmt.Sprintf("%s:%d", p.name, b.Line), func(t *testing.T) {
					t.Parallel()
					runCommand(t, QuickBench(cmd), path)
				})
			}
		}
	}
}

func runCommand(t *testing.T, cmd, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", cmd)
	c.Dir = rootDir
	c.Env = append(os.Environ(), "PATH="+path)
	c.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish within %v:\n%s", cmd, commandTimeout, out.String())
	}
	require.NoError(t, err, "%q failed:\n%s", cmd, out.String())
}

var chapterRE = regexp.MustCompile(`^(\d\d)-[a-z0-9-]+\.md$`)

// The numbered chapters: contiguous from 00, each naming the Kubernetes file
// it mirrors, linking a package and an example, and ending with what the
// reader can now explain.
func TestChapters(t *testing.T) {
	var chapters []page
	for _, p := range pages(t) {
		if chapterRE.MatchString(p.name) {
			chapters = append(chapters, p)
		}
	}
	require.NotEmpty(t, chapters)
	for i, p := range chapters {
		assert.Equal(t, fmt.Sprintf("%02d", i), p.name[:2], "chapters must be numbered 00, 01, ... without gaps")
		if i > 0 { // the introduction has no layer of its own
			assert.Contains(t, p.text, "k8s.io/", "docs/%s names no Kubernetes file it mirrors", p.name)
			assert.Regexp(t, `\]\(\.\./examples/\d\d-`, p.text, "docs/%s links no example", p.name)
			assert.Regexp(t, `\]\(\.\./(api|store|apiserver|client|reflector|fifo|informer|narrate|cmd)/`, p.text, "docs/%s links no package of this repository", p.name)
		}
		assert.Contains(t, p.text, "You can now explain", "docs/%s does not end with what the reader can now explain", p.name)
	}
}

var (
	boldRE       = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	glossEntryRE = regexp.MustCompile(`^\*\*([^*]+)\*\*`)
)

// Every term a chapter sets in bold (the convention for "a term, defined
// in the glossary") has an entry in the glossary: a chapter may use a term
// before the chapter that explains it only if the glossary defines it.
func TestBoldTermsAreInGlossary(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(docsDir, "glossary.md"))
	require.NoError(t, err)
	defined := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := glossEntryRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			defined[term(m[1])] = true
		}
	}
	for _, p := range pages(t) {
		if !chapterRE.MatchString(p.name) {
			continue
		}
		for i, line := range strings.Split(p.text, "\n") {
			for _, m := range boldRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
				tm := term(m[1])
				if !defined[tm] && !defined[strings.TrimSuffix(tm, "s")] && !defined[strings.TrimSuffix(tm, "es")] {
					t.Errorf("%s: **%s** is set as a term but the glossary has no entry for it", where(p, i+1), m[1])
				}
			}
		}
	}
}

// term normalises a bold term for lookup.
func term(s string) string { return strings.ToLower(strings.Trim(strings.TrimSpace(s), ".:,")) }

// The index links every page.
func TestIndexLinksEveryPage(t *testing.T) {
	var index page
	for _, p := range pages(t) {
		if p.name == "README.md" {
			index = p
		}
	}
	require.NotEmpty(t, index.text, "docs/README.md is missing")
	linked := map[string]bool{}
	for _, l := range Links(index.text) {
		linked[strings.TrimPrefix(l.Path(), "./")] = true
	}
	for _, p := range pages(t) {
		if p.name != "README.md" {
			assert.True(t, linked[p.name], "docs/README.md does not link %s", p.name)
		}
	}
}

// A go test line must show what it runs.
func TestShowsWhatItTeaches(t *testing.T) {
	for cmd, want := range map[string]bool{
		"go run ./examples/07-indexer":                         true,
		"go test -count=1 -run '_k8s' ./fifo":                  false,
		"go test -count=1 -v -run '_k8s' ./fifo":               true,
		"go test -v=false ./fifo":                              false,
		"go test -run '^$' -bench . -benchmem -count 6 ./api/": true,
		"go test ./client -run '^$' -fuzz FuzzEventDecoder":    true,
		"curl -s http://127.0.0.1:8080/debug/listwatch":        true,
	} {
		assert.Equal(t, want, ShowsWhatItTeaches(cmd), cmd)
	}
}

// A block is illustrative by its fence, its kind, or a first-line comment
// that may give a reason; a comment that merely starts with the same
// letters does not count.
func TestIllustrativeMarks(t *testing.T) {
	for _, tc := range []struct {
		md   string
		want bool
	}{
		{"```sh\ngo version\n```\n", false},
		{"```sh illustrative\ngo version\n```\n", true},
		{"```console\n$ go version\n```\n", true},
		{"```sh\n# illustrative\ngo version\n```\n", true},
		{"```sh\n# illustrative: minutes of load\ngo version\n```\n", true},
		{"```sh\n  # illustrative (needs a cluster)\ngo version\n```\n", true},
		{"```sh\n# illustratively fast\ngo version\n```\n", false},
		{"```sh\n# run this\n# illustrative\ngo version\n```\n", false},
	} {
		blocks := Blocks(tc.md)
		require.Len(t, blocks, 1, tc.md)
		assert.Equal(t, tc.want, blocks[0].Illustrative(), tc.md)
	}
}

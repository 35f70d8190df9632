package examples_test

// The examples' READMEs are documentation that is tested. This file
// enforces the rules below for every examples/NN-name directory:
//
//   - it has a main.go and a README.md, and examples/README.md links it;
//   - the README has a "## What to look for" section with a ```look-for
//     block: one regular expression per line, matched (multi-line: ^ and $
//     anchor lines) against the output of a command;
//   - every command in a ```sh block is run, from the repository root, and
//     must exit 0 within commandTimeout. `go run ./examples/NN-name args`
//     runs the binary built from ./examples/NN-name with the same args
//     (what go run does, without compiling once per command); any other
//     command runs in bash;
//   - the first command of the first ```sh block must run this example: it
//     is the default run, and a bare ```look-for block checks its output.
//     A block opened with ```look-for <command> checks the output of that
//     exact command instead, which must appear in a ```sh block;
//   - commands that need something the test cannot have (a real cluster,
//     two terminals) go in ```sh illustrative or ```console blocks. Those
//     are not run, but every `go run ./examples/...` line in them is run
//     with -h appended, so its flags must still exist.
//
// With -short only each README's default run is executed. To check one
// README while editing it: go test ./examples -examples 04-rewatch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// onlyExamples restricts TestExamples to the matching directories.
var onlyExamples = flag.String("examples", "", "run only the examples whose directory name matches this regexp")

// commandTimeout bounds one command: a hang guard, not a speed claim. The
// examples take seconds on a quiet machine, but the test runs several at
// once, and on two busy cores one of them has taken over a minute.
const commandTimeout = 10 * time.Minute

// parallelCommands is how many commands run at once. The examples mostly
// wait (on timeouts, on each other), so this can exceed the core count.
const parallelCommands = 6

// fence is one fenced code block of a README.
type fence struct {
	info  string // what follows the opening ```, trimmed
	lines []string
	line  int // 1-based line of the opening fence
}

// kind is the block's first word ("sh", "look-for", "console", ...).
func (f fence) kind() string {
	k, _, _ := strings.Cut(f.info, " ")
	return k
}

// arg is what follows the kind in the info string.
func (f fence) arg() string {
	_, a, _ := strings.Cut(f.info, " ")
	return strings.TrimSpace(a)
}

// parseFences returns the fenced blocks of a Markdown document.
func parseFences(doc string) ([]fence, error) {
	var out []fence
	var cur *fence
	sc := bufio.NewScanner(strings.NewReader(doc))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				cur.lines = append(cur.lines, line)
			}
			continue
		}
		if cur == nil {
			cur = &fence{info: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: n}
			continue
		}
		if trimmed != "```" {
			return nil, fmt.Errorf("line %d: fence %q inside the block opened at line %d", n, trimmed, cur.line)
		}
		out = append(out, *cur)
		cur = nil
	}
	if cur != nil {
		return nil, fmt.Errorf("the block opened at line %d is never closed", cur.line)
	}
	return out, sc.Err()
}

// shellCommands returns the commands of a sh block: one per line, with
// backslash continuations joined, blank and comment lines skipped. In a
// console block only lines starting with "$ " are commands.
func shellCommands(f fence) []string {
	var cmds []string
	var pending string
	for _, line := range f.lines {
		line = strings.TrimSpace(line)
		if f.kind() == "console" {
			if pending == "" {
				cmd, ok := strings.CutPrefix(line, "$ ")
				if !ok {
					continue
				}
				line = cmd
			}
		}
		if pending == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			pending += cont + " "
			continue
		}
		cmds = append(cmds, strings.TrimSpace(pending+line))
		pending = ""
	}
	if pending != "" {
		cmds = append(cmds, strings.TrimSpace(pending))
	}
	return cmds
}

// splitWords splits a command line as a shell would for the simple
// commands the READMEs use: whitespace-separated words, single and double
// quotes, a # comment at the end. It refuses what it does not handle
// (pipes, redirections, variables, ...): such a command must run in bash.
func splitWords(cmd string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	var quote rune
	for _, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				word.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		case strings.ContainsRune("|&;<>$`(){}*?\\", r):
			return nil, fmt.Errorf("%q: %q needs a shell", cmd, r)
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unclosed quote", cmd)
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// goRunExample recognises `go run ./examples/NN-name args...` and returns
// the example's directory name and the args.
func goRunExample(cmd string) (dir string, args []string, ok bool, err error) {
	if !strings.HasPrefix(cmd, "go run ./examples/") {
		return "", nil, false, nil
	}
	words, err := splitWords(cmd)
	if err != nil {
		return "", nil, true, err
	}
	pkg := strings.TrimSuffix(strings.TrimPrefix(words[2], "./examples/"), "/")
	if strings.Contains(pkg, "/") || pkg == "" {
		return "", nil, true, fmt.Errorf("%q: not an example directory", cmd)
	}
	return pkg, words[3:], true, nil
}

// readme is one example's README, parsed.
type readme struct {
	dir        string // "01-curl-watch"
	defaultCmd string
	run        []string            // commands of ```sh blocks, in order
	lookFor    map[string][]string // command → regexps
	flagChecks []string            // go run lines of illustrative blocks
}

func parseReadme(dir, doc string) (*readme, error) {
	fences, err := parseFences(doc)
	if err != nil {
		return nil, err
	}
	r := &readme{dir: dir, lookFor: map[string][]string{}}
	type pendingLook struct {
		cmd  string
		res  []string
		line int
	}
	var looks []pendingLook
	for _, f := range fences {
		switch {
		case f.info == "sh" || f.info == "bash" || f.info == "shell":
			r.run = append(r.run, shellCommands(f)...)
		case f.kind() == "look-for":
			var res []string
			for _, l := range f.lines {
				if strings.TrimSpace(l) != "" {
					res = append(res, l)
				}
			}
			looks = append(looks, pendingLook{cmd: f.arg(), res: res, line: f.line})
		case f.kind() == "console" || f.info == "sh illustrative" || f.info == "bash illustrative":
			for _, c := range shellCommands(f) {
				if strings.HasPrefix(c, "go run ./examples/") && !slices.Contains(r.flagChecks, c) {
					r.flagChecks = append(r.flagChecks, c)
				}
			}
		case f.kind() == "sh" || f.kind() == "bash":
			return nil, fmt.Errorf("line %d: unknown block %q: use ```sh (run by the test) or ```sh illustrative", f.line, f.info)
		}
	}
	if len(r.run) == 0 {
		return nil, errors.New("no ```sh block: the default run must be shown and run")
	}
	r.defaultCmd = r.run[0]
	if d, _, ok, err := goRunExample(r.defaultCmd); err != nil || !ok || d != dir {
		return nil, fmt.Errorf("the first ```sh command is %q; it must be `go run ./examples/%s [flags]`", r.defaultCmd, dir)
	}
	if len(looks) == 0 {
		return nil, errors.New("no ```look-for block")
	}
	for _, l := range looks {
		cmd := l.cmd
		if cmd == "" {
			cmd = r.defaultCmd
		}
		if !slices.Contains(r.run, cmd) {
			return nil, fmt.Errorf("line %d: ```look-for %s: no ```sh block runs that command", l.line, l.cmd)
		}
		if len(l.res) == 0 {
			return nil, fmt.Errorf("line %d: empty ```look-for block", l.line)
		}
		r.lookFor[cmd] = append(r.lookFor[cmd], l.res...)
	}
	if !strings.Contains(doc, "\n## What to look for") {
		return nil, errors.New(`no "## What to look for" section`)
	}
	return r, nil
}

// outcome is what running one command gave.
type outcome struct {
	output   string
	err      error
	duration time.Duration
}

// job is one command to run for one README.
type job struct {
	dir, cmd  string
	bin       string
	args      []string
	shell     bool // not an example: run by bash
	flagCheck bool // an illustrative command, run with -h
	result    outcome
}

func TestExamples(t *testing.T) {
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	dirs, err := filepath.Glob("[0-9][0-9]-*")
	require.NoError(t, err)
	require.NotEmpty(t, dirs, "no examples found")
	if *onlyExamples != "" {
		re, err := regexp.Compile(*onlyExamples)
		require.NoError(t, err, "-examples")
		dirs = slices.DeleteFunc(dirs, func(d string) bool { return !re.MatchString(d) })
		require.NotEmpty(t, dirs, "-examples %q matches no example", *onlyExamples)
	}
	index, err := os.ReadFile("README.md")
	require.NoError(t, err, "examples/README.md is the index of the examples")

	readmes := map[string]*readme{}
	for _, dir := range dirs {
		require.FileExists(t, filepath.Join(dir, "main.go"))
		assert.Contains(t, string(index), "("+dir+"/)", "examples/README.md does not link %s/", dir)
		doc, err := os.ReadFile(filepath.Join(dir, "README.md"))
		require.NoError(t, err)
		r, err := parseReadme(dir, string(doc))
		require.NoError(t, err, "%s/README.md", dir)
		readmes[dir] = r
		checkLinks(t, dir, string(doc))
	}
	checkLinks(t, ".", string(index))

	bin := examplesBin(t, root)

	var jobs []*job
	add := func(dir, cmd string, flagCheck bool) error {
		exDir, args, ok, err := goRunExample(cmd)
		if err != nil {
			return err
		}
		j := &job{dir: dir, cmd: cmd, flagCheck: flagCheck}
		if ok {
			if _, known := readmes[exDir]; !known {
				return fmt.Errorf("%q: no example %s", cmd, exDir)
			}
			if flagCheck {
				args = append(args, "-h")
			}
			j.bin, j.args = filepath.Join(bin, exDir), args
		} else {
			j.shell = true
		}
		jobs = append(jobs, j)
		return nil
	}
	for _, dir := range dirs {
		r := readmes[dir]
		cmds := r.run
		if testing.Short() {
			cmds = cmds[:1]
		}
		for _, cmd := range cmds {
			require.NoError(t, add(dir, cmd, false), "%s/README.md", dir)
		}
		for _, cmd := range r.flagChecks {
			require.NoError(t, add(dir, cmd, true), "%s/README.md", dir)
		}
	}
	runAll(root, jobs)

	for _, dir := range dirs {
		t.Run(dir, func(t *testing.T) {
			r := readmes[dir]
			for _, j := range jobs {
				if j.dir != dir {
					continue
				}
				name := j.cmd
				if j.flagCheck {
					name += " -h (flags of an illustrative command)"
				}
				t.Logf("%s: %v", name, j.result.duration.Round(100*time.Millisecond))
				if !assert.NoError(t, j.result.err, "%s\noutput:\n%s", name, j.result.output) {
					continue
				}
				if j.shell || j.flagCheck {
					continue
				}
				for _, expr := range r.lookFor[j.cmd] {
					re, err := regexp.Compile("(?m)" + expr)
					if !assert.NoError(t, err, "look-for regexp %q", expr) {
						continue
					}
					assert.True(t, re.MatchString(j.result.output),
						"%s: the README says to look for\n\t%s\nbut the output has no such line:\n%s", name, expr, j.result.output)
				}
			}
		})
	}
}

// markdownLink matches the target of a Markdown link, [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// checkLinks fails the test for every relative link in doc (a README in
// dir) whose target does not exist: the code a README points at must be
// there.
func checkLinks(t *testing.T, dir, doc string) {
	t.Helper()
	for _, m := range markdownLink.FindAllStringSubmatch(doc, -1) {
		target := m[1]
		if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
			continue
		}
		target, _, _ = strings.Cut(target, "#")
		_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(target)))
		assert.NoError(t, err, "%s/README.md links %s", dir, m[1])
	}
}

// The examples are built once per test binary, into binDir, removed by
// TestMain.
var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// examplesBin returns the directory holding every example's binary (built
// with the race detector when this test runs with it), named after its
// directory.
//
// Each binary comes from `go run -exec cp ./examples/NN-name DEST`: go run
// hands the binary it built to cp instead of running it. go run keeps the
// executables it links in the Go build cache (cmd/go/internal/run/run.go
// sets CacheExecutable on its link action), so when nothing changed a later
// run copies the cached binary instead of linking it again; go build -o
// into a new directory linked all fifteen every time, about 35 CPU-seconds
// under -race.
func examplesBin(t *testing.T, root string) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "listwatch-examples-")
		if buildErr != nil {
			return
		}
		buildErr = buildExamples(root, binDir)
	})
	require.NoError(t, buildErr)
	return binDir
}

// buildExamples puts every examples/NN-name binary into dir, a few go run
// commands at a time.
func buildExamples(root, dir string) error {
	// go test puts its own Go's bin directory first on PATH.
	goTool, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("no go command on PATH: %w", err)
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "[0-9][0-9]-*"))
	if err != nil {
		return err
	}
	errs := make([]error, len(examples))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, ex := range examples {
		name := filepath.Base(ex)
		args := []string{"run"}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "-exec", "cp", "./examples/"+name, filepath.Join(dir, name))
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			cmd := exec.Command(goTool, args...)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runAll runs the jobs, parallelCommands at a time, each bounded by
// commandTimeout.
func runAll(root string, jobs []*job) {
	sem := make(chan struct{}, parallelCommands)
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
			defer cancel()
			var cmd *exec.Cmd
			if j.shell {
				cmd = exec.CommandContext(ctx, "bash", "-c", j.cmd)
			} else {
				cmd = exec.CommandContext(ctx, j.bin, j.args...)
			}
			cmd.Dir = root
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.WaitDelay = 5 * time.Second
			start := time.Now()
			err := cmd.Run()
			if ctx.Err() != nil {
				err = fmt.Errorf("still running after %v: %w", commandTimeout, ctx.Err())
			}
			j.result = outcome{output: out.String(), err: err, duration: time.Since(start)}
		})
	}
	wg.Wait()
}

func TestParseFences(t *testing.T) {
	doc := "# T\n```sh\ngo run ./examples/01-x\n```\ntext\n```look-for go run ./examples/01-x -v\n^a$\n\n^b\n```\n"
	fences, err := parseFences(doc)
	require.NoError(t, err)
	require.Len(t, fences, 2)
	assert.Equal(t, "sh", fences[0].kind())
	assert.Equal(t, []string{"go run ./examples/01-x"}, fences[0].lines)
	assert.Equal(t, "look-for", fences[1].kind())
	assert.Equal(t, "go run ./examples/01-x -v", fences[1].arg())

	_, err = parseFences("```sh\nunclosed\n")
	assert.ErrorContains(t, err, "never closed")
}

func TestShellCommands(t *testing.T) {
	tests := []struct {
		name string
		f    fence
		want []string
	}{
		{"lines and comments", fence{info: "sh", lines: []string{"# a comment", "", "go run ./x", "echo hi"}},
			[]string{"go run ./x", "echo hi"}},
		{"continuation", fence{info: "sh", lines: []string{`go run ./x \`, "  -flag 1"}}, []string{"go run ./x  -flag 1"}},
		{"console prompts only", fence{info: "console", lines: []string{"$ kubectl proxy", "Starting to serve", "$ go run ./x"}},
			[]string{"kubectl proxy", "go run ./x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, shellCommands(tt.f))
		})
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "go run ./examples/01-a -timeout 3s", want: []string{"go", "run", "./examples/01-a", "-timeout", "3s"}},
		{in: `go run ./examples/01-a -server 'http://x:1'   # comment`, want: []string{"go", "run", "./examples/01-a", "-server", "http://x:1"}},
		{in: `a "b c" d#e`, want: []string{"a", "b c", "d#e"}},
		{in: "a | b", wantErr: true},
		{in: "a $HOME", wantErr: true},
		{in: `a "b`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := splitWords(tt.in)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseReadme(t *testing.T) {
	good := "# x\n```sh\ngo run ./examples/01-a\ngo run ./examples/01-a -v\n```\n" +
		"```sh illustrative\nkubectl proxy &\ngo run ./examples/01-a -server x\n```\n" +
		"## What to look for\n```look-for\n^ok$\n```\n```look-for go run ./examples/01-a -v\n^verbose\n```\n"
	r, err := parseReadme("01-a", good)
	require.NoError(t, err)
	assert.Equal(t, "go run ./examples/01-a", r.defaultCmd)
	assert.Equal(t, []string{"^ok$"}, r.lookFor["go run ./examples/01-a"])
	assert.Equal(t, []string{"^verbose"}, r.lookFor["go run ./examples/01-a -v"])
	assert.Equal(t, []string{"go run ./examples/01-a -server x"}, r.flagChecks)

	bad := map[string]string{
		"no sh block":            "## What to look for\n```look-for\nx\n```\n",
		"default runs another":   "```sh\ngo run ./examples/02-b\n```\n## What to look for\n```look-for\nx\n```\n",
		"no look-for":            "```sh\ngo run ./examples/01-a\n```\n## What to look for\n",
		"look-for of no command": "```sh\ngo run ./examples/01-a\n```\n## What to look for\n```look-for go run ./examples/01-a -z\nx\n```\n",
		"no section":             "```sh\ngo run ./examples/01-a\n```\n```look-for\nx\n```\n",
		"unknown sh variant":     "```sh\ngo run ./examples/01-a\n```\n```sh maybe\nx\n```\n## What to look for\n```look-for\nx\n```\n",
	}
	for name, doc := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := parseReadme("01-a", doc)
			assert.Error(t, err)
		})
	}
}

package workshop_test

// TestWorkshopCommands runs every command of docs/workshop.md's console
// blocks, in the order of the page, as one attendee following it would,
// against one apiserver started as the page's "One server for the room"
// says (faults on, 10 s watch timeout, revisions from 1):
//
//   - `export NAME=value` and `NAME=$(...)` set a variable for the
//     commands after them; SERVER stays the test's own server;
//   - `go run ./cmd/apiserver ...` is that server: its flags are checked
//     with --help, which fails on an unknown flag;
//   - commands that run until stopped (a curl -N watch, the workshop's
//     programs, the controller manager) run in the background, on binaries
//     built once, and are interrupted at the end; a starter runs as its
//     solution, which is what the attendee has once the exercise is done;
//   - every other command must exit 0, and print the lines the page
//     quotes under it. One that fails is tried again each time a
//     background program prints a line (it may be waiting for an operator
//     to act, as the attendee would), until the hang guard.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/docs/doccheck"
)

// sessionGuard bounds the whole session, builds included: a hang guard,
// not a speed claim.
const sessionGuard = 15 * time.Minute

// step is one command of a console block and the output the page quotes.
type step struct {
	cmd  string
	want []string
	line int
}

// consoleSteps returns the commands of a page's console blocks, in order.
func consoleSteps(md string) []step {
	var steps []step
	for _, b := range doccheck.Blocks(md) {
		if b.Info != "console" {
			continue
		}
		cont := false
		for i, l := range b.Lines {
			switch {
			case cont:
				steps[len(steps)-1].cmd += "\n" + l
			case strings.HasPrefix(l, "$ "):
				steps = append(steps, step{cmd: strings.TrimPrefix(l, "$ "), line: b.Line + 1 + i})
			case strings.TrimSpace(l) != "" && len(steps) > 0:
				steps[len(steps)-1].want = append(steps[len(steps)-1].want, strings.TrimRight(l, " "))
			}
			cont = strings.HasSuffix(l, "\\")
		}
	}
	return steps
}

var (
	assignment = regexp.MustCompile(`^(?:export )?([A-Z_]+)=`)
	goRun      = regexp.MustCompile(`go run (\./[^ ]+)`)
)

// session is the attendee's terminals: the variables set so far and the
// programs running in the background.
type session struct {
	t       *testing.T
	ctx     context.Context
	env     []string
	bins    map[string]string
	bg      []*exec.Cmd
	printed chan struct{} // a background program printed a line
	mu      sync.Mutex
	bgOut   strings.Builder
}

func TestWorkshopCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the workshop's commands take minutes; ./test.sh runs them")
	}
	_, err := exec.LookPath("kubectl")
	require.NoError(t, err, "workshop: the workshop's commands need kubectl on PATH")
	ctx, cancel := context.WithTimeout(context.Background(), sessionGuard)
	defer cancel()
	srv := startServer(t, apiserver.Config{MinRequestTimeout: 10 * time.Second})
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	md, err := os.ReadFile(filepath.Join(root, "docs", "workshop.md"))
	require.NoError(t, err)

	s := &session{t: t, ctx: ctx, bins: map[string]string{}, printed: make(chan struct{}, 1),
		env: append(os.Environ(), "SERVER="+srv.URL())}
	defer s.stopAll()
	for _, st := range consoleSteps(string(md)) {
		s.run(root, st)
	}
}

// run runs one step from the repository's root.
func (s *session) run(root string, st step) {
	s.t.Helper()
	where := fmt.Sprintf("docs/workshop.md:%d: %s", st.line, st.cmd)
	if m := assignment.FindStringSubmatch(st.cmd); m != nil {
		if m[1] != "SERVER" {
			out, err := s.shell(root, st.cmd+"\nprintf %s \"$"+m[1]+"\"").Output()
			require.NoError(s.t, err, where)
			s.env = append(s.env, m[1]+"="+string(out))
		}
		return
	}
	cmd := st.cmd
	if m := goRun.FindStringSubmatch(cmd); m != nil {
		pkg := strings.Replace(m[1], "/starter", "/solution", 1)
		if pkg == "./cmd/apiserver" {
			cmd = strings.Replace(cmd, m[0], s.binary(root, pkg), 1) + " --help"
		} else {
			cmd = strings.Replace(cmd, m[0], s.binary(root, pkg), 1)
		}
	}
	if strings.Contains(cmd, "curl -sN") || strings.Contains(cmd, "/workshop-bin-") && !strings.Contains(cmd, "--help") {
		s.t.Logf("%s: in the background", where)
		s.background(root, cmd)
		return
	}
	for {
		out, err := s.shell(root, cmd).CombinedOutput()
		if err == nil {
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			for i := range got {
				got[i] = strings.TrimRight(got[i], " ")
			}
			s.t.Logf("%s: ok", where)
			for _, w := range st.want {
				require.Contains(s.t, got, w, "%s: the page quotes this line; the command printed:\n%s", where, out)
			}
			return
		}
		if len(s.bg) == 0 {
			s.t.Fatalf("%s: %v\n%s", where, err, out)
		}
		select {
		case <-s.printed:
		case <-s.ctx.Done():
			s.mu.Lock()
			defer s.mu.Unlock()
			s.t.Fatalf("%s: %v\n%s\nbackground programs printed:\n%s", where, err, out, s.bgOut.String())
		}
	}
}

// shell is bash running cmd with the session's variables, in its own
// process group so that a background one can be stopped with its children.
func (s *session) shell(dir, cmd string) *exec.Cmd {
	c := exec.CommandContext(s.ctx, "bash", "-c", cmd)
	c.Dir, c.Env = dir, s.env
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return c
}

// binary builds a main package once and returns its path.
func (s *session) binary(root, pkg string) string {
	if b, ok := s.bins[pkg]; ok {
		return b
	}
	dir, err := os.MkdirTemp("", "workshop-bin-")
	require.NoError(s.t, err)
	s.t.Cleanup(func() { _ = os.RemoveAll(dir) })
	out := filepath.Join(dir, filepath.Base(filepath.Dir(pkg))+"-"+filepath.Base(pkg))
	b, err := exec.Command("go", "build", "-C", root, "-o", out, pkg).CombinedOutput()
	require.NoError(s.t, err, "go build %s: %s", pkg, b)
	s.bins[pkg] = out
	return out
}

// background starts cmd and signals s.printed for every line it prints.
func (s *session) background(root, cmd string) {
	c := s.shell(root, cmd)
	r, w, err := os.Pipe()
	require.NoError(s.t, err)
	c.Stdout, c.Stderr = w, w
	require.NoError(s.t, c.Start())
	w.Close()
	s.bg = append(s.bg, c)
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			s.mu.Lock()
			if s.bgOut.Len() < 1<<16 {
				fmt.Fprintf(&s.bgOut, "%s\n", sc.Text())
			}
			s.mu.Unlock()
			select {
			case s.printed <- struct{}{}:
			default:
			}
		}
	}()
}

// stopAll interrupts the background programs, as Ctrl-C would, and waits.
func (s *session) stopAll() {
	for _, c := range s.bg {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGINT)
	}
	for _, c := range s.bg {
		_ = c.Wait()
	}
}

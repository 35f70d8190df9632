package workshop_test

// The workshop's programs are tested as an attendee would use them: every
// starter and solution is built with `go build` (a starter that stops
// compiling fails here), and every solution is run, as a separate process,
// against an apiserver of the test's own with -server and -namespace,
// while the test plays the exercise: it makes the changes, pulls the fault
// switches, and checks what the solution printed. Nothing waits on a
// clock: the test waits for the lines it needs, and hangGuard only turns a
// hang into a failure.

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/syncbuf"
)

// hangGuard bounds one exercise's run: a hang guard, not a speed claim.
const hangGuard = 3 * time.Minute

// programs are the workshop's programs, by package directory.
var programs = []string{
	"02-rewatch/starter", "02-rewatch/solution",
	"07-operator/starter", "07-operator/solution",
}

// build compiles every program once per test binary into a temporary
// directory and returns the binaries' paths by program.
var build = sync.OnceValues(func() (map[string]string, error) {
	dir, err := os.MkdirTemp("", "workshop-bin-")
	if err != nil {
		return nil, err
	}
	bins := map[string]string{}
	for _, p := range programs {
		out := filepath.Join(dir, strings.ReplaceAll(p, "/", "-"))
		cmd := exec.Command("go", "build", "-o", out, "./"+p)
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, &buildError{p, string(b), err}
		}
		bins[p] = out
	}
	return bins, nil
})

type buildError struct {
	prog, out string
	err       error
}

func (e *buildError) Error() string {
	return "go build ./workshop/" + e.prog + ": " + e.err.Error() + "\n" + e.out
}

func binary(t *testing.T, prog string) string {
	t.Helper()
	bins, err := build()
	require.NoError(t, err)
	return bins[prog]
}

// TestStartersAndSolutionsBuild builds every program.
func TestStartersAndSolutionsBuild(t *testing.T) {
	for _, p := range programs {
		require.FileExists(t, binary(t, p), p)
	}
}

// startServer starts an apiserver for one test, with the fault switches.
func startServer(t *testing.T, cfg apiserver.Config) *apiserver.Server {
	t.Helper()
	cfg.Listen, cfg.EnableFaults = "127.0.0.1:0", true
	srv, err := apiserver.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
	})
	return srv
}

// process is a workshop program running against a server.
type process struct {
	t      *testing.T
	cmd    *exec.Cmd
	lines  chan string // stdout, line by line
	stderr syncbuf.Buffer
	seen   []string // every stdout line read so far
	done   chan error
}

// start runs prog with args and reads its output.
func start(t *testing.T, prog string, args ...string) *process {
	t.Helper()
	p := &process{t: t, lines: make(chan string, 1024), done: make(chan error, 1)}
	p.cmd = exec.Command(binary(t, prog), args...)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, out)
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(p.stop)
	return p
}

// waitFor reads lines until one matches re and returns its submatches.
func (p *process) waitFor(ctx context.Context, re *regexp.Regexp) []string {
	p.t.Helper()
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the program ended before printing a line matching %q; it printed:\n%s\nstderr:\n%s",
					re, strings.Join(p.seen, "\n"), p.stderr.String())
			}
			p.seen = append(p.seen, line)
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-ctx.Done():
			p.t.Fatalf("no line matching %q (hang guard); the program printed:\n%s\nstderr:\n%s",
				re, strings.Join(p.seen, "\n"), p.stderr.String())
		}
	}
}

// stop interrupts the program (Ctrl-C) and waits for it to end.
func (p *process) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	for range p.lines {
	}
	<-p.done
}

// apiserverConfig is the server every exercise's check starts from.
func apiserverConfig() apiserver.Config { return apiserver.Config{} }

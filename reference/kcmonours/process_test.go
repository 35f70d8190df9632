package kcmonours

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository's root, the core module's directory, checked.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module listwatch\n") {
		t.Fatalf("%s is not listwatch's core module: the reference module must sit in the repository", root)
	}
	return root
}

// controllerManager is bin/kube-controller-manager, which must be built.
func controllerManager(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("..", "bin", "kube-controller-manager"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("kube-controller-manager is not built (%v): run `go run ./cmd/refcluster build` in reference/ first (./test.sh reference does)", err)
	}
	return bin
}

// buildAPIServer compiles cmd/apiserver into dir.
func buildAPIServer(ctx context.Context, t *testing.T, root, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "apiserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/apiserver")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/apiserver: %v\n%s", err, b)
	}
	return out
}

// freePort asks the kernel for an unused loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is one started program, its output in a log file.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}

	mu      sync.Mutex
	seen    []string                 // every line so far
	waiters map[string]chan struct{} // closed when a line containing the key is seen
}

// start runs bin with args in a process group of its own, its output
// copied line by line to dir/name.log; t.Cleanup stops it.
func start(t *testing.T, dir, name, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), exited: make(chan struct{}),
		waiters: map[string]chan struct{}{}}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	pw.Close() // the child has its own copy
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer f.Close()
		p.copyLines(pr, f)
	}()
	go func() {
		_ = p.cmd.Wait()
		<-copied
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// copyLines writes each line to the log and wakes whoever waits for it.
func (p *proc) copyLines(r io.Reader, log io.Writer) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		_, _ = io.WriteString(log, line+"\n")
		p.mu.Lock()
		p.seen = append(p.seen, line)
		for want, ch := range p.waiters {
			if strings.Contains(line, want) {
				close(ch)
				delete(p.waiters, want)
			}
		}
		p.mu.Unlock()
	}
}

// stop sends SIGTERM and waits; a program still running after a minute is
// killed (a hang guard, not a wait).
func (p *proc) stop(t *testing.T) {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		t.Errorf("%s did not stop within a minute of SIGTERM; killing it", p.name)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// waitForLine waits until the program writes a line containing want, exits,
// or ctx ends.
func (p *proc) waitForLine(ctx context.Context, want string) error {
	p.mu.Lock()
	for _, l := range p.seen {
		if strings.Contains(l, want) {
			p.mu.Unlock()
			return nil
		}
	}
	ch := p.waiters[want]
	if ch == nil {
		ch = make(chan struct{})
		p.waiters[want] = ch
	}
	p.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-p.exited:
		return fmt.Errorf("%s exited before writing %q; its log is %s", p.name, want, p.log)
	case <-ctx.Done():
		return fmt.Errorf("waiting for %s to write %q: %w", p.name, want, ctx.Err())
	}
}

// tail returns the last n lines of the program's log that contain any of
// the words (all lines when words is empty).
func (p *proc) tail(n int, words ...string) string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if len(words) == 0 {
			kept = append(kept, l)
			continue
		}
		for _, w := range words {
			if strings.Contains(l, w) {
				kept = append(kept, l)
				break
			}
		}
	}
	if len(kept) > n {
		kept = kept[len(kept)-n:]
	}
	return strings.Join(kept, "\n")
}

// kubectl runs kubectl against the kubeconfig and returns its output.
type kubectl struct {
	t          *testing.T
	kubeconfig string
}

func (k kubectl) run(ctx context.Context, args ...string) string {
	k.t.Helper()
	out, err := k.try(ctx, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (k kubectl) try(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", append([]string{"--kubeconfig", k.kubeconfig}, args...)...)
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// waitArg is kubectl wait's --timeout: the overall hang guard's.
func waitArg(ctx context.Context) string {
	d, ok := ctx.Deadline()
	if !ok {
		return "--timeout=10m"
	}
	return "--timeout=" + strconv.Itoa(int(time.Until(d).Seconds())+1) + "s"
}

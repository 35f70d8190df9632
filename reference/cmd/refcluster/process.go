package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one program start launched: it outlives refcluster, so all
// that ties it to stop is its pid file in the state directory.
type process struct {
	name string
	cmd  *exec.Cmd
	// exited is closed when the program ends (while start still runs),
	// so a program that dies while starting fails start at once.
	exited chan struct{}
	err    error
}

// launch starts bin/name with args, its output going to name.log in the
// state directory, in a process group of its own so that a Ctrl-C in the
// terminal that ran `refcluster start` does not reach it.
func launch(c config, name string, args []string) (*process, error) {
	logFile, err := os.Create(filepath.Join(c.stateDir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("%s log: %w", name, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	cmd := exec.Command(filepath.Join(c.binDir, name), args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	pid := []byte(strconv.Itoa(cmd.Process.Pid) + "\n")
	if err := os.WriteFile(pidPath(c, name), pid, 0o644); err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("%s pid file: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady polls check until it succeeds, the program exits, or ctx ends.
// A program is ready when its own health endpoint says so; how long that
// takes depends on the machine, so only the caller's overall timeout
// bounds it.
func (p *process) waitReady(ctx context.Context, c config, check func(context.Context) error) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = check(ctx); last == nil {
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited while starting (%v); its log:\n%s", p.name, p.err, logTail(c, p.name))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready (last check: %v): %w; its log:\n%s", p.name, last, ctx.Err(), logTail(c, p.name))
		case <-tick.C:
		}
	}
}

func pidPath(c config, name string) string { return filepath.Join(c.stateDir, name+".pid") }

// logTail is the end of a program's log, for an error message.
func logTail(c config, name string) string {
	data, err := os.ReadFile(filepath.Join(c.stateDir, name+".log"))
	if err != nil {
		return err.Error()
	}
	return lastLines(data)
}

// lastLines is the end of a program's output, for an error message.
func lastLines(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// runningPid reads name's pid file and says whether that pid is still the
// program start launched (its command line starts with bin/name), so a
// stale file never makes stop signal an unrelated process that reused it.
func runningPid(c config, name string) (int, bool, error) {
	data, err := os.ReadFile(pidPath(c, name))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("%s pid file: %w", name, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, false, fmt.Errorf("%s pid file: %w", name, err)
	}
	return pid, alive(pid, filepath.Join(c.binDir, name)), nil
}

// alive says whether pid runs binPath and is not a zombie (a zombie has an
// empty command line).
func alive(pid int, binPath string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || len(cmdline) == 0 {
		return false
	}
	argv0, _, _ := bytes.Cut(cmdline, []byte{0})
	return string(argv0) == binPath
}

// terminate sends SIGTERM, waits for the program to go (kube-apiserver
// drains its requests first), and sends SIGKILL after grace.
func terminate(c config, name string, grace time.Duration) error {
	pid, ok, err := runningPid(c, name)
	if err != nil || !ok {
		_ = os.Remove(pidPath(c, name))
		return err
	}
	binPath := filepath.Join(c.binDir, name)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop %s (pid %d): %w", name, pid, err)
	}
	if !waitGone(pid, binPath, grace) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if !waitGone(pid, binPath, grace) {
			return fmt.Errorf("%s (pid %d) still runs after SIGKILL", name, pid)
		}
	}
	fmt.Printf("stopped %s (pid %d)\n", name, pid)
	return os.Remove(pidPath(c, name))
}

// waitGone polls until pid no longer runs binPath, for at most grace. The
// program is no child of this process (start launched it), so there is no
// exit to wait on: only /proc to look at.
func waitGone(pid int, binPath string, grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	for alive(pid, binPath) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

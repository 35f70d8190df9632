package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// server is an apiserver process started for one run.
type server struct {
	cmd  *exec.Cmd
	url  string
	pid  int
	done chan struct{}
}

var servingLine = regexp.MustCompile(`serving on (http://[^ ]+)`)

// startServer runs bin on a free loopback port and waits for the line
// saying where it serves. Its stderr after that goes to stderr.
func startServer(ctx context.Context, bin, extra string, stderr io.Writer) (*server, error) {
	args := append([]string{"--listen", "127.0.0.1:0", "--quiet"}, strings.Fields(extra)...)
	cmd := exec.Command(bin, args...)
	out, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
			fmt.Fprintln(stderr, "  apiserver:", sc.Text())
		}
	}()
	select {
	case s.url = <-found:
		return s, nil
	case <-s.done:
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s exited before serving", bin)
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	case <-time.After(30 * time.Second):
		s.stop()
		return nil, fmt.Errorf("%s did not say where it serves within 30 s", bin)
	}
}

// stop interrupts the server and waits for it (killing it after 15 s).
func (s *server) stop() {
	_ = s.cmd.Process.Signal(interruptSignal)
	select {
	case <-s.done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = s.cmd.Wait()
}

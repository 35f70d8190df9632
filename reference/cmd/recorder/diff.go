package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// result is what the differential runner compares of one recorded
// exchange: the status line, the Content-Type and the body.
type result struct {
	file, status, contentType string
	body                      []byte
}

// diffCmd is the differential runner: it starts the reference and our
// apiserver (the core module's cmd/apiserver, run as a program, never
// imported), replays the script against both at once, and prints every
// difference, each either explained by a row of the runner's table in
// docs/kubectl-and-client-go.md or not. Unexplained differences fail it.
func diffCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recorder diff", flag.ExitOnError)
	o := recordFlags(fs)
	oursPort := fs.Int("ours-port", 18443, "the port our apiserver listens on (127.0.0.1)")
	repo := fs.String("repo", repoRoot, "the repository root (the core module, with cmd/apiserver)")
	explained := fs.String("explained", filepath.Join(repoRoot, "docs", "kubectl-and-client-go.md"), "the page whose table explains differences")
	keep := fs.String("keep", "", "keep both runs' recordings and logs in this new directory (default: a temporary one, removed)")
	_ = fs.Parse(args)
	rules, err := loadRules(*explained)
	if err != nil {
		return err
	}
	work, err := workDir(*keep)
	if err != nil {
		return err
	}
	if *keep == "" {
		defer os.RemoveAll(work)
	}
	if err := refcluster(ctx, "start", *o); err != nil {
		return err
	}
	defer func() { _ = refcluster(context.WithoutCancel(ctx), "stop", *o) }()
	stopOurs, err := startOurs(ctx, *repo, work, o.state, *oursPort)
	if err != nil {
		return err
	}
	defer stopOurs()
	ref, ours, err := replayBoth(ctx, work, *o, *oursPort)
	if err != nil {
		return err
	}
	diffs := compareResults(ref, ours)
	return report(os.Stdout, diffs, rules, len(ref))
}

// workDir is where both runs write: keep (which must not exist yet, so
// nothing is mixed with an earlier run) or a new temporary directory.
func workDir(keep string) (string, error) {
	if keep == "" {
		dir, err := os.MkdirTemp("", "recorder-diff-")
		if err != nil {
			return "", fmt.Errorf("diff: %w", err)
		}
		return dir, nil
	}
	if err := os.Mkdir(keep, 0o755); err != nil {
		return "", fmt.Errorf("diff -keep: %w", err)
	}
	return keep, nil
}

// replayBoth runs the script against the reference and ours at the same
// time (each has its own state), each into a directory of its own.
func replayBoth(ctx context.Context, work string, o options, oursPort int) (ref, ours []result, err error) {
	runs := make([]*recorder, 2)
	for i, name := range []string{"reference", "ours"} {
		dir := filepath.Join(work, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("diff: %w", err)
		}
		if runs[i], err = newRecorder(dir, o); err != nil {
			return nil, nil, err
		}
		logFile, err := os.Create(filepath.Join(work, name+".log"))
		if err != nil {
			return nil, nil, fmt.Errorf("diff: %w", err)
		}
		defer logFile.Close()
		runs[i].log = logFile
	}
	runs[1].ours = true
	runs[1].target.addr = fmt.Sprintf("127.0.0.1:%d", oursPort)
	runs[1].server = "listwatch's apiserver"
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = r.replay(ctx); errs[i] != nil {
				errs[i] = fmt.Errorf("%s: %w (its log: %s)", []string{"kube-apiserver", "ours"}[i], errs[i],
					filepath.Join(work, []string{"reference", "ours"}[i]+".log"))
			}
		}()
	}
	wg.Wait()
	return runs[0].results, runs[1].results, errors.Join(errs...)
}

// startOurs builds and starts the core module's apiserver on loopback,
// serving the reference's certificate and accepting its token, so one
// client reaches both; it is stopped by its pid.
func startOurs(ctx context.Context, repo, work, state string, port int) (func(), error) {
	bin := filepath.Join(work, "apiserver")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/apiserver")
	build.Dir, build.Stdout, build.Stderr = repo, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, fmt.Errorf("build our apiserver: %w", err)
	}
	csv, err := os.ReadFile(filepath.Join(state, "tokens.csv"))
	if err != nil {
		return nil, fmt.Errorf("the reference's token: %w", err)
	}
	token, _, _ := strings.Cut(string(csv), ",")
	logFile, err := os.Create(filepath.Join(work, "apiserver.log"))
	if err != nil {
		return nil, fmt.Errorf("our apiserver's log: %w", err)
	}
	// Revisions start at 1, as a new etcd's do: the script's "far
	// future" resourceVersion (1000000) must be ahead of both servers.
	cmd := exec.Command(bin, "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-token", token, "-quiet", "-enable-faults",
		"-revisions-from-clock=false",
		"-tls-cert-file", filepath.Join(state, "apiserver.crt"), "-tls-private-key-file", filepath.Join(state, "apiserver.key"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start our apiserver: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logFile.Close()
	}
	t, err := newTarget(state, fmt.Sprintf("https://127.0.0.1:%d", port))
	if err == nil {
		err = waitAnswers(ctx, t)
	}
	if err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// waitAnswers polls GET /version until it is 200, for at most two
// minutes (a hang guard: it answers within a second once listening).
func waitAnswers(ctx context.Context, t target) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		resp, err := t.exchange(ctx, t.requestBytes("GET", "/version", nil, ""), 10*time.Second, 0, nil)
		if err == nil && strings.HasPrefix(resp.status, "200") {
			return nil
		}
		if err := pause(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("our apiserver never answered /version: %w", err)
		}
	}
}

// compactOurs is the script's compaction on our server: its fault switch
// compacts the store's history through now, which also expires every
// older watch, the effect the reference gets from its restart.
func (r *recorder) compactOurs(ctx context.Context) error {
	resp, err := r.target.exchange(ctx, r.target.requestBytes("POST", "/faults/compact", nil, ""), time.Minute, 0, nil)
	if err != nil {
		return fmt.Errorf("compact ours: %w", err)
	}
	if !strings.HasPrefix(resp.status, "2") {
		return fmt.Errorf("compact ours: %s %s", resp.status, resp.body)
	}
	r.vars["compactedRevision"] = "(ours: POST /faults/compact)"
	fmt.Fprintf(r.log, "compacted ours: %s\n", resp.body)
	return nil
}

// report prints every difference, explained ones with their reason, and
// fails when one is not explained.
func report(w io.Writer, diffs []difference, rules []rule, compared int) error {
	used := make([]bool, len(rules))
	unexplained := 0
	for _, d := range diffs {
		i := explain(rules, d)
		if i < 0 {
			unexplained++
			fmt.Fprintf(w, "UNEXPLAINED %s\n", d)
			continue
		}
		used[i] = true
		fmt.Fprintf(w, "explained   %s\n            (%s)\n", d, rules[i].why)
	}
	for i, r := range rules {
		if !used[i] {
			fmt.Fprintf(w, "note: no difference matched the explanation for %s %s; it may be stale\n", r.file, r.path)
		}
	}
	fmt.Fprintf(w, "\n%d recordings compared: %d differences, %d explained in docs/kubectl-and-client-go.md, %d not\n",
		compared, len(diffs), len(diffs)-unexplained, unexplained)
	if unexplained > 0 {
		return fmt.Errorf("%d differences from kube-apiserver 1.37 are neither fixed nor explained", unexplained)
	}
	return nil
}

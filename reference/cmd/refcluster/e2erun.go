package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// e2eFlags are the e2e.test flags for a cluster with no node, the ones
// test/e2e/framework/test_context.go defines: the "skeleton" provider
// (test/e2e/framework/provider.go: no cloud), no wait for the namespace's
// default ServiceAccount (a token controller makes it; ours has none), no
// node required Ready or present, no system Pod waited for, no logs
// fetched from nodes.
func e2eFlags(kubeconfig string) []string {
	return []string{
		"--kubeconfig=" + kubeconfig,
		"--provider=skeleton",
		"--e2e-verify-service-account=false",
		"--allowed-not-ready-nodes=-1",
		"--num-nodes=0",
		"--minStartupPods=0",
		"--disable-log-dump=true",
		"--ginkgo.no-color",
	}
}

// result is how one spec ended on one server.
type result struct {
	Spec    string  `json:"spec"`
	Group   string  `json:"group"`
	State   string  `json:"state"`
	Seconds float64 `json:"seconds"`
	// Message is the start of the failure ginkgo reported, if any.
	Message string `json:"message,omitempty"`
	// Log is the spec's e2e.test output, relative to the results directory.
	Log string `json:"log"`
}

// Results beyond ginkgo's own states (passed, failed, timedout, panicked,
// skipped, interrupted, aborted).
const (
	stateCrashed     = "crashed"      // e2e.test exited without a report for the spec
	stateKilled      = "killed"       // ran over -spec-timeout
	stateSetupFailed = "setup-failed" // the suite's set-up failed, the spec never ran
)

// specRun is what running one spec needs.
type specRun struct {
	e2eBin, kubeconfig string
	dir                string // where logs and reports go
	timeout            time.Duration
}

// runSpecs runs every spec in a process of its own, so a spec that crashes
// or hangs costs only itself: up to parallel at once, then the [Serial]
// ones alone, as ginkgo runs them. Results come back in the specs' order.
func runSpecs(ctx context.Context, r specRun, specs []spec, parallel int) []result {
	results := make([]result, len(specs))
	var mu sync.Mutex
	done := 0
	one := func(i int) {
		res := r.run(ctx, i, specs[i])
		mu.Lock()
		defer mu.Unlock()
		results[i] = res
		done++
		fmt.Printf("[%d/%d] %-12s %5.0fs  %s\n", done, len(specs), res.State, res.Seconds, res.Spec)
	}
	var parallelOnes, serialOnes []int
	for i, s := range specs {
		if s.Serial {
			serialOnes = append(serialOnes, i)
		} else {
			parallelOnes = append(parallelOnes, i)
		}
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Go(func() {
			for i := range work {
				one(i)
			}
		})
	}
	for _, i := range parallelOnes {
		work <- i
	}
	close(work)
	wg.Wait()
	for _, i := range serialOnes {
		one(i)
	}
	return results
}

// focusOf is the --ginkgo.focus that selects exactly the spec with this
// text: ginkgo matches it against the suite's description, a space and the
// spec's text (internal/focus.go, ApplyFocusToSpecs).
func focusOf(text string) string {
	return " " + regexp.QuoteMeta(text) + "$"
}

// run runs spec s (the i-th) in its own e2e.test and reads its report.
func (r specRun) run(ctx context.Context, i int, s spec) result {
	base := fmt.Sprintf("%03d", i)
	res := result{Spec: s.Text, Group: s.Group, Log: base + ".log"}
	if ctx.Err() != nil {
		res.State = "interrupted"
		return res
	}
	report := filepath.Join(r.dir, base+".json")
	_ = os.Remove(report)
	logFile, err := os.Create(filepath.Join(r.dir, res.Log))
	if err != nil {
		res.State, res.Message = stateCrashed, err.Error()
		return res
	}
	defer logFile.Close()
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	args := append(e2eFlags(r.kubeconfig), "--ginkgo.focus="+focusOf(s.Text), "--ginkgo.json-report="+report)
	cmd := exec.CommandContext(ctx, r.e2eBin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	runErr := cmd.Run()
	res.Seconds = time.Since(start).Seconds()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		res.State, res.Message = stateKilled, fmt.Sprintf("ran over -spec-timeout %s", r.timeout)
		return res
	}
	res.State, res.Message = stateFromReport(report, s.Text)
	if res.State == stateCrashed && runErr != nil {
		res.Message = runErr.Error()
	}
	return res
}

// stateFromReport reads how the spec with this text ended. A spec the
// suite skipped because a suite node (the set-up on every process) failed
// is stateSetupFailed, with that node's failure.
func stateFromReport(report, text string) (state, message string) {
	reports, err := readGinkgoReport(report)
	if err != nil {
		return stateCrashed, err.Error()
	}
	var setup *ginkgoSpecReport
	for i, sr := range reports {
		if sr.LeafNodeType != "It" && sr.State != "passed" && sr.State != "skipped" {
			setup = &reports[i]
		}
	}
	for _, sr := range reports {
		if sr.LeafNodeType != "It" || sr.text() != text {
			continue
		}
		if sr.State == "skipped" && setup != nil {
			return stateSetupFailed, firstLine(setup.Failure.Message)
		}
		return sr.State, firstLine(sr.Failure.Message)
	}
	return stateCrashed, "the report has no such spec"
}

// firstLine is a failure message cut to one line for the table's notes.
func firstLine(msg string) string {
	msg, _, _ = strings.Cut(strings.TrimSpace(msg), "\n")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	return msg
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// e2eOptions are the flags of `refcluster e2e`.
type e2eOptions struct {
	against        string
	focus          string
	parallel       int
	specTimeout    time.Duration
	kcmControllers string
	dir            string
}

// defaultKCMControllers are the reference's counterparts of what our
// controller-manager runs (controllers/manager, All): its Deployment
// controller makes Pods, which Kubernetes splits between the Deployment
// controller (Deployments to ReplicaSets) and the ReplicaSet controller
// (ReplicaSets to Pods); its garbage collector, namespace controller and
// ServiceAccount controller (the default ServiceAccount in every namespace,
// without which kube-apiserver's ServiceAccount admission refuses every
// Pod) are kube-controller-manager's. Our stand-in kubelet has no
// counterpart there:
// the kubelet is no controller, and the reference has no node. Names from
// cmd/kube-controller-manager/names/controller_names.go.
const defaultKCMControllers = "deployment-controller,replicaset-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller"

func (e *e2eOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&e.against, "against", "reference,ours", "e2e: the servers to run the specs against, in order: reference, ours or both")
	fs.StringVar(&e.focus, "focus", "", "e2e: run only the in-scope specs whose text matches this regular expression (the table keeps the other rows of an earlier run)")
	fs.IntVar(&e.parallel, "parallel", 3, "e2e: specs run at once, each in its own e2e.test ([Serial] ones run alone, after)")
	fs.DurationVar(&e.specTimeout, "spec-timeout", 15*time.Minute, "e2e: a spec's process is killed after this long (a hang guard; specs wait up to minutes for what never comes)")
	fs.StringVar(&e.kcmControllers, "kcm-controllers", defaultKCMControllers, "e2e: kube-controller-manager's --controllers on the reference (\"*\": all its defaults)")
	fs.StringVar(&e.dir, "results", "", "e2e: where logs, reports and the table go (default <module>/.e2e)")
}

// runE2E runs the in-scope e2e specs against each server named by
// -against, one cluster at a time, and prints the table of both.
func runE2E(ctx context.Context, c config, e e2eOptions) error {
	e2eBin := filepath.Join(c.binDir, e2eBinary().name)
	if _, err := os.Stat(e2eBin); err != nil {
		return fmt.Errorf("%s is not built: run `go run ./cmd/refcluster build e2e` first (%w)", e2eBin, err)
	}
	if e.dir == "" {
		e.dir = filepath.Join(c.moduleDir, ".e2e")
	}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	specs, err := listSpecs(ctx, e2eBin, e.dir)
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(e.dir, "specs.json"), specs); err != nil {
		return err
	}
	if specs, err = narrow(specs, e.focus); err != nil {
		return err
	}
	for _, target := range strings.Split(e.against, ",") {
		if err := runAgainst(ctx, c, e, e2eBin, strings.TrimSpace(target), specs); err != nil {
			return err
		}
	}
	table, err := writeTable(e.dir)
	if err != nil {
		return err
	}
	fmt.Print(table)
	return nil
}

// narrow keeps the specs whose text matches focus ("" keeps all).
func narrow(specs []spec, focus string) ([]spec, error) {
	if focus == "" {
		return specs, nil
	}
	re, err := regexp.Compile(focus)
	if err != nil {
		return nil, fmt.Errorf("-focus: %w", err)
	}
	var kept []spec
	for _, s := range specs {
		if re.MatchString(s.Text) {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("-focus %q matches no in-scope spec", focus)
	}
	return kept, nil
}

// runAgainst starts one server, runs the specs against it, stops it and
// merges the results into <dir>/<target>/results.json.
func runAgainst(ctx context.Context, c config, e e2eOptions, e2eBin, target string, specs []spec) (err error) {
	dir := filepath.Join(e.dir, target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	kubeconfig, stopServer, err := startTarget(ctx, c, e, target, filepath.Join(dir, "cluster"))
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, stopServer()) }()
	fmt.Printf("running %d specs against %s (kubeconfig %s)\n", len(specs), target, kubeconfig)
	start := time.Now()
	results := runSpecs(ctx, specRun{e2eBin: e2eBin, kubeconfig: kubeconfig, dir: dir, timeout: e.specTimeout}, specs, e.parallel)
	fmt.Printf("%s: %d specs in %s\n", target, len(specs), time.Since(start).Round(time.Second))
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return mergeResults(filepath.Join(dir, "results.json"), results)
}

// startTarget starts the reference (etcd, kube-apiserver and
// kube-controller-manager with -kcm-controllers) or ours on free loopback
// ports with its state in dir, and says how to reach and stop it.
func startTarget(ctx context.Context, c config, e e2eOptions, target, dir string) (kubeconfig string, stopTarget func() error, err error) {
	switch target {
	case "reference":
		rc := c
		rc.stateDir, rc.controllers, rc.kcmControllers = dir, true, e.kcmControllers
		if e.kcmControllers == "*" {
			rc.kcmControllers = ""
		}
		ports, err := freeLoopbackPorts(4)
		if err != nil {
			return "", nil, err
		}
		rc.etcdPort, rc.etcdPeerPort, rc.apiserverPort, rc.controllerManagerPort = ports[0], ports[1], ports[2], ports[3]
		if err := start(ctx, rc); err != nil {
			return "", nil, err
		}
		return filepath.Join(dir, kubeconfigFile), func() error { return stop(rc) }, nil
	case "ours":
		o, err := startOurs(ctx, c, dir)
		if err != nil {
			return "", nil, err
		}
		return o.kubeconfig, o.stop, nil
	default:
		return "", nil, fmt.Errorf("-against: unknown server %q (reference or ours)", target)
	}
}

// freeLoopbackPorts asks the kernel for n unused loopback ports. They are
// free when returned; another program could take one before the server
// binds it, which fails its start loudly, never silently.
func freeLoopbackPorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// mergeResults writes results into path, replacing the rows of the same
// specs and keeping the others (a -focus run updates only its rows).
func mergeResults(path string, results []result) error {
	old, err := readResults(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	index := map[string]int{}
	for i, r := range old {
		index[r.Spec] = i
	}
	for _, r := range results {
		if i, ok := index[r.Spec]; ok {
			old[i] = r
		} else {
			old = append(old, r)
		}
	}
	return writeJSON(path, old)
}

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func readResults(path string) ([]result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	var results []result
	if err := json.Unmarshal(data, &results); err != nil {
		return nil, fmt.Errorf("results %s: %w", path, err)
	}
	return results, nil
}

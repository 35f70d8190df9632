package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
)

// config is where the reference lives and on which loopback ports it runs.
type config struct {
	moduleDir, binDir, stateDir string

	etcdPort, etcdPeerPort int
	apiserverPort          int
	controllerManagerPort  int
	controllers            bool
	authorization          string
	timeout                time.Duration
	rebuild                bool
	// kcmControllers, if set, is kube-controller-manager's --controllers.
	kcmControllers string
	// args are the arguments after the flags (build's "e2e").
	args []string
}

const usage = `usage: refcluster build [e2e]|start|restart-apiserver|stop|env|e2e [flags]

  build              build etcd, kube-apiserver and kube-controller-manager into bin/
  build e2e          build Kubernetes' e2e test binary, bin/e2e.test
  start              build what is missing, then start them on loopback
  restart-apiserver  stop kube-apiserver and start it again on the same etcd
                     (its watch caches start over: older resourceVersions get 410)
  stop               stop them (by pid) and delete etcd's data
  env                print the export line for the running cluster's kubeconfig
  e2e                run the in-scope [sig-api-machinery] e2e specs against the
                     reference and against ours, and print the table (docs/e2e.md)

Run from the reference module's directory (or: go -C reference run ./cmd/refcluster ...).
Flags (every subcommand):
`

func main() {
	if len(os.Args) < 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	sub := os.Args[1]
	fs := flag.NewFlagSet("refcluster "+sub, flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage); fs.PrintDefaults() }
	var c config
	fs.StringVar(&c.moduleDir, "module", ".", "the reference module's directory")
	fs.StringVar(&c.binDir, "bin", "", "where the binaries are built (default <module>/bin)")
	fs.StringVar(&c.stateDir, "state", "", "certificates, kubeconfig, logs, pids and etcd data (default <module>/.run)")
	fs.IntVar(&c.etcdPort, "etcd-port", 23790, "etcd's client port on 127.0.0.1")
	fs.IntVar(&c.etcdPeerPort, "etcd-peer-port", 23800, "etcd's peer port on 127.0.0.1")
	fs.IntVar(&c.apiserverPort, "port", 16443, "kube-apiserver's HTTPS port on 127.0.0.1")
	fs.IntVar(&c.controllerManagerPort, "controller-manager-port", 16257, "kube-controller-manager's HTTPS port on 127.0.0.1")
	fs.BoolVar(&c.controllers, "controllers", false, "start: also run kube-controller-manager")
	fs.StringVar(&c.authorization, "authorization-mode", "AlwaysAllow", "start: kube-apiserver's --authorization-mode (RBAC works too: the token is system:masters)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "start: how long to wait for every program to be ready")
	fs.BoolVar(&c.rebuild, "force", false, "build: rebuild binaries that exist")
	var e e2eOptions
	if sub == "e2e" {
		e.register(fs)
	}
	_ = fs.Parse(os.Args[2:])
	c.args = fs.Args()
	if err := c.resolve(); err != nil {
		fmt.Fprintln(os.Stderr, "refcluster:", err)
		os.Exit(1)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if err := run(ctx, sub, c, e); err != nil {
		fmt.Fprintln(os.Stderr, "refcluster:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, sub string, c config, e e2eOptions) error {
	switch sub {
	case "build":
		switch {
		case len(c.args) == 0:
			return build(ctx, c.moduleDir, c.binDir, c.rebuild, binaries())
		case len(c.args) == 1 && c.args[0] == "e2e":
			return build(ctx, c.moduleDir, c.binDir, c.rebuild, []binary{e2eBinary()})
		default:
			return fmt.Errorf("build: unknown target %q (build builds the cluster's binaries, build e2e the e2e tests)", c.args)
		}
	case "e2e":
		return runE2E(ctx, c, e)
	case "start":
		return start(ctx, c)
	case "restart-apiserver":
		return restartAPIServer(ctx, c)
	case "stop":
		return stop(c)
	case "env":
		path := filepath.Join(c.stateDir, kubeconfigFile)
		if _, ok, err := runningPid(c, "kube-apiserver"); err != nil || !ok {
			return fmt.Errorf("no reference kube-apiserver runs from %s: run `refcluster start`", c.stateDir)
		}
		fmt.Printf("export KUBECONFIG=%s\n", path)
		return nil
	default:
		return fmt.Errorf("unknown subcommand %q\n%s", sub, usage)
	}
}

// resolve makes every directory absolute (pid files name binaries by
// their absolute path) and checks that moduleDir is this module.
func (c *config) resolve() error {
	dir, err := filepath.Abs(c.moduleDir)
	if err != nil {
		return fmt.Errorf("module directory: %w", err)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !strings.HasPrefix(string(mod), "module listwatch/reference\n") {
		return errors.New(dir + " is not the reference module: run from reference/ or pass -module")
	}
	c.moduleDir = dir
	if c.binDir == "" {
		c.binDir = filepath.Join(dir, "bin")
	}
	if c.stateDir == "" {
		c.stateDir = filepath.Join(dir, ".run")
	}
	if c.binDir, err = filepath.Abs(c.binDir); err != nil {
		return fmt.Errorf("bin directory: %w", err)
	}
	if c.stateDir, err = filepath.Abs(c.stateDir); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	return nil
}

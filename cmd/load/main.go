// Command load measures the apiserver under the loads of
// docs/performance-limits.md on this
// machine, against a server it starts as a separate process (so the
// server's CPU and memory are its own, and the watchers' connections do not
// share its file descriptors):
//
//	go build -o /tmp/apiserver ./cmd/apiserver
//	go run ./cmd/load -apiserver /tmp/apiserver -scenario fanout    # 10,000 watchers, 500 creates of 1 KiB from 4 writers
//	go run ./cmd/load -apiserver /tmp/apiserver -scenario puts      # 1,000 PUTs of a 2 MB object
//	go run ./cmd/load -apiserver /tmp/apiserver -scenario lists     # 64 parallel LISTs of 50,000 × 1 KiB
//	go run ./cmd/load -apiserver /tmp/apiserver -scenario storm -mode list -informers 100 -objects 10000 -size 2048
//	                                                               # 100 informers start at once and LIST 10,000 × 2 KiB
//	go run ./cmd/load -apiserver /tmp/apiserver -scenario storm -mode watchlist -informers 100 -objects 10000 -size 2048
//	                                                               # the same informers start with a watch-list
//	(ulimit -n 12000 && go run ./cmd/load -apiserver /tmp/apiserver -scenario flood -watchers 15000)
//	                                                               # 15,000 watches held open, 128 at a time,
//	                                                               # past the watch cap; /healthz and a LIST meanwhile
//
// It talks to loopback only, and every run is bounded in size (flags are
// capped) and in time (-timeout). It prints one report: deliveries per
// second, write-to-receive latency, how long one event took to reach
// every watcher after the first, server CPU per delivery, peak server
// RSS, /healthz latency, 429s. The flood's caps come from the server's
// limit on open files (docs/limits.md): ulimit -n sets it for the server
// it starts, and this process needs as many for the watches it holds. docs/performance-limits.md has the numbers
// and the machine they came from; docs/performance-watchlist.md has the
// storm's, against ours and against the real kube-apiserver. -url runs
// against a server you started yourself, -kubeconfig against one over
// https with a CA and a token (the reference's: reference/.run/kubeconfig);
// then -pid, if given, is read for CPU and RSS (Linux only). -etcd-pid
// names the etcd behind the server, so that a server on etcd is charged
// for the CPU its storage spent too: the fan-out then reports server + etcd
// CPU per delivery, for ours on etcd and for kube-apiserver alike.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// Bounds on what one run may ask for.
const (
	maxWatchers = 20000
	maxWrites   = 100000
	maxTimeout  = 30 * time.Minute
)

// config is a run's parameters.
type config struct {
	scenario   string
	apiserver  string
	serverArgs string
	url        string
	kubeconfig string
	pid        int
	etcdPid    int
	watchers   int
	writes     int
	writers    int
	size       int
	puts       int
	putSize    int
	objects    int
	lists      int
	batch      int
	hold       time.Duration
	timeout    time.Duration
	informers  int
	mode       string
	fill       bool
	gzip       bool
	accept     string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.scenario, "scenario", "fanout", "fanout, puts, lists, storm or flood (see the package comment)")
	fs.StringVar(&c.apiserver, "apiserver", "", "path of an apiserver binary to start on a free loopback port (go build ./cmd/apiserver)")
	fs.StringVar(&c.serverArgs, "server-args", "", "extra flags for the started apiserver, space-separated")
	fs.StringVar(&c.url, "url", "", "base URL of a server already running on loopback (instead of -apiserver)")
	fs.StringVar(&c.kubeconfig, "kubeconfig", "", "a kubeconfig whose current context is a server already running on loopback, over https with its CA and token (instead of -apiserver)")
	fs.IntVar(&c.pid, "pid", 0, "with -url or -kubeconfig: the server's process id, for its CPU and RSS (Linux)")
	fs.IntVar(&c.etcdPid, "etcd-pid", 0, "the process id of the etcd the server stores in: its CPU is reported beside the server's, and the two are added up per delivery (Linux)")
	fs.IntVar(&c.watchers, "watchers", 10000, "fanout: concurrent watchers; flood: watches to open (at most 20,000)")
	fs.IntVar(&c.writes, "writes", 500, "fanout: creates")
	fs.IntVar(&c.writers, "writers", 4, "fanout: concurrent writers")
	fs.IntVar(&c.size, "size", 1024, "fanout, lists: bytes of data per object")
	fs.IntVar(&c.puts, "puts", 1000, "puts: PUTs of one object")
	fs.IntVar(&c.putSize, "put-size", 2<<20, "puts: bytes of the object's data")
	fs.IntVar(&c.objects, "objects", 50000, "lists, storm: objects to create first")
	fs.IntVar(&c.informers, "informers", 100, "storm: informers started at once (at most 1,000)")
	fs.StringVar(&c.mode, "mode", "list", "storm: how each informer starts: list (LIST, then watch) or watchlist (a watch with sendInitialEvents=true)")
	fs.BoolVar(&c.fill, "fill", true, "lists, storm: create the objects first; false uses what the namespace holds (default; "+stormNamespace+")")
	fs.StringVar(&c.accept, "accept", "application/json", "lists: the LISTs' Accept header (client-go's typed clients send application/vnd.kubernetes.protobuf, application/json)")
	fs.BoolVar(&c.gzip, "gzip", true, "lists, storm: ask for gzip, as client-go does (Go's transport); the server compresses what it chooses to")
	fs.IntVar(&c.lists, "lists", 64, "lists: parallel LISTs")
	fs.IntVar(&c.batch, "batch", 128, "flood: watches opened at once (at most 1,024)")
	fs.DurationVar(&c.hold, "hold", 5*time.Second, "flood: how long the probes go on once every watch was answered (at most 1m)")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "bound on the whole run (at most 30m)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case c.watchers < 1 || c.watchers > maxWatchers:
		return fmt.Errorf("-watchers must be 1..%d", maxWatchers)
	case c.writes < 1 || c.writes > maxWrites || c.puts < 1 || c.puts > maxWrites || c.objects < 1 || c.objects > maxWrites:
		return fmt.Errorf("-writes, -puts and -objects must be 1..%d", maxWrites)
	case c.writers < 1 || c.writers > 64 || c.lists < 1 || c.lists > 256:
		return errors.New("-writers must be 1..64 and -lists 1..256")
	case c.batch < 1 || c.batch > 1024 || c.hold < 0 || c.hold > time.Minute:
		return errors.New("-batch must be 1..1024 and -hold 0..1m")
	case c.size < 0 || c.size > 1<<20 || c.putSize < 0 || c.putSize > 3<<20:
		return errors.New("-size must be at most 1 MiB and -put-size at most 3 MiB")
	case c.timeout <= 0 || c.timeout > maxTimeout:
		return fmt.Errorf("-timeout must be positive and at most %v", maxTimeout)
	case c.informers < 1 || c.informers > 1000:
		return errors.New("-informers must be 1..1000")
	case c.mode != "list" && c.mode != "watchlist":
		return errors.New("-mode must be list or watchlist")
	case countSet(c.apiserver, c.url, c.kubeconfig) != 1:
		return errors.New("give exactly one of -apiserver, -url and -kubeconfig")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	t, pid := plainTarget(c.url), c.pid
	switch {
	case c.apiserver != "":
		srv, err := startServer(ctx, c.apiserver, c.serverArgs, stderr)
		if err != nil {
			return err
		}
		defer srv.stop()
		t, pid = plainTarget(srv.url), srv.pid
	case c.kubeconfig != "":
		var err error
		if t, err = kubeconfigTarget(c.kubeconfig); err != nil {
			return err
		}
	}
	if err := loopbackOnly(t.base); err != nil {
		return err
	}
	proc := newProcWatch(pid)
	defer proc.stop()
	etcd := newProcWatch(c.etcdPid)
	defer etcd.stop()

	var rep report
	var err error
	switch c.scenario {
	case "fanout":
		rep, err = fanout(ctx, t, c)
	case "puts":
		rep, err = puts(ctx, t, c)
	case "lists":
		rep, err = lists(ctx, t, c, proc)
	case "storm":
		rep, err = storm(ctx, t, c, proc)
	case "flood":
		if t.tls != nil || t.token != "" {
			return errors.New("the flood writes its watches by hand over plain HTTP: give -apiserver or -url")
		}
		rep, err = flood(ctx, t.base, c)
	default:
		return fmt.Errorf("unknown -scenario %q", c.scenario)
	}
	rep.server, rep.etcd = proc.snapshot(), etcd.snapshot()
	rep.print(stdout)
	return err
}

// countSet counts the non-empty strings.
func countSet(s ...string) int {
	n := 0
	for _, v := range s {
		if v != "" {
			n++
		}
	}
	return n
}

// loopbackOnly refuses to load anything but this machine.
func loopbackOnly(base string) error {
	u, err := url.Parse(base)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%s is not a loopback address: this harness only loads this machine", base)
	}
	return nil
}

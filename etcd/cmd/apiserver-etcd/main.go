// Command apiserver-etcd runs listwatch's apiserver on etcd instead of the
// in-memory store: on an etcd embedded in the same process, with its data
// in --data-dir (nothing to install), or on an external cluster named by
// --etcd-servers. Several of them on one cluster are several apiservers of
// one Kubernetes-like control plane: they share one revision history, so a
// resourceVersion from one means the same on all.
//
//	go -C etcd run ./cmd/apiserver-etcd --data-dir /tmp/lw-etcd     # embedded etcd, http://127.0.0.1:8080
//	go -C etcd run ./cmd/apiserver-etcd --etcd-servers http://127.0.0.1:2379 --listen 127.0.0.1:8081
//
// Stop it and start it again with the same --data-dir: every object and
// resourceVersion is still there. The core module's `go run ./cmd/apiserver`
// stays the zero-setup, in-memory default.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"listwatch/apiserver"
	"listwatch/etcd"
	"listwatch/etcd/embedded"
	"listwatch/narrate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr, nil)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "apiserver-etcd:", err)
		os.Exit(1)
	}
}

// Timeouts of start-up and of the graceful stop.
const (
	startTimeout    = 30 * time.Second
	shutdownTimeout = 10 * time.Second
)

const usageHeader = `Usage: apiserver-etcd (--data-dir DIR | --etcd-servers URL,...) [flags]

listwatch's apiserver on etcd: with --data-dir it runs an embedded etcd
member in this process; with --etcd-servers it uses an external cluster.
Keys are laid out as kube-apiserver lays them out, so etcdctl shows them:

  etcdctl --endpoints http://127.0.0.1:2379 get --prefix /registry/configmaps --keys-only

Flags:
`

// run parses args, serves until ctx is done, then stops gracefully. ready,
// if not nil, receives the apiserver's URL once it serves (for tests).
func run(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("apiserver-etcd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", apiserver.DefaultBinaryListen, "address the apiserver listens on (loopback by default)")
	dataDir := fs.String("data-dir", "", "run an embedded etcd member with its data here (created if missing; reused on restart)")
	servers := fs.String("etcd-servers", "", "comma-separated client URLs of an external etcd cluster (instead of --data-dir)")
	clientURL := fs.String("etcd-client-url", "http://127.0.0.1:2379", "with --data-dir: where the embedded etcd serves clients (etcdctl --endpoints)")
	peerURL := fs.String("etcd-peer-url", "http://127.0.0.1:2380", "with --data-dir: where the embedded etcd talks to its peers")
	prefix := fs.String("etcd-prefix", "", "put in front of every key in etcd, like kube-apiserver's --etcd-prefix (keys already start with /registry/)")
	progress := fs.Duration("watch-progress-notify-interval", embedded.DefaultProgressNotifyInterval, "with --data-dir: how often etcd tells idle watches its revision (they become bookmarks)")
	compaction := fs.Duration("etcd-compaction-interval", 5*time.Minute, "compact etcd's history every interval, one interval behind (kube-apiserver's default is 5m); 0 turns it off")
	minRequestTimeout := fs.Duration("min-request-timeout", apiserver.DefaultMinRequestTimeout, "a watch without ?timeoutSeconds ends after this × (1 + rand)")
	bookmarkInterval := fs.Duration("bookmark-interval", apiserver.DefaultBookmarkInterval, "how often watchers that asked for bookmarks get one")
	enableFaults := fs.Bool("enable-faults", false, "serve the workshop fault switches under /faults/ (compact compacts etcd)")
	trace := fs.Bool("trace", false, "narrate every step on stderr (etcd store, watch cache, HTTP)")
	quiet := fs.Bool("quiet", false, "do not log one line per request on stderr")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if (*dataDir == "") == (*servers == "") {
		fs.Usage()
		return errors.New("give exactly one of --data-dir (embedded etcd) and --etcd-servers (external cluster)")
	}

	var tracer *narrate.Tracer
	if *trace {
		tracer = narrate.New(stderr)
	}
	startCtx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()

	endpoints := splitList(*servers)
	if *dataDir != "" {
		member, err := embedded.Start(startCtx, embedded.Config{
			DataDir: *dataDir, ClientURL: *clientURL, PeerURL: *peerURL,
			ProgressNotifyInterval: *progress,
		})
		if err != nil {
			return err
		}
		defer member.Close()
		fmt.Fprintf(stderr, "apiserver-etcd: embedded etcd serving clients on %s, data in %s\n", member.ClientURL(), *dataDir)
		endpoints = []string{member.ClientURL()}
	}
	cli, err := embedded.NewClient(endpoints)
	if err != nil {
		return err
	}
	defer cli.Close()
	st, err := etcd.New(startCtx, cli, etcd.Options{Prefix: *prefix, CompactionInterval: *compaction, Tracer: tracer})
	if err != nil {
		return err
	}
	defer st.Close()

	cfg := apiserver.Config{
		Listen:            *listen,
		MinRequestTimeout: *minRequestTimeout,
		BookmarkInterval:  *bookmarkInterval,
		EnableFaults:      *enableFaults,
		Store:             st,
		Tracer:            tracer,
	}
	if !*quiet {
		cfg.Logger = log.New(stderr, "", log.LstdFlags)
	}
	srv, err := apiserver.Start(startCtx, cfg)
	if err != nil {
		return err
	}
	rev, _ := st.CurrentRevision(startCtx)
	fmt.Fprintf(stderr, "apiserver-etcd: serving on %s on etcd %v at revision %d\n", srv.URL(), endpoints, rev)
	if ready != nil {
		ready <- srv.URL()
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "apiserver-etcd: shutting down")
	stopCtx, stopCancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer stopCancel()
	return srv.Stop(stopCtx)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

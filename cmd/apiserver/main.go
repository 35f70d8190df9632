// Command apiserver runs the listwatch toy kube-apiserver: the Kubernetes
// REST API (list, get, create, update, patch, delete, watch) over an
// in-memory store, with one watch cache per resource, for curl, kubectl and
// client-go to talk to.
//
//	go run ./cmd/apiserver                       # serves http://127.0.0.1:8080
//	curl -N 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps?watch=true'
//	kubectl --server http://127.0.0.1:8080 get configmaps -w
//
//	go run ./cmd/apiserver --tls                 # https and HTTP/2, a generated certificate
//	kubectl --kubeconfig /tmp/listwatch-apiserver/kubeconfig get configmaps -w
//
// Every flag is documented in --help. SIGINT or SIGTERM shuts it down
// cleanly: open watches end with a clean end of stream.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"listwatch/apiserver"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/filters"
	"listwatch/narrate"
	"listwatch/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "apiserver:", err)
		os.Exit(1)
	}
}

// shutdownTimeout bounds the graceful stop after a signal.
const shutdownTimeout = 10 * time.Second

const usageHeader = `Usage: apiserver [flags]

The listwatch toy kube-apiserver: Kubernetes' REST API and watch over an
in-memory store, for curl, kubectl and client-go. Try:

  curl -N 'http://127.0.0.1:8080/api/v1/namespaces/default/configmaps?watch=true'
  kubectl --server http://127.0.0.1:8080 get configmaps -w

Open http://127.0.0.1:8080/ui/ in a browser for the live page: an informer
running in the browser over a websocket watch, beside the server's watch
caches and watchers (docs/see-it-live.md). The read-only debug view it draws
is at /debug/listwatch. With --enable-faults the page gets a button per
fault switch; the switches are POSTs under /faults/:

  kill-watches                       drop every open watch connection abruptly (HTTP/2: all its streams)
  kill-watch-streams                 the same, but over HTTP/2 one stream per watch (the connection lives on)
  compact                            compact history now (older watches and continue tokens get 410)
  stall-watches                      open watches stop writing but stay open (half-open; HTTP/2: the connection freezes)
  watch-timeout?duration=10s         default watch timeout (0 restores the randomised default)
  expire-watches                     every open watch's timeout passes now (a clean end of stream);
                                     ?userAgent=kubectl&resource=configmaps&namespace=default: only those
  bookmark-interval?duration=5s      periodic bookmark interval (0 restores --bookmark-interval)
  fail-resource?resource=configmaps&group=&code=429&duration=30s
                                     a resource answers 403 or 429 for a while
  request-delay?duration=200ms       every non-watch request is delayed (a slow handler)

GET /faults shows their state.

A restart forgets everything: the store lives in memory. Revisions start
from the wall clock (microseconds since 1970) unless --revisions-from-clock
is false, so they are above every resourceVersion the previous run issued:
a client that resumes a list or watch from one gets 410 Expired, re-lists
and sees the new, empty state, instead of waiting in silence. Limits on
memory, requests and selectors, and what a client sees at each: docs/limits.md.

TLS and HTTP/2: with --tls-cert-file and --tls-private-key-file the server
serves HTTPS, and HTTP/2 to clients that negotiate it (kubectl, client-go);
with --tls alone it generates a certificate for 127.0.0.1, ::1 and
localhost and writes it, with a kubeconfig that trusts it, to --cert-dir:

  kubectl --kubeconfig <cert-dir>/kubeconfig get configmaps -w

Flags:
`

// flags is the command line: the server's Config, filled in by the flags
// that map onto it, and what run does around the server.
type flags struct {
	cfg          apiserver.Config
	fromClock    bool
	quiet, trace bool
	certDir      string
}

// parseFlags reads args into flags, each flag straight into the Config
// field it sets.
func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	c := &f.cfg
	fs := flag.NewFlagSet("apiserver", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Listen, "listen", apiserver.DefaultBinaryListen,
		"address to listen on; loopback by default: anyone who can connect can read and write everything unless --token is set")
	fs.DurationVar(&c.MinRequestTimeout, "min-request-timeout", apiserver.DefaultMinRequestTimeout,
		"a watch without ?timeoutSeconds ends after this × (1 + rand), i.e. 30-60 minutes by default; set it to e.g. 10s to see a watch end")
	fs.DurationVar(&c.BookmarkInterval, "bookmark-interval", apiserver.DefaultBookmarkInterval,
		"how often watchers that asked for bookmarks (allowWatchBookmarks=true) get one")
	fs.IntVar(&c.HistorySize, "history-size", 0,
		fmt.Sprintf("events each watch cache keeps to replay to watches that resume from an older resourceVersion (0: the watch cache's default, %d); older ones get 410 Expired", cacher.DefaultHistorySize))
	fs.Int64Var(&c.HistoryBytes, "history-bytes", 0,
		"bytes of events each watch cache keeps, each charged twice its object (0: the watch cache's default, 64 MiB); older ones get 410 Expired")
	fs.Int64Var(&c.ProtobufCacheBytes, "protobuf-cache-bytes", 0,
		"bytes of listed objects' protobuf encodings kept, so that a protobuf LIST does not transcode them again (0: the default, 64 MiB; negative: none)")
	fs.Int64Var(&c.StoreHistoryBytes, "store-history-bytes", 0,
		"bytes of objects the store's history keeps (0: the store's default, 128 MiB); older revisions get 410 Expired")
	fs.DurationVar(&c.CompactionInterval, "compaction-interval", apiserver.DefaultCompactionInterval,
		"compact the store's history this often, through the revision of the previous run (kube-apiserver's --etcd-compaction-interval); 0 never")
	fs.BoolVar(&f.fromClock, "revisions-from-clock", true,
		"start revisions from the wall clock, so resourceVersions from before a restart get 410 Expired (false: start at 1)")
	fs.IntVar(&c.MaxRequestsInFlight, "max-requests-inflight", filters.DefaultMaxRequestsInFlight,
		"read-only requests (GET, LIST; not watches) served at once; more get 429 with Retry-After (kube-apiserver's flag and default); negative: no limit")
	fs.IntVar(&c.MaxMutatingRequestsInFlight, "max-mutating-requests-inflight", filters.DefaultMaxMutatingRequestsInFlight,
		"mutating requests (POST, PUT, PATCH, DELETE) served at once; more get 429 (kube-apiserver's flag and default); negative: no limit")
	defConns, defWatches := filters.DefaultConnectionLimits()
	fs.IntVar(&c.MaxWatches, "max-watches", defWatches,
		"open watches; more get 429; the default is worked out from the file-descriptor limit, leaving headroom for other requests; negative: no limit")
	fs.IntVar(&c.MaxConnections, "max-connections", defConns,
		"open connections; more are answered 503 and closed; the default is the file-descriptor limit less 256; negative: no limit")
	fs.IntVar(&c.WatcherBuffer, "watcher-buffer", 0,
		fmt.Sprintf("events queued per watcher before it counts as slow and is closed (0: the watch cache's default, %d)", cacher.DefaultWatcherBuffer))
	fs.IntVar(&c.WatchWriters, "watch-writers", 0,
		"watches that may write at once; the others wait their turn in line, collecting events to write together (0: half the CPUs, at least 1)")
	fs.BoolVar(&c.EnableFaults, "enable-faults", false,
		"serve the workshop fault switches under /faults/ (see above)")
	fs.BoolVar(&c.Profiling, "profiling", false,
		"serve Go's profiler under /debug/pprof/ (kube-apiserver's flag; on by default there, off here because without --token anyone who can connect could use it)")
	fs.StringVar(&c.Token, "token", "",
		"if set, every request must carry 'Authorization: Bearer <token>' (kubectl --token); others get 401")
	fs.BoolVar(&f.trace, "trace", false,
		"narrate every step of every request and event on stderr (store, watch cache, HTTP)")
	fs.BoolVar(&f.quiet, "quiet", false,
		"do not log one line per request on stderr")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", "",
		"serve HTTPS (and HTTP/2 by ALPN) with this PEM certificate; needs --tls-private-key-file")
	fs.StringVar(&c.TLSKeyFile, "tls-private-key-file", "",
		"the PEM private key of --tls-cert-file")
	fs.BoolVar(&c.SelfSignedTLS, "tls", false,
		"serve HTTPS (and HTTP/2 by ALPN); without --tls-cert-file, with a generated certificate written with a kubeconfig to --cert-dir")
	fs.StringVar(&f.certDir, "cert-dir", filepath.Join(os.TempDir(), "listwatch-apiserver"),
		"where --tls writes the generated certificate (apiserver.crt) and a kubeconfig that trusts it")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return f, nil
}

// run parses args, serves until ctx is done, then stops gracefully. It
// reports where it listens on stderr.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	cfg := f.cfg
	if cfg.CompactionInterval == 0 {
		cfg.CompactionInterval = -1 // 0 means "never" here but "the default" in Config
	}
	if f.fromClock {
		cfg.StartRevision = store.RevisionFromClock(time.Now())
	}
	if w := exposureWarning(cfg.Listen, cfg.Token); w != "" {
		fmt.Fprintln(stderr, w)
	}
	if !f.quiet {
		cfg.Logger = log.New(stderr, "", log.LstdFlags)
	}
	if f.trace {
		cfg.Tracer = narrate.New(stderr, narrate.WithColour(isTerminal(stderr)))
	}
	srv, err := apiserver.Start(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "apiserver: serving on %s (live page: %s/ui/, debug view: %s/debug/listwatch)\n", srv.URL(), srv.URL(), srv.URL())
	if ca := srv.CACertificate(); ca != nil {
		if err := writeClientFiles(f.certDir, ca, srv.Kubeconfig()); err != nil {
			_ = srv.Stop(context.Background())
			return err
		}
		fmt.Fprintf(stderr, "apiserver: wrote %s and %s: kubectl --kubeconfig %s get configmaps\n",
			filepath.Join(f.certDir, "apiserver.crt"), filepath.Join(f.certDir, "kubeconfig"), filepath.Join(f.certDir, "kubeconfig"))
	}
	<-ctx.Done()
	fmt.Fprintln(stderr, "apiserver: shutting down")
	stopCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	return srv.Stop(stopCtx)
}

// writeClientFiles writes what a client needs to trust a generated
// certificate: the certificate itself and a kubeconfig next to it.
func writeClientFiles(dir string, caPEM, kubeconfig []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating --cert-dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "apiserver.crt"), caPEM, 0o600); err != nil {
		return fmt.Errorf("writing the certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), kubeconfig, 0o600); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return nil
}

// isTerminal reports whether w is a terminal, where colour helps.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// exposureWarning is the warning for a server reachable from other machines
// without a token: anyone who can connect can read and change everything.
// It is "" for a loopback address or when a token is set.
func exposureWarning(listen, token string) string {
	if token != "" {
		return ""
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		host = listen
	}
	if host == "localhost" {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return ""
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return "apiserver: WARNING: listening on " + where + " without --token: anyone who can reach this port can read and write every object. " +
		"Use --listen 127.0.0.1:8080, or set --token."
}

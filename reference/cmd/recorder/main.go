package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
)

const usage = `usage:
  recorder rerecord [flags]          start the reference, replay the script, replace the repository's testdata/fixtures, stop it
  recorder record -out DIR [flags]   replay the script against the running reference, write fixtures into DIR
  recorder compare OLD NEW           what changed between two fixture directories
  recorder diff [flags]              the script against ours and the reference: every difference, explained or not

Run from the reference module's directory. record needs the reference
running (go run ./cmd/refcluster start) and refuses a DIR that is not empty;
rerecord starts and stops it itself.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	var err error
	switch os.Args[1] {
	case "record":
		err = recordCmd(ctx, os.Args[2:])
	case "rerecord":
		err = rerecordCmd(ctx, os.Args[2:])
	case "diff":
		err = diffCmd(ctx, os.Args[2:])
	case "compare":
		if len(os.Args) != 4 {
			fmt.Fprint(os.Stderr, usage)
			os.Exit(2)
		}
		err = compareDirs(os.Stdout, os.Args[2], os.Args[3])
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "recorder:", err)
		os.Exit(1)
	}
}

func recordCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recorder record", flag.ExitOnError)
	out := fs.String("out", "", "directory to write the fixtures and their README.md into (required; must be empty or new)")
	o := recordFlags(fs)
	_ = fs.Parse(args)
	if *out == "" {
		return errors.New("record: -out is required")
	}
	if err := emptyDir(*out); err != nil {
		return err
	}
	return record(ctx, *out, *o)
}

// repoRoot is the repository's root seen from the reference module's
// directory, where the commands run.
const repoRoot = ".."

// defaultFixtures is testdata/fixtures, where rerecord writes.
func defaultFixtures() string { return filepath.Join(repoRoot, "testdata", "fixtures") }

// options are what record needs besides the output directory.
type options struct {
	state, server, etcdURL, script, previous string
	etcdPeerPort                             int // for rerecord and diff, which start the reference
}

func recordFlags(fs *flag.FlagSet) *options {
	var o options
	fs.StringVar(&o.state, "state", ".run", "refcluster's state directory (CA and token)")
	fs.StringVar(&o.server, "server", "https://127.0.0.1:16443", "the reference kube-apiserver")
	fs.StringVar(&o.etcdURL, "etcd", "http://127.0.0.1:23790", "the reference etcd's client URL (for compaction)")
	fs.IntVar(&o.etcdPeerPort, "etcd-peer-port", 23800, "rerecord, diff: the reference etcd's peer port")
	fs.StringVar(&o.script, "script", "recordings/script.json", "the requests to replay")
	fs.StringVar(&o.previous, "previous", defaultFixtures(), "the recordings that \"keep\" steps carry over")
	return &o
}

// record replays the script against the reference into out.
func record(ctx context.Context, out string, o options) error {
	r, err := newRecorder(out, o)
	if err != nil {
		return err
	}
	return r.replay(ctx)
}

func newRecorder(out string, o options) (*recorder, error) {
	t, err := newTarget(o.state, o.server)
	if err != nil {
		return nil, err
	}
	return &recorder{target: t, etcdURL: o.etcdURL, stateDir: o.state, previous: o.previous, script: o.script, outDir: out,
		vars: map[string]string{}, sections: map[string][]string{}, log: os.Stdout,
		server: "kube-apiserver v1.37.2 (etcd 3.7.0), HTTP/1.1 over TLS straight to its port"}, nil
}

// replay runs every step of the script, then writes the README.
func (r *recorder) replay(ctx context.Context) error {
	sc, err := loadScript(r.script)
	if err != nil {
		return err
	}
	r.sectionOrder = sc.Sections
	for _, sec := range sc.Sections {
		r.sections[sec] = nil
	}
	for i, s := range sc.Steps {
		err := r.run(ctx, s)
		if err != nil && r.ours && ctx.Err() == nil {
			// A step ours cannot answer as kube-apiserver does is a
			// difference to report, not the end of the comparison.
			fmt.Fprintf(r.log, "step %d failed on ours: %v\n", i+1, err)
			r.results = append(r.results, result{file: s.File, status: "(the step failed: " + err.Error() + ")"})
			continue
		}
		if err != nil {
			return fmt.Errorf("step %d (%s %s %s): %w", i+1, s.Method, s.Path, s.File, err)
		}
	}
	return r.writeIndex()
}

// emptyDir creates dir, or accepts it if it exists and is empty: a run
// never overwrites recordings.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("output directory %s is not empty: recordings are never overwritten", dir)
	}
	return nil
}

func newTarget(stateDir, server string) (target, error) {
	u, err := url.Parse(server)
	if err != nil {
		return target{}, fmt.Errorf("server: %w", err)
	}
	ca, err := os.ReadFile(filepath.Join(stateDir, "ca.crt"))
	if err != nil {
		return target{}, fmt.Errorf("the reference's CA (is it running?): %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return target{}, errors.New("the reference's CA: no certificate")
	}
	csv, err := os.ReadFile(filepath.Join(stateDir, "tokens.csv"))
	if err != nil {
		return target{}, fmt.Errorf("the reference's token: %w", err)
	}
	token, _, _ := strings.Cut(string(csv), ",")
	// HTTP/1.1 only: the recordings show HTTP/1.1 framing (chunks).
	cfg := &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}
	return target{addr: u.Host, tls: cfg, token: token}, nil
}

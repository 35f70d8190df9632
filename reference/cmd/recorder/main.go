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
	"time"
)

const usage = `usage:
  recorder record -out DIR [flags]   replay the script against the reference, write fixtures into DIR
  recorder compare OLD NEW           what changed between two fixture directories

Run from the reference module's directory, with the reference running
(go run ./cmd/refcluster start). record refuses a DIR that is not empty.
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

// recorder holds what a run needs: where to send, where to write.
type recorder struct {
	target  target
	etcdURL string
	outDir  string
	server  string // the Server line of every entry
	vars    map[string]string
	entries []string
}

func recordCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recorder record", flag.ExitOnError)
	out := fs.String("out", "", "directory to write the fixtures and their README.md into (required; must be empty or new)")
	state := fs.String("state", ".run", "refcluster's state directory (CA and token)")
	server := fs.String("server", "https://127.0.0.1:16443", "the reference kube-apiserver")
	etcdURL := fs.String("etcd", "http://127.0.0.1:23790", "the reference etcd's client URL (for compaction)")
	script := fs.String("script", "recordings/script.json", "the requests to replay")
	_ = fs.Parse(args)
	if *out == "" {
		return errors.New("record: -out is required")
	}
	if err := emptyDir(*out); err != nil {
		return err
	}
	t, err := newTarget(*state, *server)
	if err != nil {
		return err
	}
	steps, err := loadScript(*script)
	if err != nil {
		return err
	}
	r := &recorder{target: t, etcdURL: *etcdURL, outDir: *out, vars: map[string]string{},
		server: "kube-apiserver v1.37.2 (etcd 3.7.0), HTTP/1.1 over TLS straight to its port"}
	for i, s := range steps {
		if err := r.run(ctx, s); err != nil {
			return fmt.Errorf("step %d (%s %s): %w", i+1, s.Method, s.Path, err)
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

// run sends one step (and, for a watch, the steps during it), records it
// if it names a file, and takes the variables it sets.
func (r *recorder) run(ctx context.Context, s step) error {
	if s.CompactEtcd {
		rev, err := compactEtcd(ctx, r.etcdURL)
		if err != nil {
			return err
		}
		r.vars["compactedRevision"] = fmt.Sprint(rev)
		fmt.Printf("compacted etcd to revision %d\n", rev)
		return nil
	}
	path, err := expand(s.Path, r.vars)
	if err != nil {
		return err
	}
	body, err := expand(s.Body, r.vars)
	if err != nil {
		return err
	}
	var during func() error
	if len(s.During) > 0 {
		during = func() error { return r.runAll(ctx, s.During) }
	}
	wait := time.Duration(s.MaxSeconds * float64(time.Second))
	if wait == 0 {
		wait = time.Minute // a safety net: a plain request answers at once
	}
	resp, err := r.target.exchange(ctx, r.target.requestBytes(s.Method, path, s.Headers, body), wait, during)
	if err != nil {
		return err
	}
	fmt.Printf("%-6s %-70s %s %d bytes\n", s.Method, path, resp.status, len(resp.body))
	for name, jsonPath := range s.Set {
		v, err := lookup(resp.body, jsonPath)
		if err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
		r.vars[name] = v
	}
	if s.File == "" {
		return nil
	}
	recorded := s
	recorded.Body = body
	entry, err := save(r.outDir, r.server, recorded, path, resp)
	r.entries = append(r.entries, entry)
	return err
}

func (r *recorder) runAll(ctx context.Context, steps []step) error {
	for _, s := range steps {
		if err := r.run(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

func (r *recorder) writeIndex() error {
	text := "# Recordings from the reference kube-apiserver v1.37.2\n\n" +
		"Written by `go run ./cmd/recorder record` in reference/, from its script. " +
		"Same layout and conventions as testdata/fixtures/README.md, except that the recorder spoke " +
		"HTTP/1.1 over TLS to kube-apiserver itself (no kubectl proxy between), so chunk boundaries are the server's " +
		"and every request also carried `Authorization: Bearer <token>` (not shown).\n\n" + strings.Join(r.entries, "")
	return os.WriteFile(filepath.Join(r.outDir, "README.md"), []byte(text), 0o644)
}

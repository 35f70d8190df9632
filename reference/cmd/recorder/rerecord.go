package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// rerecordCmd is the one command that re-records testdata/fixtures:
// start the reference, replay the script into a new directory, stop the
// reference, then replace every recording and write SHA256SUMS (which
// internal/fixtures checks, so nobody edits a recording by hand).
func rerecordCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("recorder rerecord", flag.ExitOnError)
	fixturesDir := fs.String("fixtures", defaultFixtures(), "the recordings to replace")
	o := recordFlags(fs)
	_ = fs.Parse(args)
	o.previous = *fixturesDir
	tmp, err := os.MkdirTemp("", "fixtures-")
	if err != nil {
		return fmt.Errorf("rerecord: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := refcluster(ctx, "start", *o); err != nil {
		return err
	}
	err = record(ctx, tmp, *o)
	if stopErr := refcluster(context.WithoutCancel(ctx), "stop", *o); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}
	return replaceFixtures(*fixturesDir, tmp)
}

// refcluster runs one refcluster subcommand for the cluster the options
// name: its state directory and ports.
func refcluster(ctx context.Context, sub string, o options) error {
	server, err := url.Parse(o.server)
	if err != nil {
		return fmt.Errorf("server: %w", err)
	}
	etcd, err := url.Parse(o.etcdURL)
	if err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "run", "./cmd/refcluster", sub, "-state", o.state,
		"-port", server.Port(), "-etcd-port", etcd.Port(), "-etcd-peer-port", strconv.Itoa(o.etcdPeerPort))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("refcluster %s: %w", sub, err)
	}
	return nil
}

// replaceFixtures empties dir of files, moves in every file of fresh,
// and writes SHA256SUMS for them.
func replaceFixtures(dir, fresh string) error {
	old, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	for _, e := range old {
		if !e.IsDir() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("replace: %w", err)
			}
		}
	}
	entries, err := os.ReadDir(fresh)
	if err != nil {
		return fmt.Errorf("replace: %w", err)
	}
	var sums []string
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(fresh, e.Name()))
		if err != nil {
			return fmt.Errorf("replace: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			return fmt.Errorf("replace: %w", err)
		}
		sum := sha256.Sum256(data)
		sums = append(sums, hex.EncodeToString(sum[:])+"  "+e.Name())
	}
	sort.Slice(sums, func(i, j int) bool { return sums[i][66:] < sums[j][66:] })
	fmt.Printf("replaced %s: %d recordings\n", dir, len(entries))
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(sums, "\n")+"\n"), 0o644)
}

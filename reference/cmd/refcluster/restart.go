package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// restartAPIServer stops kube-apiserver and starts it again with the same
// flags, certificates and token, on the same etcd. This is what an
// upgrade or a crash does to a real control plane: etcd keeps every
// object and its revision, but each watch cache starts over from a fresh
// list, so a watch from a resourceVersion older than that list gets
// "too old resource version" (410 Expired) without any compaction
// (k8s.io/apiserver v0.37.2 pkg/storage/cacher/watch_cache_history.go:
// the oldest event it can deliver is the one after its list).
func restartAPIServer(ctx context.Context, c config) error {
	if _, ok, err := runningPid(c, "kube-apiserver"); err != nil || !ok {
		return fmt.Errorf("no reference kube-apiserver runs from %s: run `refcluster start`", c.stateDir)
	}
	if err := terminate(c, "kube-apiserver", 30*time.Second); err != nil {
		return err
	}
	caPEM, err := os.ReadFile(filepath.Join(c.stateDir, caCertFile))
	if err != nil {
		return fmt.Errorf("the reference's CA: %w", err)
	}
	csv, err := os.ReadFile(filepath.Join(c.stateDir, tokenFile))
	if err != nil {
		return fmt.Errorf("the reference's token: %w", err)
	}
	token, _, _ := strings.Cut(string(csv), ",")
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	server := "https://127.0.0.1:" + strconv.Itoa(c.apiserverPort)
	if err := startAPIServer(ctx, c, server, pki{caPEM: caPEM, token: token}); err != nil {
		return err
	}
	fmt.Printf("kube-apiserver %s is ready again at %s\n", kubernetesVersion, server)
	return nil
}

package etcd_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/etcd"
	"listwatch/etcd/embedded"
)

// One embedded etcd serves every test of the package: starting one takes
// about a second, and the stores under test keep out of each other's way
// with key prefixes of their own.
var (
	sharedClient    *clientv3.Client
	sharedClientURL string
)

func TestMain(m *testing.M) {
	os.Exit(runWithEtcd(m))
}

func runWithEtcd(m *testing.M) int {
	dir, err := os.MkdirTemp("", "listwatch-etcd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	srv, err := embedded.Start(ctx, embedded.Config{DataDir: dir, NoFsync: true, ProgressNotifyInterval: time.Second, LogLevel: "fatal"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	sharedClientURL = srv.ClientURL()
	cli, err := embedded.NewClient([]string{sharedClientURL})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cli.Close()
	sharedClient = cli
	defer stopBenchClusters()
	return m.Run()
}

// safetyTimeout bounds every wait for an answer, an event or a state. It
// only turns a hang into a failure, so it is generous: on a busy machine
// under -race etcd and the code on it answer in far less, and it is no
// bound on how fast anything must be.
const safetyTimeout = 2 * time.Minute

// newStore returns a store on the shared etcd, closed with the test.
func newStore(t *testing.T, opts etcd.Options) *etcd.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	s, err := etcd.New(ctx, sharedClient, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

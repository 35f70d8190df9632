package etcd_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/etcd"
	"listwatch/etcd/embedded"
	"listwatch/informer"
	"listwatch/store"
)

// replicaSet is three apiservers on a three-member cluster; each
// apiserver's etcd client knows every member, as kube-apiserver's
// --etcd-servers does.
type replicaSet struct {
	t         *testing.T
	members   []embedded.Member
	etcds     []*embedded.Server
	cli       []*clientv3.Client
	stores    []*etcd.Store
	servers   []*apiserver.Server
	addrs     []string
	tmpl      embedded.Config
	endpoints []string
}

func startReplicaSet(t *testing.T) *replicaSet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	rs := &replicaSet{t: t, tmpl: embedded.Config{NoFsync: true, LogLevel: "fatal", ProgressNotifyInterval: time.Second}}
	dir := t.TempDir()
	for i := range 3 {
		rs.members = append(rs.members, embedded.Member{Name: fmt.Sprintf("m%d", i), DataDir: filepath.Join(dir, fmt.Sprintf("m%d", i))})
	}
	var err error
	rs.etcds, err = embedded.StartCluster(ctx, rs.members, rs.tmpl)
	require.NoError(t, err)
	for i, s := range rs.etcds {
		rs.members[i].ClientURL, rs.members[i].PeerURL = s.ClientURL(), s.PeerURL()
	}
	rs.endpoints = embedded.ClientURLs(rs.etcds)
	rs.servers = make([]*apiserver.Server, 3)
	rs.stores = make([]*etcd.Store, 3)
	rs.cli = make([]*clientv3.Client, 3)
	rs.addrs = make([]string, 3)
	for i := range 3 {
		rs.startApiserver(ctx, i)
	}
	t.Cleanup(func() {
		for i := range 3 {
			rs.stopApiserver(i)
		}
		for _, e := range rs.etcds {
			if e != nil {
				e.Close()
			}
		}
	})
	return rs
}

func (rs *replicaSet) startApiserver(ctx context.Context, i int) {
	rs.t.Helper()
	cli, err := embedded.NewClient(rs.endpoints)
	require.NoError(rs.t, err)
	st, err := etcd.New(ctx, cli, etcd.Options{})
	require.NoError(rs.t, err)
	listen := rs.addrs[i] // "" the first time: a free port, kept for restarts
	srv, err := apiserver.Start(ctx, apiserver.Config{Store: st, Listen: listen, BookmarkInterval: time.Second})
	require.NoError(rs.t, err)
	rs.servers[i], rs.stores[i], rs.cli[i] = srv, st, cli
	rs.addrs[i] = strings.TrimPrefix(srv.URL(), "http://")
}

func (rs *replicaSet) stopApiserver(i int) {
	if rs.servers[i] == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	_ = rs.servers[i].Stop(ctx)
	rs.stores[i].Close()
	_ = rs.cli[i].Close()
	rs.servers[i] = nil
}

func (rs *replicaSet) restartMember(ctx context.Context, i int) {
	rs.t.Helper()
	rs.etcds[i].Close()
	cfg := rs.tmpl
	m := rs.members[i]
	cfg.Name, cfg.DataDir, cfg.ClientURL, cfg.PeerURL = m.Name, m.DataDir, m.ClientURL, m.PeerURL
	var err error
	rs.etcds[i], err = embedded.Start(ctx, cfg)
	require.NoError(rs.t, err)
}

// Chaos across replicas: writers through all three apiservers while one
// apiserver at a time is stopped and started again, one etcd member at a
// time is stopped and started again (quorum kept), and the history is
// compacted through etcd. Afterwards every informer (one per apiserver,
// each with the other two as failover) holds exactly what etcd holds.
func TestChaosAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-member cluster and runs faults for several seconds")
	}
	rs := startReplicaSet(t)
	// Only a hang gets near this bound, however busy the machine.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	gvr := api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

	// The addresses stay the same across restarts; the writers use a copy.
	addrs := slices.Clone(rs.addrs)
	urls := func(first int) (string, []string) {
		var rest []string
		for k := 1; k < 3; k++ {
			rest = append(rest, "http://"+addrs[(first+k)%3])
		}
		return "http://" + addrs[first], rest
	}
	var informers []*informer.SharedIndexInformer
	var wg sync.WaitGroup
	infCtx, stopInformers := context.WithCancel(ctx)
	defer func() { stopInformers(); wg.Wait() }()
	for i := range 3 {
		host, rest := urls(i)
		c, err := client.New(client.Config{Host: host, FailoverHosts: rest})
		require.NoError(t, err)
		inf, err := informer.NewSharedIndexInformer(c.Resource(gvr).Namespace("default"), informer.Options{})
		require.NoError(t, err)
		informers = append(informers, inf)
		wg.Go(func() { inf.Run(infCtx) })
	}

	// Writers: random creates, updates and deletes of 30 keys through
	// random apiservers; errors (a stopped apiserver, a lost leader) are
	// expected and only counted.
	var writes, failures atomic.Int64
	writeCtx, stopWriters := context.WithCancel(ctx)
	var writers sync.WaitGroup
	for w := range 3 {
		writers.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 16))
			for writeCtx.Err() == nil {
				host, rest := urls(rnd.IntN(3))
				c, err := client.New(client.Config{Host: host, FailoverHosts: rest})
				if err != nil {
					failures.Add(1)
					continue
				}
				cms := c.Resource(gvr).Namespace("default")
				name := fmt.Sprintf("cm-%02d", rnd.IntN(30))
				opCtx, opCancel := context.WithTimeout(writeCtx, 5*time.Second)
				switch rnd.IntN(3) {
				case 0:
					_, err = cms.Create(opCtx, configMap("default", name))
				case 1:
					_, err = cms.Update(opCtx, configMap("default", name))
				default:
					err = cms.Delete(opCtx, name, client.DeleteOptions{})
				}
				opCancel()
				if err != nil {
					failures.Add(1)
				} else {
					writes.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
	}

	// The faults, one after the other, each after some writes have been
	// tried since the one before (counted, not guessed from the time: a
	// busy machine writes less in a given while).
	someWrites := func() {
		t.Helper()
		before := writes.Load() + failures.Load()
		require.True(t, waitUntil(safetyTimeout, func() bool { return writes.Load()+failures.Load() >= before+20 }),
			"the writers made no progress")
	}
	for round := range 3 {
		someWrites()
		rs.stopApiserver(round)
		someWrites()
		rs.startApiserver(ctx, round)
		someWrites()
		rs.restartMember(ctx, (round+1)%3)
		someWrites()
		rs.servers[(round+2)%3].Faults().CompactNow()
	}
	someWrites()
	stopWriters()
	writers.Wait()
	t.Logf("%d writes, %d refused (409 and 404 of random operations, stopped apiservers, member restarts)", writes.Load(), failures.Load())
	require.Positive(t, writes.Load())

	// Converged: every informer holds what etcd holds.
	want := func() map[string]int64 {
		res, err := rs.stores[0].List(ctx, "/registry/configmaps/default/", store.ListOptions{})
		require.NoError(t, err)
		out := map[string]int64{}
		for _, o := range res.Items {
			out[o.Key()] = rvOf(t, o)
		}
		return out
	}()
	for i, inf := range informers {
		var diff string
		ok := waitUntil(safetyTimeout, func() bool { // converged long before, unless it diverged
			got := map[string]int64{}
			for _, o := range inf.GetStore().List() {
				got[o.Key()] = rvOf(t, o)
			}
			diff = stateDiff(got, want)
			return diff == ""
		})
		require.True(t, ok, "informer %d diverged from etcd: %s", i, diff)
	}
}

func waitUntil(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

func stateDiff(got, want map[string]int64) string {
	var diffs []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			diffs = append(diffs, fmt.Sprintf("%s: got rv %d, etcd has %d", k, g, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, k+": gone from etcd")
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	return strings.Join(diffs, "; ")
}

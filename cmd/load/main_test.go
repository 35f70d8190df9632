package main

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/leakcheck"
)

func TestFlagsAreBounded(t *testing.T) {
	for _, args := range [][]string{
		{}, // neither -apiserver nor -url
		{"-url", "http://127.0.0.1:1", "-apiserver", "x"}, // both
		{"-url", "http://127.0.0.1:1", "-watchers", "20001"},
		{"-url", "http://127.0.0.1:1", "-timeout", "31m"},
		{"-url", "http://127.0.0.1:1", "-put-size", "4000000"},
		{"-url", "http://192.0.2.1:8080"}, // not loopback
		{"-url", "http://127.0.0.1:1", "-scenario", "nope"},
		{"-url", "http://127.0.0.1:1", "-kubeconfig", "x"}, // two servers
		{"-url", "http://127.0.0.1:1", "-scenario", "storm", "-informers", "1001"},
		{"-url", "http://127.0.0.1:1", "-scenario", "storm", "-mode", "nope"},
	} {
		assert.Error(t, run(context.Background(), args, io.Discard, io.Discard), "%v", args)
	}
}

// A small fanout against an in-process server: every create reaches every
// watcher and the report says so.
func TestFanoutSmall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServerInProcess(t, apiserver.Config{})
	var out bytes.Buffer
	err := run(context.Background(), []string{"-url", srv.URL(), "-scenario", "fanout", "-watchers", "20", "-writes", "10", "-timeout", "1m"}, &out, io.Discard)
	require.NoError(t, err, out.String())
	assert.Contains(t, out.String(), "deliveries: 200 of 200")
	assert.Contains(t, out.String(), "watchers closed before receiving everything: 0")
}

// A small flood against an in-process server with 3 watches and 8
// connections allowed (room for the 3 watches, a batch of 2 being refused
// and the probes' connections, which the server closes a moment after the
// probe did): the first 3 watches are accepted, every later one gets 429
// and its connection closed by the server, none gets 503, and the probes
// are answered 200.
func TestFloodSmall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServerInProcess(t, apiserver.Config{MaxWatches: 3, MaxConnections: 8})
	var out bytes.Buffer
	err := run(context.Background(), []string{"-url", srv.URL(), "-scenario", "flood", "-watchers", "30", "-batch", "2", "-hold", "0s", "-timeout", "5m"}, &out, io.Discard)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "watches: 200 × 3, 429 × 27, failed × 0")
	assert.Contains(t, out.String(), "refused watches whose connection the server closed: 27 of 27")
	assert.Regexp(t, `/healthz during the flood and 0s after: 200 × \d+, failed × 0`, out.String())
}

// A small storm against an in-process server, in both modes: every
// informer syncs with every object, by a LIST and by a watch-list.
func TestStormSmall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServerInProcess(t, apiserver.Config{})
	for i, mode := range []string{"list", "watchlist"} {
		var out bytes.Buffer
		// The first run fills the namespace; the second uses what it holds.
		args := []string{"-url", srv.URL(), "-scenario", "storm", "-mode", mode, "-informers", "6",
			"-objects", "40", "-size", "100", "-fill=" + strconv.FormatBool(i == 0), "-timeout", "2m"}
		require.NoError(t, run(context.Background(), args, &out, io.Discard), out.String())
		t.Log(out.String())
		assert.Contains(t, out.String(), "namespace sync-storm holds 40 ConfigMaps")
		assert.Contains(t, out.String(), "synced: 6 of 6 with every object (0 never synced, 0 with a wrong count)")
		assert.Contains(t, out.String(), "failed attempts, each retried after a backoff: 0,")
	}
}

// A mark split between two reads is counted once, whatever the size of
// the reads.
func TestMarkCounterCountsAcrossPieces(t *testing.T) {
	text := strings.Repeat(`{"metadata":{"name":"storm-000001"}},`, 50)
	for _, piece := range []int{1, 3, 7, 13, 64, len(text)} {
		m := newMarkCounter(stormNameMark)
		for i := 0; i < len(text); i += piece {
			m.feed([]byte(text[i:min(i+piece, len(text))]))
		}
		assert.Equal(t, 50, m.n, "pieces of %d bytes", piece)
	}
}

func TestParseListHead(t *testing.T) {
	head := []byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"abc"},"items":[{"metadata":{"name":"storm-0000`)
	m, err := parseListHead(head)
	require.NoError(t, err)
	assert.Equal(t, listHead{ResourceVersion: "42", Continue: "abc"}, m)
	_, err = parseListHead([]byte(`{"kind":"ConfigMapList","items":[`))
	assert.Error(t, err)
}

// startServerInProcess starts an apiserver in the test's process and stops
// it when the test ends.
func startServerInProcess(t *testing.T, cfg apiserver.Config) *apiserver.Server {
	t.Helper()
	srv, err := apiserver.Start(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
	})
	return srv
}

// With -etcd-pid the report gives etcd's CPU beside the server's and their
// sum per delivery, as the fan-out against a server on etcd needs.
func TestReportAddsEtcdCPU(t *testing.T) {
	r := report{scenario: "fanout", deliveries: 1000,
		server: procStats{known: true, cpu: 3 * time.Millisecond, peakRSS: 2 << 20, lastRSS: 1 << 20},
		etcd:   procStats{known: true, cpu: time.Millisecond, peakRSS: 4 << 20, lastRSS: 4 << 20}}
	var out bytes.Buffer
	r.print(&out)
	assert.Contains(t, out.String(), "server CPU: 3ms (3.00 µs per delivery)")
	assert.Contains(t, out.String(), "etcd CPU: 1ms (1.00 µs per delivery)")
	assert.Contains(t, out.String(), "etcd RSS: peak 4 MiB")
	assert.Contains(t, out.String(), "server + etcd CPU: 4ms (4.00 µs per delivery)")

	r.etcd = procStats{} // no -etcd-pid: nothing about etcd
	out.Reset()
	r.print(&out)
	assert.NotContains(t, out.String(), "etcd")
}

// A watcher the server closed early takes what it will never receive off
// what the fan-out waits for: the run ends when the others have everything.
func TestFanoutStopsWaitingForClosedWatchers(t *testing.T) {
	w := &fanoutWatchers{allIn: make(chan struct{})}
	w.want.Store(10)
	w.delivered.Store(4)
	w.gaveUp(5)
	select {
	case <-w.allIn:
		t.Fatal("allIn closed with 4 of 5 delivered")
	default:
	}
	w.gaveUp(1)
	select {
	case <-w.allIn:
	default:
		t.Fatal("allIn still open with 4 of 4 delivered")
	}
}

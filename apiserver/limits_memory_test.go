//go:build linux

package apiserver

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/store"
)

// Abuse by watching: a client opens many watches and never reads them,
// while writes go on. The server must stay within a bounded amount of
// memory (each watcher's queue is bounded and the frames in it are shared,
// not copied), close the watchers as too slow, and not leave a goroutine
// blocked for ever on a client that does not read (write deadlines).
//
// The clients announce an Ethernet-sized MSS and a small receive buffer
// when they connect, as a client across a real network would look: on
// loopback the kernel would otherwise let the server write megabytes into
// each socket (64 KiB segments) before its write even blocks, which costs
// the machine hundreds of MiB of socket memory and tests nothing more.
// Linux only, for the socket options.

const (
	unreadWatches       = 200
	unreadWatcherBuffer = 8
	unreadObjectBytes   = 4 << 10
	// unreadWrites × unreadObjectBytes = 64 MiB: far more than the bound
	// below, so a server that kept every frame for its unread watchers
	// (even shared ones) would fail.
	unreadWrites = 16000
	unreadKeys   = 100
	// perWatchHeap is a generous bound on what one unread watch may cost
	// the server's heap: its queue of frames (at most unreadWatcherBuffer
	// of them, each unreadObjectBytes plus framing, if no other watcher
	// shares them), its connection's buffers and bookkeeping.
	perWatchHeap = unreadWatcherBuffer*(unreadObjectBytes+1<<10) + 64<<10
	// heapSlack covers what does not depend on the number of watches: the
	// watch cache's ring (HistorySize frames), the runtime's own growth.
	heapSlack = 16 << 20
)

// dialUnread connects like a client across a real network (see above).
func dialUnread(addr string) (net.Conn, error) {
	d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		var serr error
		if err := rc.Control(func(fd uintptr) {
			if serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, 1460); serr == nil {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
			}
		}); err != nil {
			return err
		}
		return serr
	}}
	return d.Dial("tcp", addr)
}

// heapInuse is the heap in use after a full collection.
func heapInuse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// unreadWatchesTest is a server, a writer into its store, and raw
// clients that open watches and never read them.
type unreadWatchesTest struct {
	t     *testing.T
	ts    *testServer
	st    *store.Store // the in-memory store, whose history the test drops
	cms   *cacher.Cacher
	pad   string
	seq   int
	conns []net.Conn
}

// newUnreadWatchesTest starts the server; writeTimeout is its
// WriteTimeout (0: the default minute).
func newUnreadWatchesTest(t *testing.T, writeTimeout time.Duration) *unreadWatchesTest {
	ts := startServer(t, Config{WatcherBuffer: unreadWatcherBuffer, HistorySize: 100, WriteTimeout: writeTimeout})
	u := &unreadWatchesTest{t: t, ts: ts, st: ts.Store().(*store.Store), pad: strings.Repeat("x", unreadObjectBytes),
		cms: ts.registry.ByGroupResource(api.GroupResource{Resource: "configmaps"}).Cacher}
	t.Cleanup(func() {
		for _, c := range u.conns {
			_ = c.Close()
		}
	})
	// Warm up: every key exists and the ring is full of frames of the
	// same size as later, so the baseline already holds what a server
	// without watches holds.
	u.write(unreadKeys * 3)
	return u
}

// write makes n updates of unreadObjectBytes straight into the store.
func (u *unreadWatchesTest) write(n int) {
	u.t.Helper()
	for range n {
		u.seq++
		name := fmt.Sprintf("cm-%03d", u.seq%unreadKeys)
		o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: "default", Name: name}}
		require.NoError(u.t, o.Set("data", []byte(fmt.Sprintf(`{"seq":"%d","pad":"%s"}`, u.seq, u.pad))))
		key := "/registry/configmaps/default/" + name
		if _, err := u.st.Update(context.Background(), key, o, store.Preconditions{}); err != nil {
			_, err = u.st.Create(context.Background(), key, o)
			require.NoError(u.t, err)
		}
	}
}

// heap waits for the watch cache to catch up, drops the store's history
// (kept for watches and exact reads, not what is measured) and returns
// the heap in use.
func (u *unreadWatchesTest) heap() uint64 {
	u.t.Helper()
	require.Eventually(u.t, func() bool { return u.cms.Revision() == u.st.Revision() }, safetyTimeout, 5*time.Millisecond)
	_ = u.st.Compact(u.st.Revision())
	return heapInuse()
}

// openUnread opens n watches that are never read and waits until the
// server has registered them.
func (u *unreadWatchesTest) openUnread(n int) {
	u.t.Helper()
	addr := strings.TrimPrefix(u.ts.URL(), "http://")
	for range n {
		c, err := dialUnread(addr)
		require.NoError(u.t, err)
		u.conns = append(u.conns, c)
		_, err = fmt.Fprintf(c, "GET /api/v1/configmaps?watch=true&allowWatchBookmarks=true HTTP/1.1\r\nHost: %s\r\nUser-Agent: unread\r\n\r\n", addr)
		require.NoError(u.t, err)
	}
	require.Eventually(u.t, func() bool { return len(u.cms.Stats().Watchers) == n }, safetyTimeout, 5*time.Millisecond,
		"the server did not register %d watches", n)
}

// waitClosedTooSlow waits until the server has closed n watchers as too
// slow.
func (u *unreadWatchesTest) waitClosedTooSlow(n int) {
	u.t.Helper()
	require.Eventually(u.t, func() bool { return u.cms.Stats().ClosedTooSlow >= int64(n) }, safetyTimeout, 10*time.Millisecond,
		"the server did not close the unread watchers as too slow (closed %d of %d)", u.cms.Stats().ClosedTooSlow, n)
	assert.Empty(u.t, u.cms.Stats().Watchers, "watchers still registered after being closed")
}

// waitGone waits until the watch cache holds no watcher: each was closed
// as too slow, or ended when a write to its client timed out.
func (u *unreadWatchesTest) waitGone() {
	u.t.Helper()
	require.Eventually(u.t, func() bool { return len(u.cms.Stats().Watchers) == 0 }, stuckWriteWait, 10*time.Millisecond,
		"%d unread watchers still registered", len(u.cms.Stats().Watchers))
}

// 200 watches that are never read, and 64 MiB written meanwhile: the heap
// grows by a bounded amount per watch, and every watcher is closed as too
// slow.
func TestUnreadWatchesDoNotGrowTheHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB to 200 unread watches")
	}
	u := newUnreadWatchesTest(t, 0)
	heapBefore := u.heap()
	u.openUnread(unreadWatches)
	u.write(unreadWrites)
	heapWhileWriting := u.heap()
	u.waitClosedTooSlow(unreadWatches)
	heapAfter := u.heap()

	bound := uint64(unreadWatches*perWatchHeap + heapSlack)
	t.Logf("heap in use: %d KiB before, %d KiB after writing %d MiB to %d unread watches, %d KiB once they were closed (bound: +%d KiB)",
		heapBefore>>10, heapWhileWriting>>10, unreadWrites*unreadObjectBytes>>20, unreadWatches, heapAfter>>10, bound>>10)
	assert.Less(t, heapWhileWriting, heapBefore+bound, "the unread watches made the heap grow by %d KiB", (heapWhileWriting-heapBefore)>>10)
	assert.Less(t, heapAfter, heapBefore+bound, "the heap grew by %d KiB", (heapAfter-heapBefore)>>10)
}

// eventuallyGoroutines is how many goroutines assert.Eventually itself may
// be running while it evaluates its condition.
const eventuallyGoroutines = 2

// stuckWriteTimeout is the server's WriteTimeout in the stuck-client
// test: short, so that the test does not wait the default minute for a
// blocked write to give up. Nothing here depends on how long it is.
const stuckWriteTimeout = 3 * time.Second

// stuckWriteWait bounds how long a goroutine writing to a client that
// reads nothing may stay blocked once its watcher is closed: the watch
// write deadline, and the safety timeout's slack for a busy machine.
const stuckWriteWait = stuckWriteTimeout + safetyTimeout

// A client that stops reading a busy watch but keeps the connection open
// cannot pin the server's goroutines (and the frames they hold): the watch
// cache closes its watcher as too slow once its queue is full, and the
// write blocked on the client gives up at its deadline (on a machine busy
// enough, the deadline may come first and end the watch itself), so the
// goroutine count and the heap come back to where they were.
func TestStuckWatchClientDoesNotPinGoroutines(t *testing.T) {
	const n = 20
	u := newUnreadWatchesTest(t, stuckWriteTimeout)
	heapBefore := u.heap()
	goroutinesBefore := runtime.NumGoroutine()
	u.openUnread(n)
	u.write(unreadWrites / 4)
	u.waitGone()
	// Eventually runs the condition in goroutines of its own: allow for them.
	assert.Eventually(t, func() bool { return runtime.NumGoroutine() <= goroutinesBefore+eventuallyGoroutines }, stuckWriteWait, 50*time.Millisecond,
		"%d goroutines before the watches, still more now that the unread watches have ended but their clients are still connected",
		goroutinesBefore)
	heapAfter := u.heap()
	assert.Less(t, heapAfter, heapBefore+heapSlack, "the heap grew by %d KiB", (heapAfter-heapBefore)>>10)
}

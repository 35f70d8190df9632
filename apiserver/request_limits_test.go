package apiserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Finding 3 of issue 15: nothing limited requests or watches. Requests are
// now counted like kube-apiserver counts them, watches are capped on their
// own, and health probes always answer.
func TestRequestLimits(t *testing.T) {
	ts := startServer(t, Config{MaxRequestsInFlight: 1, MaxMutatingRequestsInFlight: 1, MaxWatches: 2})
	cms := "/api/v1/namespaces/default/configmaps"

	// Watches hold no read-only slot: with one slot and two watches open,
	// a GET still answers.
	w1 := ts.watch(chunked, cms+"?watch=1")
	defer w1.close()
	w2 := ts.watch(chunked, cms+"?watch=1")
	ts.get(cms).mustCode(t, http.StatusOK)

	// The third watch is past MaxWatches.
	resp := ts.get(cms + "?watch=1")
	assert.Equal(t, http.StatusTooManyRequests, resp.code)
	assert.Equal(t, "1", resp.header.Get("Retry-After"))
	assert.Contains(t, resp.status(t).Message, "Too many open watches")
	ts.get("/healthz").mustCode(t, http.StatusOK)

	// When a watch ends, its slot is free again (the HTTP/1.1 watch runs
	// on after its handler: the slot is held until the watch is over).
	w2.close()
	require.Eventually(t, func() bool { return ts.limits.Stats().Watches == 1 }, 10*time.Second, 5*time.Millisecond)
	w3 := ts.watch(chunked, cms+"?watch=1")
	defer w3.close()

	// A slow GET holds the one read-only slot: the next is 429, a write
	// (its own limit) and /healthz still answer.
	ts.Faults().SetRequestDelay(2 * time.Second)
	slow := make(chan response, 1)
	go func() { slow <- ts.get(cms) }()
	require.Eventually(t, func() bool { return ts.limits.Stats().ReadOnly == 1 }, 10*time.Second, 5*time.Millisecond)
	resp = ts.get(cms)
	assert.Equal(t, http.StatusTooManyRequests, resp.code)
	assert.Equal(t, "1", resp.header.Get("Retry-After"))
	ts.get("/healthz").mustCode(t, http.StatusOK)
	lim := ts.debugView().Limits
	assert.Positive(t, lim.Rejected, "the debug view counts the 429s")
	assert.Equal(t, int64(2), lim.MaxWatches)
	assert.Equal(t, 1, lim.MaxReadOnly)
	assert.Positive(t, lim.MaxConnections)
	assert.Positive(t, lim.Connections)
	(<-slow).mustCode(t, http.StatusOK)
	ts.Faults().SetRequestDelay(0)
	ts.get(cms).mustCode(t, http.StatusOK)
}

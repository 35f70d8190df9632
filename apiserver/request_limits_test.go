package apiserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Nothing once limited requests or watches. Requests are
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
	require.Eventually(t, func() bool { return ts.limits.Stats().Watches == 1 }, safetyTimeout, 5*time.Millisecond)
	w3 := ts.watch(chunked, cms+"?watch=1")
	defer w3.close()

	// A slow GET holds the one read-only slot: the next is 429, a write
	// (its own limit) and /healthz still answer.
	// The delay outlasts any test: the slow GET holds its slot until the
	// test lets it go by hanging up, so a busy machine cannot end it while
	// the checks below still need it held.
	ts.Faults().SetRequestDelay(safetyTimeout)
	slowCtx, hangUp := context.WithCancel(context.Background())
	defer hangUp()
	slow := make(chan error, 1)
	go func() {
		hr, err := http.NewRequestWithContext(slowCtx, http.MethodGet, ts.URL()+cms, nil)
		if err == nil {
			var resp *http.Response
			if resp, err = ts.client.Do(hr); err == nil {
				err = resp.Body.Close()
			}
		}
		slow <- err
	}()
	require.Eventually(t, func() bool { return ts.limits.Stats().ReadOnly == 1 }, safetyTimeout, 5*time.Millisecond)
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
	hangUp()
	assert.ErrorIs(t, <-slow, context.Canceled)
	require.Eventually(t, func() bool { return ts.limits.Stats().ReadOnly == 0 }, safetyTimeout, 5*time.Millisecond,
		"the slot is free once the slow GET is gone")
	ts.Faults().SetRequestDelay(0)
	ts.get(cms).mustCode(t, http.StatusOK)
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

// runServer runs the binary's run with args until the test ends or stop is
// called; it returns the base URL, stderr and stop.
func runServer(t *testing.T, args ...string) (url string, stderr *syncbuf.Buffer, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncbuf.Buffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--quiet"}, args...), stderr) }()
	serving := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)
	require.Eventually(t, func() bool { return serving.MatchString(stderr.String()) }, 2*time.Minute, 10*time.Millisecond)
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(stop)
	return serving.FindStringSubmatch(stderr.String())[1], stderr, stop
}

// After a restart, a client resuming from a
// resourceVersion of the previous run must be told (410), not left
// waiting on a watch that never delivers.
func TestARestartIsNoticed(t *testing.T) {
	t.Cleanup(leakcheck.Check(t)) // runs last, after the servers' stops
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	cms := "/api/v1/namespaces/default/configmaps"

	url, _, stop := runServer(t)
	resp, err := client.Post(url+cms, "application/json", strings.NewReader(`{"metadata":{"name":"before"}}`))
	require.NoError(t, err)
	var created api.Object
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&created))
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	oldRV := created.Metadata.ResourceVersion
	stop()

	url, _, _ = runServer(t) // the restart: a new, empty store
	t.Run("a watch from the old resourceVersion gets 410 in-stream", func(t *testing.T) {
		resp, err := client.Get(url + cms + "?watch=1&resourceVersion=" + oldRV)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		line, err := bufio.NewReader(resp.Body).ReadBytes('\n')
		require.NoError(t, err)
		var ev api.Event
		require.NoError(t, json.Unmarshal(line, &ev))
		require.Equal(t, api.Error, ev.Type, "%s", line)
		assert.Equal(t, int32(http.StatusGone), ev.Status.Code)
		rest, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Empty(t, rest, "the watch ends after the ERROR")
	})
	for _, q := range []string{"?resourceVersion=" + oldRV + "&resourceVersionMatch=Exact", "?resourceVersion=" + oldRV + "&limit=10"} {
		t.Run("a list at the old resourceVersion gets 410: "+q, func(t *testing.T) {
			resp, err := client.Get(url + cms + q)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusGone, resp.StatusCode)
		})
	}
	t.Run("a fresh list shows the new, empty state at a higher revision", func(t *testing.T) {
		resp, err := client.Get(url + cms)
		require.NoError(t, err)
		defer resp.Body.Close()
		var l api.List
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
		assert.Empty(t, l.Items)
		assert.Greater(t, len(l.Metadata.ResourceVersion), 0)
		assert.Greater(t, l.Metadata.ResourceVersion, oldRV) // same number of digits until the year 2286
	})
}

func TestExposureWarning(t *testing.T) {
	tests := []struct {
		listen, token string
		warn          bool
	}{
		{"127.0.0.1:8080", "", false},
		{"localhost:8080", "", false},
		{"[::1]:8080", "", false},
		{":8080", "", true},
		{"0.0.0.0:8080", "", true},
		{"192.0.2.7:8080", "", true},
		{":8080", "s3cret", false},
	}
	for _, tt := range tests {
		w := exposureWarning(tt.listen, tt.token)
		if tt.warn {
			assert.Contains(t, w, "WARNING", tt.listen)
			assert.Contains(t, w, "--token", tt.listen)
		} else {
			assert.Empty(t, w, tt.listen)
		}
	}
	_, stderr, _ := runServer(t)
	assert.NotContains(t, stderr.String(), "WARNING", "the loopback default does not warn")
}

package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

func TestHelpDocumentsEveryFlag(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-listen", "-min-request-timeout", "-bookmark-interval", "-history-size",
		"-watcher-buffer", "-history-bytes", "-store-history-bytes", "-compaction-interval", "-revisions-from-clock",
		"A restart forgets everything", "410 Expired", "-enable-faults", "-token", "-trace", "-quiet", "kill-watches", "compact", "stall-watches",
		"watch-timeout", "bookmark-interval", "fail-resource", "request-delay", "127.0.0.1:8080", "http://127.0.0.1:8080/ui/"} {
		assert.Contains(t, out.String(), f)
	}
	assert.Error(t, run(context.Background(), []string{"--nope"}, io.Discard))
	assert.Error(t, run(context.Background(), []string{"extra"}, io.Discard))
}

func TestServeAndShutDown(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--enable-faults", "--trace"}, &stderr) }()

	serving := regexp.MustCompile(`serving on (http://127\.0\.0\.1:\d+)`)
	require.Eventually(t, func() bool { return serving.MatchString(stderr.String()) }, 10*time.Second, 10*time.Millisecond)
	url := serving.FindStringSubmatch(stderr.String())[1]

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url + "/api/v1/namespaces/default")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, err = client.Post(url+"/faults/compact", "", nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, "--enable-faults serves /faults/")

	cancel() // what SIGINT does
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after the signal")
	}
	assert.Regexp(t, `GET /api/v1/namespaces/default 200 `, stderr.String(), "one log line per request")
	assert.Contains(t, stderr.String(), "shutting down")
	assert.Contains(t, stderr.String(), "GET namespaces default", "--trace narrates")
}

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
		"-watcher-buffer", "-history-bytes", "-store-history-bytes", "-compaction-interval", "-revisions-from-clock", "-max-requests-inflight", "-max-mutating-requests-inflight", "-max-watches", "-max-connections",
		"A restart forgets everything", "410 Expired", "-enable-faults", "-token", "-trace", "-quiet", "kill-watches", "compact", "stall-watches",
		"watch-timeout", "bookmark-interval", "fail-resource", "request-delay", "127.0.0.1:8080", "http://127.0.0.1:8080/ui/",
		"-tls-cert-file", "-tls-private-key-file", "-tls", "-cert-dir", "kill-watch-streams"} {
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
	require.Eventually(t, func() bool { return serving.MatchString(stderr.String()) }, 2*time.Minute, 10*time.Millisecond)
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
	case <-time.After(2 * time.Minute): // only a hang gets here
		t.Fatal("run did not return after the signal")
	}
	assert.Regexp(t, `GET /api/v1/namespaces/default 200 `, stderr.String(), "one log line per request")
	assert.Contains(t, stderr.String(), "shutting down")
	assert.Contains(t, stderr.String(), "GET namespaces default", "--trace narrates")
}

// --tls serves HTTPS with HTTP/2 and writes a kubeconfig a client can use
// as it is.
func TestServeTLSWritesAKubeconfig(t *testing.T) {
	defer leakcheck.Check(t)()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--tls", "--cert-dir", dir, "--quiet"}, &stderr)
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	serving := regexp.MustCompile(`serving on (https://127\.0\.0\.1:\d+)`)
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "kubeconfig") }, 2*time.Minute, 10*time.Millisecond)
	url := serving.FindStringSubmatch(stderr.String())[1]

	kc, err := os.ReadFile(filepath.Join(dir, "kubeconfig"))
	require.NoError(t, err)
	assert.Contains(t, string(kc), "server: "+url+"\n")
	ca, err := os.ReadFile(filepath.Join(dir, "apiserver.crt"))
	require.NoError(t, err)
	assert.Contains(t, string(kc), base64.StdEncoding.EncodeToString(ca))

	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(ca))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(url + "/version")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, 2, resp.ProtoMajor, "HTTP/2, negotiated by ALPN")
}

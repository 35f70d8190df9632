package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

func TestHelpDocumentsEveryFlag(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-server", "-token", "-controllers", "-workers", "-kubelet-start-delay", "-node-name", "-trace", "deployment", "kubelet", "gc"} {
		assert.Contains(t, out.String(), f)
	}
	assert.Error(t, run(context.Background(), []string{"--nope"}, io.Discard))
	assert.Error(t, run(context.Background(), []string{"extra"}, io.Discard))
	assert.ErrorContains(t, run(context.Background(), []string{"--workers", "0"}, io.Discard), "--workers")
	assert.ErrorContains(t, run(context.Background(), []string{"--controllers", "scheduler"}, io.Discard), `unknown controller "scheduler"`)
}

func TestRunsAgainstAnApiserverAndStops(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop(context.Background())) })
	t.Cleanup(http.DefaultTransport.(*http.Transport).CloseIdleConnections)

	runCtx, stop := context.WithCancel(ctx)
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"--server", srv.URL(), "--trace", "--kubelet-start-delay", "10ms"}, &stderr)
	}()

	body := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`
	resp, err := http.Post(srv.URL()+"/apis/apps/v1/namespaces/default/deployments", "application/json", bytes.NewBufferString(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(stderr.String()), []byte("default/web status: 2 replicas, 2 updated, 2 ready, 2 available"))
	}, 2*time.Minute, 10*time.Millisecond, "the narration shows the rollout finishing:\n%s", &stderr)

	stop() // what SIGINT does
	require.NoError(t, <-done)
	assert.Contains(t, stderr.String(), "running deployment, kubelet, gc against "+srv.URL())
	assert.Contains(t, stderr.String(), "controller-manager: stopped")
}

package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers/manager"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

func TestHelpDocumentsEveryFlag(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, &out)
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range []string{"-server", "-token", "-kubeconfig", "-controllers", "-workers", "-kubelet-start-delay", "-node-name", "-trace", "deployment", "kubelet", "gc"} {
		assert.Contains(t, out.String(), f)
	}
	assert.Error(t, run(context.Background(), []string{"--nope"}, io.Discard))
	assert.Error(t, run(context.Background(), []string{"extra"}, io.Discard))
	assert.ErrorContains(t, run(context.Background(), []string{"--workers", "0"}, io.Discard), "--workers")
	assert.ErrorContains(t, run(context.Background(), []string{"--controllers", "scheduler"}, io.Discard), `unknown controller "scheduler"`)
	assert.ErrorContains(t, run(context.Background(), []string{"--kubeconfig", "/nonexistent/kubeconfig"}, io.Discard), "kubeconfig")
}

// With --kubeconfig it reaches a TLS server that wants a token, as
// kube-controller-manager does; the kubeconfig is the one cmd/apiserver
// --tls writes.
func TestRunsAgainstATLSServerWithItsKubeconfig(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0", SelfSignedTLS: true, Token: "s3cret"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Stop(context.Background())) })
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, srv.Kubeconfig(), 0o600))
	cfg, err := client.ConfigFromKubeconfig(kubeconfig, "")
	require.NoError(t, err)
	writer, err := client.New(cfg)
	require.NoError(t, err)

	runCtx, stop := context.WithCancel(ctx)
	var stderr syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, []string{"--kubeconfig", kubeconfig, "--trace", "--kubelet-start-delay", "10ms"}, &stderr)
	}()
	d := &api.Object{}
	require.NoError(t, d.UnmarshalJSON([]byte(webDeployment)))
	_, err = writer.Resource(api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("default").Create(ctx, d)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return strings.Contains(stderr.String(), "default/web status: 2 replicas, 2 updated, 2 ready, 2 available")
	}, 2*time.Minute, 10*time.Millisecond, "the rollout finishes over TLS:\n%s", &stderr)
	stop()
	require.NoError(t, <-done)
	assert.Contains(t, stderr.String(), "against "+srv.URL())
}

const webDeployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
  "selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"nginx","image":"nginx"}]}}}}`

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

	resp, err := http.Post(srv.URL()+"/apis/apps/v1/namespaces/default/deployments", "application/json", bytes.NewBufferString(webDeployment))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Eventually(t, func() bool {
		return bytes.Contains([]byte(stderr.String()), []byte("default/web status: 2 replicas, 2 updated, 2 ready, 2 available"))
	}, 2*time.Minute, 10*time.Millisecond, "the narration shows the rollout finishing:\n%s", &stderr)

	stop() // what SIGINT does
	require.NoError(t, <-done)
	assert.Contains(t, stderr.String(), "running "+strings.Join(manager.All, ", ")+" against "+srv.URL())
	assert.Contains(t, stderr.String(), "controller-manager: stopped")
}

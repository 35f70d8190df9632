package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/leakcheck"
	"listwatch/internal/syncbuf"
)

// Against our apiserver: the replayed event arrives as one line, then the
// server closes the websocket as the watch ends.
func TestWatchOverWebsocket(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop(context.Background())) }()
	c, err := client.New(client.Config{Host: srv.URL()})
	require.NoError(t, err)
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	_, err = cms.Create(ctx, &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: "hello", Namespace: "default"}})
	require.NoError(t, err)

	// The server ends the watch by stopping once the event is out: a short
	// timeout could end it first on a busy machine.
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, &out, srv.URL()+"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=3600", options{frames: true})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), `"name":"hello"`) }, 2*time.Minute, 5*time.Millisecond)
	require.NoError(t, srv.Stop(ctx))
	require.NoError(t, <-done)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4, out.String())
	assert.Contains(t, lines[0], "101 Switching Protocols")
	assert.Regexp(t, `^# message 1: one text frame, \d+ bytes$`, lines[1])
	assert.Regexp(t, `^\{"type":"ADDED","object":\{.*"name":"hello"`, lines[2])
	assert.Equal(t, "# the server closed the websocket after 1 messages: the watch is over", lines[3])
}

// A cancelled context ends a watch that is waiting for events.
func TestInterrupted(t *testing.T) {
	defer leakcheck.Check(t)()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop(context.Background())) }()
	// Interrupted once connected (not after a guessed while, which a busy
	// machine could spend dialling).
	var out syncbuf.Buffer
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	done := make(chan error, 1)
	go func() {
		done <- run(wctx, &out, srv.URL()+"/api/v1/namespaces/default/configmaps?watch=true", options{})
	}()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "# connected") }, 2*time.Minute, 5*time.Millisecond)
	wcancel()
	require.NoError(t, <-done)
	assert.Contains(t, out.String(), "# interrupted after 0 messages")
}

// Bad input gets a clear error.
func TestBadURLs(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"ftp://x/y", "must start with http://"},
		{"http:///api", "no host"},
		{"://", "not a URL"},
	} {
		err := run(context.Background(), &bytes.Buffer{}, tc.url, options{})
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), tc.want, tc.url)
	}
	// A server that does not upgrade (here: a 404 for a path it lacks).
	ctx := context.Background()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0"})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop(ctx)) }()
	err = run(ctx, &bytes.Buffer{}, srv.URL()+"/api/v1/nothings?watch=true", options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refused the websocket upgrade")
}

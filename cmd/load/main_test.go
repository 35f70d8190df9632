package main

import (
	"bytes"
	"context"
	"io"
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
	} {
		assert.Error(t, run(context.Background(), args, io.Discard, io.Discard), "%v", args)
	}
}

// A small fanout against an in-process server: every create reaches every
// watcher and the report says so.
func TestFanoutSmall(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv, err := apiserver.Start(context.Background(), apiserver.Config{})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
	})
	var out bytes.Buffer
	err = run(context.Background(), []string{"-url", srv.URL(), "-scenario", "fanout", "-watchers", "20", "-writes", "10", "-timeout", "1m"}, &out, io.Discard)
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
	srv, err := apiserver.Start(context.Background(), apiserver.Config{MaxWatches: 3, MaxConnections: 8})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // only a hang gets near it
		defer cancel()
		require.NoError(t, srv.Stop(ctx))
	})
	var out bytes.Buffer
	err = run(context.Background(), []string{"-url", srv.URL(), "-scenario", "flood", "-watchers", "30", "-batch", "2", "-hold", "0s", "-timeout", "5m"}, &out, io.Discard)
	require.NoError(t, err, out.String())
	t.Log(out.String())
	assert.Contains(t, out.String(), "watches: 200 × 3, 429 × 27, failed × 0")
	assert.Contains(t, out.String(), "refused watches whose connection the server closed: 27 of 27")
	assert.Regexp(t, `/healthz during the flood and 0s after: 200 × \d+, failed × 0`, out.String())
}

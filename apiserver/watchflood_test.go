package apiserver

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A watch flood from clients that never close their connections, scaled
// down: with 3 watches allowed and 6 connections, every watch past the cap
// gets 429 and its connection closed by the server, so the flood never
// reaches the connection cap, and a health probe and a small LIST on new
// connections still get 200. (Before, each refused watch kept its
// connection: the headroom filled up and everything got 503.)
func TestWatchFloodLeavesRoomForRequests(t *testing.T) {
	const maxWatches, maxConns = 3, 6
	ts := startServer(t, Config{MaxWatches: maxWatches, MaxConnections: maxConns})
	addr := ts.listener.Addr().String()
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	watch := func() (*http.Response, *bufio.Reader, net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		held = append(held, c) // never closed by the client until the test ends
		// Only turns a hang into a failure.
		require.NoError(t, c.SetReadDeadline(time.Now().Add(safetyTimeout)))
		_, err = fmt.Fprint(c, "GET /api/v1/namespaces/default/configmaps?watch=1 HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		return resp, br, c
	}
	for range maxWatches {
		resp, _, _ := watch()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	for i := range 4 * maxConns {
		resp, br, _ := watch()
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "watch %d past the cap", i+1)
		assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		require.True(t, resp.Close, "the answer says the connection closes")
		_, err := io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		// The server hung up: the connection's slot is free again.
		_, err = br.ReadByte()
		require.ErrorIs(t, err, io.EOF)
	}
	assert.LessOrEqual(t, ts.connLimit.Open(), int64(maxWatches), "only the watches hold connections")
	assert.Zero(t, ts.connLimit.Rejected(), "no connection got the connection cap's 503")

	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer probe.CloseIdleConnections()
	for _, p := range []string{"/healthz", "/api/v1/namespaces/default/configmaps?limit=1"} {
		resp, err := probe.Get(ts.URL() + p)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, p)
	}
}

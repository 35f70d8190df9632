package filters

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClassifyCountsLikeKubeAPIServer(t *testing.T) {
	tests := []struct {
		method, target string
		want           Kind
	}{
		{"GET", "/healthz", Exempt},
		{"GET", "/livez", Exempt},
		{"GET", "/readyz", Exempt},
		{"GET", "/api/v1/namespaces/default/configmaps", ReadOnly},
		{"GET", "/api/v1/namespaces/default/configmaps/a", ReadOnly},
		{"HEAD", "/api/v1/configmaps", ReadOnly},
		{"GET", "/api/v1/configmaps?watch=true", Watch},
		{"GET", "/api/v1/configmaps?watch=1&resourceVersion=5", Watch},
		{"GET", "/api/v1/configmaps?watch=false", ReadOnly},
		{"GET", "/api/v1/configmaps?watch=0", ReadOnly},
		{"GET", "/api/v1/watch/namespaces/default/configmaps", Watch},
		{"POST", "/api/v1/namespaces/default/configmaps", Mutating},
		{"PUT", "/api/v1/namespaces/default/configmaps/a", Mutating},
		{"PATCH", "/api/v1/namespaces/default/configmaps/a", Mutating},
		{"DELETE", "/api/v1/namespaces/default/configmaps/a", Mutating},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Classify(httptest.NewRequest(tt.method, tt.target, nil)), "%s %s", tt.method, tt.target)
	}
}

func TestInFlightLimits(t *testing.T) {
	f := NewInFlight(2, 1, 1)
	r1, ok := f.Begin(ReadOnly)
	require.True(t, ok)
	r2, ok := f.Begin(ReadOnly)
	require.True(t, ok)
	_, ok = f.Begin(ReadOnly)
	assert.False(t, ok, "a third read-only request is past the limit")
	m, ok := f.Begin(Mutating)
	require.True(t, ok, "mutating requests have their own limit")
	_, ok = f.Begin(Mutating)
	assert.False(t, ok)
	w, ok := f.Begin(Watch)
	require.True(t, ok, "a watch takes no read-only slot")
	_, ok = f.Begin(Watch)
	assert.False(t, ok, "past MaxWatches")
	for range 3 {
		e, ok := f.Begin(Exempt)
		require.True(t, ok, "health probes are never limited")
		e()
	}
	st := f.Stats()
	assert.Equal(t, InFlightStats{ReadOnly: 2, MaxReadOnly: 2, Mutating: 1, MaxMutating: 1, Watches: 1, MaxWatches: 1, Rejected: 3}, st)
	r1()
	r2()
	m()
	w()
	_, ok = f.Begin(ReadOnly)
	assert.True(t, ok, "released slots are free again")
	_, ok = f.Begin(Watch)
	assert.True(t, ok)

	st429 := TooManyRequests(Watch)
	assert.Equal(t, int32(http.StatusTooManyRequests), st429.Code)
	assert.Equal(t, int32(RetryAfterSeconds), st429.Details.RetryAfterSeconds)
	assert.Contains(t, st429.Message, "open watches")
}

func TestUnlimitedInFlight(t *testing.T) {
	f := NewInFlight(-1, 0, -1)
	for range 1000 {
		_, ok := f.Begin(ReadOnly)
		require.True(t, ok)
		_, ok = f.Begin(Watch)
		require.True(t, ok)
	}
}

func TestLimitListenerAnswers503PastTheCap(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := LimitListener(tcp, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var served []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", tcp.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		served = append(served, <-accepted)
	}
	assert.Equal(t, int64(2), ln.Open())

	over, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer over.Close()
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Equal(t, int64(1), ln.Rejected())

	// A connection that closes frees its slot, once however often it is
	// closed, and the next client is served.
	require.NoError(t, served[0].Close())
	_ = served[0].Close()
	assert.Equal(t, int64(1), ln.Open())
	c, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	(<-accepted).Close()
	served[1].Close()
	assert.Equal(t, int64(0), ln.Open())
}

func TestDefaultConnectionLimitsKeepHeadroom(t *testing.T) {
	conns, watches := DefaultConnectionLimits()
	assert.Greater(t, conns, watches, "watches leave connections for everything else")
	assert.GreaterOrEqual(t, conns-watches, min(1024, conns/4))
	assert.Positive(t, watches)
}

// A counted connection can still be reset (the kill fault): the client
// sees a reset, not an orderly end.
func TestCountedConnectionsCanBeReset(t *testing.T) {
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := LimitListener(tcp, 10)
	defer ln.Close()
	client, err := net.Dial("tcp", tcp.Addr().String())
	require.NoError(t, err)
	defer client.Close()
	srv, err := ln.Accept()
	require.NoError(t, err)
	l, ok := srv.(interface{ SetLinger(int) error })
	require.True(t, ok, "the wrapper passes SetLinger on")
	require.NoError(t, l.SetLinger(0))
	require.NoError(t, srv.Close())
	_, err = client.Read(make([]byte, 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "reset")
}

package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
)

// countingServer answers every GET with an empty ConfigMap list and every
// POST with the posted name, counting what it served.
func countingServer(t *testing.T, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"7"}}`))
			return
		}
		_, _ = w.Write([]byte(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFailoverToTheNextServer(t *testing.T) {
	var hitsB atomic.Int64
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close() // nothing listens there any more: connections are refused
	b := countingServer(t, &hitsB)

	c, err := client.New(client.Config{Host: deadURL, FailoverHosts: []string{b.URL}})
	require.NoError(t, err)
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("ns")

	l, err := cms.List(context.Background(), api.ListOptions{})
	require.NoError(t, err, "the unreachable first server is skipped")
	assert.Equal(t, "7", l.Metadata.ResourceVersion)
	assert.Equal(t, int64(1), hitsB.Load())

	// A write whose connection was refused never reached a server, so it
	// may go to the next one; the client now starts with the server that
	// answered.
	_, err = cms.Create(context.Background(), &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Name: "a", Namespace: "ns"}})
	require.NoError(t, err)
	assert.Equal(t, int64(2), hitsB.Load())
}

func TestFailoverAllServersDown(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	dead2 := httptest.NewServer(http.NotFoundHandler())
	dead2.Close()
	c, err := client.New(client.Config{Host: dead.URL, FailoverHosts: []string{dead2.URL}})
	require.NoError(t, err)
	_, err = c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).List(context.Background(), api.ListOptions{})
	require.Error(t, err, "the last server's error is returned")
}

func TestFailoverHostsAreChecked(t *testing.T) {
	_, err := client.New(client.Config{Host: "http://127.0.0.1:1", FailoverHosts: []string{"ftp://x"}})
	require.ErrorContains(t, err, "FailoverHosts")
}

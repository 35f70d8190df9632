package integration

// A watch-list from our client is compressed by the server, as
// kube-apiserver 1.37 compresses it for client-go, and decompressed by Go's
// transport without the client knowing: it never sets Accept-Encoding
// itself, so net/http adds gzip and undoes it (docs/01-wire-protocol.md).

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/leakcheck"
)

// uncompressedWatches records, for every watch-list response, whether Go's
// transport decompressed it (http.Response.Uncompressed).
type uncompressedWatches struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []bool
}

func (u *uncompressedWatches) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := u.next.RoundTrip(r)
	if err == nil && r.URL.Query().Get("sendInitialEvents") == "true" {
		u.mu.Lock()
		u.seen = append(u.seen, resp.Uncompressed)
		u.mu.Unlock()
	}
	return resp, err
}

func (u *uncompressedWatches) list() []bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]bool(nil), u.seen...)
}

func TestWatchListIsDecompressedByTheTransport(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  apiserver.Config
	}{{"HTTP/1.1", apiserver.Config{}}, {"HTTP/2", apiserver.Config{SelfSignedTLS: true}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(leakcheck.Check(t))
			srv := startServer(t, tc.cfg)
			transport := http.DefaultTransport.(*http.Transport).Clone()
			transport.ForceAttemptHTTP2 = true
			if tc.cfg.SelfSignedTLS {
				pool := x509.NewCertPool()
				require.True(t, pool.AppendCertsFromPEM(srv.CACertificate()))
				transport.TLSClientConfig = &tls.Config{RootCAs: pool}
			}
			rec := &uncompressedWatches{next: transport}
			c, err := client.New(client.Config{Host: srv.URL(), HTTPClient: &http.Client{Transport: rec}})
			require.NoError(t, err)
			t.Cleanup(transport.CloseIdleConnections)
			ctx := testContext(t)
			createNamespaces(t, c, "gz")
			cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("gz")
			_, err = cms.Create(ctx, configMap("gz", "a", "1"))
			require.NoError(t, err)

			yes := true
			w, err := cms.Watch(ctx, api.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
				ResourceVersionMatch: api.ResourceVersionMatchNotOlderThan})
			require.NoError(t, err)
			defer w.Stop()
			assert.Equal(t, api.Added, receive(t, w.ResultChan()).Type)
			end := receive(t, w.ResultChan())
			assert.Equal(t, api.Bookmark, end.Type)
			assert.Equal(t, "true", end.Object.Metadata.Annotations[api.InitialEventsEndAnnotation])
			_, err = cms.Create(ctx, configMap("gz", "b", "2"))
			require.NoError(t, err)
			ev := receive(t, w.ResultChan())
			assert.Equal(t, api.Added, ev.Type)
			assert.Equal(t, "b", ev.Object.Metadata.Name)
			assert.Equal(t, []bool{true}, rec.list(), "the server compressed the watch-list, the transport undid it")
		})
	}
}

package interop_test

// client-go against our server as against a real cluster: https with the
// kubeconfig the server wrote, HTTP/2 negotiated by ALPN, every watch of a
// clientset a stream of one shared connection (the server allows 100 per
// connection, as kube-apiserver does, so 200 watches take two).

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"listwatch/apiserver"
	"listwatch/apiserver/watchserver"
)

// startTLSServer starts our apiserver with a generated certificate and
// returns it with the path of the kubeconfig it wrote.
func startTLSServer(t testing.TB) (*apiserver.Server, string) {
	t.Helper()
	srv, err := apiserver.Start(context.Background(), apiserver.Config{Listen: "127.0.0.1:0", EnableFaults: true, SelfSignedTLS: true})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, srv.Kubeconfig(), 0o600))
	return srv, path
}

// watchesByConnection reads the server's debug view (over HTTP/1.1, a
// connection of its own) and counts the configmaps watches per connection.
func watchesByConnection(t testing.TB, srv *apiserver.Server) (map[int64]int, map[string]bool) {
	t.Helper()
	pool := x509.NewCertPool()
	require.True(t, pool.AppendCertsFromPEM(srv.CACertificate()))
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL() + "/debug/listwatch")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var v struct {
		Watches []watchserver.WatchInfo `json:"watches"`
	}
	require.NoError(t, json.Unmarshal(b, &v))
	conns, transports := map[int64]int{}, map[string]bool{}
	for _, w := range v.Watches {
		if w.Resource == "configmaps" {
			conns[w.Connection]++
			transports[w.Transport] = true
		}
	}
	return conns, transports
}

// An unmodified client-go, configured from the kubeconfig our server
// wrote, lists, watches and runs an informer over https and HTTP/2.
func TestClientGoOverHTTPSWithOurKubeconfig(t *testing.T) {
	srv, kubeconfig := startTLSServer(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cfg.ContentType = "application/json" // our server reads JSON bodies
	cs := mustClientset(t, cfg)
	ctx := t.Context()

	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", "a", "1", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	list, err := cs.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)

	w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	require.NoError(t, err)
	defer w.Stop()

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("default"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	added := make(chan string, 10)
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { added <- obj.(*corev1.ConfigMap).Name }})
	require.NoError(t, err)
	stop := make(chan struct{})
	factory.Start(stop)
	defer factory.Shutdown() // after close(stop), deferred below: Shutdown waits for the informers
	defer close(stop)
	require.True(t, cache.WaitForCacheSync(stop, inf.HasSynced))
	assert.Equal(t, "a", <-added)

	_, err = cs.CoreV1().ConfigMaps("default").Create(ctx, configMap("default", "b", "1", nil), metav1.CreateOptions{})
	require.NoError(t, err)
	select {
	case ev := <-w.ResultChan():
		assert.Equal(t, watch.Added, ev.Type)
		assert.Equal(t, "b", ev.Object.(*corev1.ConfigMap).Name)
	case <-time.After(safetyTimeout):
		t.Fatal("no watch event")
	}
	select {
	case name := <-added:
		assert.Equal(t, "b", name)
	case <-time.After(safetyTimeout):
		t.Fatal("the informer saw nothing")
	}
	_, transports := watchesByConnection(t, srv)
	assert.Equal(t, map[string]bool{watchserver.TransportH2Stream: true}, transports, "client-go speaks HTTP/2")
}

// 200 watches from one clientset share one or two connections: the
// server's SETTINGS allow 100 streams per connection, and client-go's
// transport opens another connection when one is full.
func TestClientGo200WatchesShareOneOrTwoConnections(t *testing.T) {
	srv, kubeconfig := startTLSServer(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	cfg.QPS, cfg.Burst = -1, 0 // 200 watches at once, no client-side rate limit
	cs := mustClientset(t, cfg)
	ctx := t.Context()

	const n = 200
	for range n {
		w, err := cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		defer w.Stop()
	}
	conns, transports := watchesByConnection(t, srv)
	total := 0
	for _, c := range conns {
		total += c
		assert.LessOrEqual(t, c, 100, "at most 100 streams per connection")
	}
	assert.Equal(t, n, total)
	assert.GreaterOrEqual(t, len(conns), 1)
	assert.LessOrEqual(t, len(conns), 2, "200 watches, one or two connections: %v", conns)
	assert.Equal(t, map[string]bool{watchserver.TransportH2Stream: true}, transports)
	t.Logf("200 client-go watches on %d connection(s): %v", len(conns), conns)
}

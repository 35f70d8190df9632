package client

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/leakcheck"
)

// recorded is one request as the server saw it.
type recorded struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

// recorder answers every request with answer and remembers it.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rec *recorder) server(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), string(body)})
		rec.mu.Unlock()
		answer(w, r)
	}))
}

func (rec *recorder) all() []recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]recorded(nil), rec.reqs...)
}

func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reqs = nil
}

func (rec *recorder) last() recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.reqs[len(rec.reqs)-1]
}

const alphaJSON = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"alpha","namespace":"ns","resourceVersion":"7"},"data":{"k":"v"}}` + "\n"

func answerObject(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, alphaJSON)
}

func TestResourcePaths(t *testing.T) {
	defer leakcheck.Check(t)()
	var rec recorder
	srv := rec.server(t, answerObject)
	defer srv.Close()
	c := newTestClient(t, srv, TransportHTTP)
	deploy := api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ns := api.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	cases := []struct {
		rc   *ResourceClient
		want string
	}{
		{c.Resource(configMaps).Namespace("fixtures"), "/api/v1/namespaces/fixtures/configmaps/alpha"},
		{c.Resource(configMaps), "/api/v1/configmaps/alpha"},
		{c.Resource(deploy).Namespace("prod"), "/apis/apps/v1/namespaces/prod/deployments/alpha"},
		{c.Resource(deploy), "/apis/apps/v1/deployments/alpha"},
		{c.Resource(ns), "/api/v1/namespaces/alpha"},
	}
	for _, tc := range cases {
		_, err := tc.rc.Get(context.Background(), "alpha")
		require.NoError(t, err)
		assert.Equal(t, tc.want, rec.last().Path)
	}
	// A name is escaped, not interpreted.
	_, err := c.Resource(configMaps).Namespace("ns").Get(context.Background(), "a/b")
	require.NoError(t, err)
	assert.Equal(t, "/api/v1/namespaces/ns/configmaps/a%2Fb", rec.last().Path)
}

func TestRequestHeaders(t *testing.T) {
	defer leakcheck.Check(t)()
	var rec recorder
	srv := rec.server(t, answerObject)
	defer srv.Close()
	ctx := context.Background()

	_, err := newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("ns").Get(ctx, "alpha")
	require.NoError(t, err)
	h := rec.last().Header
	assert.Equal(t, "application/json", h.Get("Accept"))
	assert.Equal(t, "listwatch/"+Version, h.Get("User-Agent"))
	assert.Empty(t, h.Get("Authorization"))

	c := newTestClient(t, srv, TransportHTTP, func(c *Config) { c.BearerToken, c.UserAgent = "s3cret", "demo/1.0" })
	_, err = c.Resource(configMaps).Namespace("ns").Get(ctx, "alpha")
	require.NoError(t, err)
	h = rec.last().Header
	assert.Equal(t, "Bearer s3cret", h.Get("Authorization"))
	assert.Equal(t, "demo/1.0", h.Get("User-Agent"))
}

func TestWriteRequests(t *testing.T) {
	defer leakcheck.Check(t)()
	var rec recorder
	srv := rec.server(t, answerObject)
	defer srv.Close()
	rc := newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("ns")
	ctx := context.Background()
	obj := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Name: "alpha", ResourceVersion: "125"},
		Fields: []api.Field{{Name: "data", Value: []byte(`{"k":"v3"}`)}}}

	got, err := rc.Create(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, "7", got.Metadata.ResourceVersion)
	r := rec.last()
	assert.Equal(t, "POST /api/v1/namespaces/ns/configmaps", r.Method+" "+r.Path)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","resourceVersion":"125"},"data":{"k":"v3"}}`, r.Body)

	_, err = rc.Update(ctx, obj)
	require.NoError(t, err)
	r = rec.last()
	assert.Equal(t, "PUT /api/v1/namespaces/ns/configmaps/alpha", r.Method+" "+r.Path)

	_, err = rc.Patch(ctx, "alpha", PatchTypeMerge, []byte(`{"data":{"extra":"x"}}`))
	require.NoError(t, err)
	r = rec.last()
	assert.Equal(t, "PATCH /api/v1/namespaces/ns/configmaps/alpha", r.Method+" "+r.Path)
	assert.Equal(t, "application/merge-patch+json", r.Header.Get("Content-Type"))
	assert.Equal(t, `{"data":{"extra":"x"}}`, r.Body)

	require.NoError(t, rc.Delete(ctx, "alpha", DeleteOptions{}))
	r = rec.last()
	assert.Equal(t, "DELETE /api/v1/namespaces/ns/configmaps/alpha", r.Method+" "+r.Path)
	assert.Empty(t, r.Body)
	assert.Empty(t, r.Header.Get("Content-Type"))

	// The exact body kubectl sends (error-409-delete-precondition.json).
	require.NoError(t, rc.Delete(ctx, "alpha", DeleteOptions{Preconditions: &Preconditions{ResourceVersion: "1"}}))
	r = rec.last()
	assert.Equal(t, `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"resourceVersion":"1"}}`, r.Body)
	assert.Equal(t, "application/json", r.Header.Get("Content-Type"))
}

func TestBadInputIsAnErrorNotAPanic(t *testing.T) {
	c, err := New(Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	rc := c.Resource(configMaps).Namespace("ns")
	ctx := context.Background()
	_, err = rc.Create(ctx, nil)
	assert.Error(t, err)
	_, err = rc.Update(ctx, nil)
	assert.Error(t, err)
	_, err = rc.Update(ctx, &api.Object{})
	assert.ErrorContains(t, err, "name")
	_, err = rc.Get(ctx, "")
	assert.Error(t, err)
	_, err = rc.Patch(ctx, "x", "", nil)
	assert.Error(t, err)
	assert.Error(t, rc.Delete(ctx, "", DeleteOptions{}))
	_, err = c.Resource(api.GroupVersionResource{}).List(ctx, api.ListOptions{})
	assert.Error(t, err)
	_, err = c.Resource(api.GroupVersionResource{}).Watch(ctx, api.ListOptions{})
	assert.Error(t, err)

	for _, cfg := range []Config{
		{},
		{Host: "ftp://x"},
		{Host: "http://"},
		{Host: "http://x", Transport: TransportKind(7)},
		{Host: "http://x", IdleWatchTimeout: -1},
		{Host: "http://x", CAFile: filepath.Join(t.TempDir(), "missing.pem")},
	} {
		_, err := New(cfg)
		assert.Error(t, err, "%+v", cfg)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	require.NoError(t, os.WriteFile(empty, []byte("not a cert"), 0o600))
	_, err = New(Config{Host: "x", CAFile: empty})
	assert.ErrorContains(t, err, "no PEM certificate")
}

func TestConnectionErrorIsReturned(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := srv.URL
	srv.Close() // nothing listens there any more
	for _, tk := range transports {
		c, err := New(Config{Host: host, Transport: tk})
		require.NoError(t, err)
		_, err = c.Resource(configMaps).Watch(context.Background(), api.ListOptions{})
		require.Error(t, err)
		_, isStatus := api.StatusOf(err)
		assert.False(t, isStatus)
	}
}

func TestHostWithoutSchemeAndPathPrefix(t *testing.T) {
	defer leakcheck.Check(t)()
	var rec recorder
	srv := rec.server(t, answerObject)
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c, err := New(Config{Host: u.Host + "/proxy/"})
	require.NoError(t, err)
	_, err = c.Resource(configMaps).Get(context.Background(), "alpha")
	require.NoError(t, err)
	assert.Equal(t, "/proxy/api/v1/configmaps/alpha", rec.last().Path)
}

func TestHTTPSWithCAFileAndInsecure(t *testing.T) {
	defer leakcheck.Check(t)()
	srv := httptest.NewUnstartedServer(scriptHandler(t, func(s stream, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" {
			s.Send(eventLine(t, cm(api.Added, "a", "1")))
			return
		}
		s.Send([]byte(alphaJSON))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	srv.StartTLS()
	defer srv.Close()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600))

	for _, cfg := range []Config{{CAFile: caFile}, {Insecure: true}} {
		for _, tk := range transports {
			cfg.Host, cfg.Transport = srv.URL, tk
			c, err := New(cfg)
			require.NoError(t, err)
			rc := c.Resource(configMaps)
			_, err = rc.Get(context.Background(), "alpha")
			require.NoError(t, err)
			w, err := rc.Watch(context.Background(), api.ListOptions{})
			require.NoError(t, err, "%s", tk)
			assert.Equal(t, []api.Event{cm(api.Added, "a", "1")}, collect(t, w))
			c.httpClient.CloseIdleConnections()
		}
	}
	// Without trust, the certificate is refused.
	c, err := New(Config{Host: srv.URL})
	require.NoError(t, err)
	_, err = c.Resource(configMaps).Get(context.Background(), "alpha")
	var certErr *tls.CertificateVerificationError
	assert.ErrorAs(t, err, &certErr)
	c.httpClient.CloseIdleConnections()
}

func TestListQueryAndPaging(t *testing.T) {
	defer leakcheck.Check(t)()
	// Five items served two per page, like list-page1-limit2.json.
	var rec recorder
	srv := rec.server(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		start, _ := strconv.Atoi(q.Get("continue"))
		limit, _ := strconv.Atoi(q.Get("limit"))
		end := min(start+limit, 5)
		if limit == 0 {
			end = 5
		}
		items := ""
		for i := start; i < end; i++ {
			if i > start {
				items += ","
			}
			items += fmt.Sprintf(`{"metadata":{"name":"cm%d","namespace":"ns","resourceVersion":"%d"}}`, i, 10+i)
		}
		meta := `"resourceVersion":"20"`
		if end < 5 {
			meta += fmt.Sprintf(`,"continue":"%d","remainingItemCount":%d`, end, 5-end)
		}
		_, _ = fmt.Fprintf(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{%s},"items":[%s]}`+"\n", meta, items)
	})
	defer srv.Close()
	rc := newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("ns")
	ctx := context.Background()

	one, err := rc.List(ctx, api.ListOptions{LabelSelector: "app=demo", FieldSelector: "metadata.name=cm1", Limit: 2,
		ResourceVersion: "0", ResourceVersionMatch: api.ResourceVersionMatchNotOlderThan, Watch: true})
	require.NoError(t, err)
	assert.Len(t, one.Items, 2)
	assert.Equal(t, "2", one.Metadata.Continue)
	q, _ := url.ParseQuery(rec.last().RawQuery)
	assert.Equal(t, url.Values{"labelSelector": {"app=demo"}, "fieldSelector": {"metadata.name=cm1"}, "limit": {"2"},
		"resourceVersion": {"0"}, "resourceVersionMatch": {"NotOlderThan"}}, q, "List never sends watch=true")

	rec.reset()
	all, err := rc.ListAll(ctx, api.ListOptions{ResourceVersion: "0", ResourceVersionMatch: api.ResourceVersionMatchNotOlderThan}, 2)
	require.NoError(t, err)
	require.Len(t, all.Items, 5)
	for i, it := range all.Items {
		assert.Equal(t, fmt.Sprintf("cm%d", i), it.Metadata.Name)
	}
	assert.Equal(t, "20", all.Metadata.ResourceVersion)
	assert.Empty(t, all.Metadata.Continue)
	assert.Nil(t, all.Metadata.RemainingItemCount)
	reqs := rec.all()
	require.Len(t, reqs, 3)
	assert.Equal(t, "limit=2&resourceVersion=0&resourceVersionMatch=NotOlderThan", reqs[0].RawQuery)
	// Later pages carry the token and no resourceVersion: the server
	// answers 400 to both (error-400-continue-with-resourceversion.json).
	assert.Equal(t, "continue=2&limit=2", reqs[1].RawQuery)
	assert.Equal(t, "continue=4&limit=2", reqs[2].RawQuery)

	pages := 0
	stop := fmt.Errorf("enough")
	err = rc.EachPage(ctx, api.ListOptions{}, 2, func(*api.List) error { pages++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, pages)
}

func TestPagingErrorOnLaterPage(t *testing.T) {
	defer leakcheck.Check(t)()
	expired := readFixture(t, "error-410-expired-continue.json")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("continue") != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write(expired)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"127","continue":"tok"},"items":[{"metadata":{"name":"a"}}]}`)
	}))
	defer srv.Close()
	_, err := newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("ns").ListAll(context.Background(), api.ListOptions{}, 1)
	require.Error(t, err)
	assert.True(t, IsResourceExpired(err))
	assert.Contains(t, err.Error(), "page 2")
}

func TestWatchQuery(t *testing.T) {
	forEachTransport(t, func(t *testing.T, tk TransportKind) {
		queries := make(chan url.Values, 1)
		headers := make(chan http.Header, 1)
		srv := newScriptedServer(t, func(_ stream, r *http.Request) {
			queries <- r.URL.Query()
			headers <- r.Header
		})
		defer srv.Close()
		c := newTestClient(t, srv, tk, func(c *Config) { c.BearerToken = "tok" })
		secs := int64(5)
		w, err := c.Resource(configMaps).Namespace("ns").Watch(context.Background(), api.ListOptions{
			ResourceVersion: "155", AllowWatchBookmarks: true, TimeoutSeconds: &secs, LabelSelector: "app=x"})
		require.NoError(t, err)
		defer w.Stop()
		assert.Equal(t, url.Values{"watch": {"true"}, "resourceVersion": {"155"}, "allowWatchBookmarks": {"true"},
			"timeoutSeconds": {"5"}, "labelSelector": {"app=x"}}, <-queries)
		h := <-headers
		assert.Equal(t, "Bearer tok", h.Get("Authorization"))
		assert.Equal(t, DefaultUserAgent, h.Get("User-Agent"))
		assert.Equal(t, "application/json", h.Get("Accept"))
		requireClosed(t, w)
	})
}

func TestConfigHTTP2AndCAData(t *testing.T) {
	_, err := New(Config{Host: "https://127.0.0.1:1", CAData: []byte("not a certificate")})
	assert.Error(t, err, "CAData that holds no certificate")
	for _, cfg := range []Config{
		{Host: "https://127.0.0.1:1"},
		{Host: "https://127.0.0.1:1", HTTP2ReadIdleTimeout: time.Second, HTTP2PingTimeout: time.Second},
		{Host: "https://127.0.0.1:1", HTTP2ReadIdleTimeout: -1},
		{Host: "https://127.0.0.1:1", DisableHTTP2: true},
	} {
		c, err := New(cfg)
		require.NoError(t, err)
		c.CloseIdleConnections()
	}
}

package client

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/websocket"

	"listwatch/api"
	"listwatch/internal/fixtures"
	"listwatch/internal/leakcheck"
)

// readFixture reads a recording of a real kube-apiserver v1.37 from the
// repository's testdata/fixtures, failing the test if it is missing.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	return fixtures.Read(t, name)
}

func fixtureNames(t *testing.T, pattern string) []string {
	t.Helper()
	return fixtures.Names(t, pattern)
}

// fixtureEvents is the independent oracle: the recordings are one compact
// event per line, so here (and only here) splitting on lines is right.
func fixtureEvents(t *testing.T, body []byte) (lines [][]byte, events []api.Event) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var ev api.Event
		require.NoError(t, ev.UnmarshalJSON(line))
		lines = append(lines, append(line, '\n'))
		events = append(events, ev)
	}
	require.NoError(t, sc.Err())
	return lines, events
}

// Every recorded watch stream, over chunked HTTP and over websocket,
// decodes into exactly the events it holds.
func TestFixtureWatchStreamsDecode(t *testing.T) {
	names := append(fixtureNames(t, "watch-*.jsonl"), fixtureNames(t, "ws-*.jsonl")...)
	require.GreaterOrEqual(t, len(names), 14)
	for _, name := range names {
		body := readFixture(t, name)
		lines, want := fixtureEvents(t, body)
		t.Run(name, func(t *testing.T) {
			forEachTransport(t, func(t *testing.T, tk TransportKind) {
				w, done := watchOver(t, tk, func(s stream, _ *http.Request) {
					if tk == TransportWebSocket {
						for _, l := range lines { // one text message per event, as recorded
							s.Send(l)
						}
						return
					}
					s.Send(body) // the exact bytes, in one chunk
				})
				defer done()
				got := collect(t, w)
				require.Equal(t, want, got)
			})
			t.Run("http-13-byte-chunks", func(t *testing.T) {
				defer leakcheck.Check(t)()
				w, done := watchOver(t, TransportHTTP, func(s stream, _ *http.Request) {
					for i := 0; i < len(body); i += 13 {
						s.Send(body[i:min(i+13, len(body))])
					}
				})
				defer done()
				require.Equal(t, want, collect(t, w))
			})
		})
	}
}

// The websocket recordings also decode when served by x/net/websocket,
// the library kube-apiserver serves them with: one text message per event,
// then a close frame.
func TestFixtureWebSocketWithXNetServer(t *testing.T) {
	for _, name := range fixtureNames(t, "ws-*.jsonl") {
		t.Run(name, func(t *testing.T) {
			defer leakcheck.Check(t)()
			lines, want := fixtureEvents(t, readFixture(t, name))
			var gotQuery string
			srv := httptest.NewServer(websocket.Handler(func(ws *websocket.Conn) {
				gotQuery = ws.Request().URL.RawQuery
				for _, l := range lines {
					if websocket.Message.Send(ws, string(l)) != nil {
						return
					}
				}
			}))
			defer srv.Close()
			c := newTestClient(t, srv, TransportWebSocket)
			w, err := c.Resource(configMaps).Namespace("fixtures").Watch(context.Background(), api.ListOptions{})
			require.NoError(t, err)
			defer w.Stop()
			require.Equal(t, want, collect(t, w))
			assert.Equal(t, "watch=true", gotQuery)
		})
	}
}

// fixtureChecks says, per Status fixture, which check must recognise it.
var fixtureChecks = map[string]func(error) bool{
	"error-400-bad-labelselector.json":                            IsBadRequest,
	"error-400-continue-with-resourceversion.json":                IsBadRequest,
	"error-400-list-bad-rv.json":                                  IsBadRequest,
	"error-400-malformed-json-body.json":                          IsBadRequest,
	"error-404-delete-notfound.json":                              IsNotFound,
	"error-404-get-notfound.json":                                 IsNotFound,
	"error-404-namespace-notfound.json":                           IsNotFound,
	"error-404-nonapi-path.txt":                                   IsNotFound,
	"error-404-unknown-group.txt":                                 IsNotFound,
	"error-404-unknown-resource.json":                             IsNotFound,
	"error-405-method-not-allowed.json":                           IsMethodNotSupported,
	"error-409-alreadyexists.json":                                IsAlreadyExists,
	"error-409-conflict-stale-rv.json":                            IsConflict,
	"error-409-delete-precondition.json":                          IsConflict,
	"error-410-expired-continue-earlier-capture-pretty.json":      IsResourceExpired,
	"error-410-expired-continue.json":                             IsResourceExpired,
	"error-410-expired-list-rv-exact-earlier-capture-pretty.json": IsResourceExpired,
	"error-410-expired-list-rv-exact.json":                        IsResourceExpired,
	"error-415-patch-wrong-content-type.json":                     IsUnsupportedMediaType,
	"error-422-invalid-name.json":                                 IsInvalid,
	"error-422-rvmatch-without-rv.json":                           IsInvalid,
	"error-422-sendinitialevents-without-rvmatch.json":            IsInvalid,
	"error-500-watch-bad-rv.json":                                 IsInternalError,
	"error-504-list-future-rv.json":                               IsTooLargeResourceVersion,
}

// Every recorded error answer, served with its status code, becomes a
// *StatusError carrying the server's Status (or, for the plain-text 404s,
// the NotFound client-go makes up), recognised by the matching check,
// from a plain request and from a watch over either transport.
func TestFixtureStatusErrors(t *testing.T) {
	defer leakcheck.Check(t)()
	names := append(fixtureNames(t, "error-*.json"), fixtureNames(t, "error-*.txt")...)
	require.Len(t, names, len(fixtureChecks), "a Status fixture without an entry in fixtureChecks")
	for _, name := range names {
		check, ok := fixtureChecks[name]
		require.True(t, ok, "no check for %s", name)
		body := readFixture(t, name)
		code, err := strconv.Atoi(strings.Split(name, "-")[1])
		require.NoError(t, err)
		contentType := "application/json"
		if strings.HasSuffix(name, ".txt") {
			contentType = "text/plain; charset=utf-8"
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(code)
			_, _ = w.Write(body)
		}))
		calls := map[string]func(c *Client) error{
			"get": func(c *Client) error {
				_, err := c.Resource(configMaps).Namespace("fixtures").Get(context.Background(), "alpha")
				return err
			},
			"list": func(c *Client) error {
				_, err := c.Resource(configMaps).Namespace("fixtures").List(context.Background(), api.ListOptions{})
				return err
			},
		}
		for _, tk := range transports {
			calls["watch-"+tk.String()] = func(c *Client) error {
				c.transport = tk
				w, err := c.Resource(configMaps).Namespace("fixtures").Watch(context.Background(), api.ListOptions{})
				if w != nil {
					w.Stop()
				}
				return err
			}
		}
		for call, do := range calls {
			t.Run(name+"/"+call, func(t *testing.T) {
				err := do(newTestClient(t, srv, TransportHTTP))
				require.Error(t, err)
				assert.True(t, check(err), "%s: %v", name, err)
				var se *StatusError
				require.ErrorAs(t, err, &se)
				var st *api.Status
				require.ErrorAs(t, err, &st)
				assert.EqualValues(t, code, st.Code)
				if contentType == "application/json" {
					var want api.Status
					require.NoError(t, want.UnmarshalJSON(body))
					assert.Equal(t, &want, st, "the server's own Status, unchanged")
				} else {
					assert.Equal(t, api.ReasonNotFound, st.Reason)
					assert.Contains(t, st.Message, "the server could not find the requested resource")
					assert.Equal(t, "404 page not found", st.Details.Causes[0].Message)
				}
			})
		}
		srv.Close()
	}
}

// The answers that are not errors decode into the api types.
func TestFixtureResponsesDecode(t *testing.T) {
	defer leakcheck.Check(t)()
	files := map[string]string{
		"/api/v1/namespaces/fixtures/configmaps":       "list.json",
		"/api/v1/namespaces/fixtures/configmaps/alpha": "get-configmap-200.json",
		"/api/v1/namespaces/fixtures/configmaps/beta":  "get-configmap-pretty-param.json",
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(readFixture(t, files[r.URL.Path]))
	}))
	defer srv.Close()
	rc := newTestClient(t, srv, TransportHTTP).Resource(configMaps).Namespace("fixtures")
	ctx := context.Background()

	list, err := rc.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, "ConfigMapList", list.Kind)
	assert.NotEmpty(t, list.Metadata.ResourceVersion)
	assert.NotEmpty(t, list.Items)

	alpha, err := rc.Get(ctx, "alpha")
	require.NoError(t, err)
	assert.Equal(t, "fixtures/alpha", alpha.Key())
	beta, err := rc.Get(ctx, "beta")
	require.NoError(t, err)
	assert.Equal(t, "fixtures/beta", beta.Key())
}

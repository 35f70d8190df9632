package negotiation

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func listItems(n, size int) []*api.Object {
	items := make([]*api.Object, n)
	for i := range items {
		items[i] = &api.Object{Kind: "ConfigMap", APIVersion: "v1",
			Metadata: api.ObjectMeta{Name: fmt.Sprintf("cm-%05d", i), Namespace: "ns", ResourceVersion: "7"},
			Fields:   []api.Field{{Name: "data", Value: []byte(`{"d":"` + strings.Repeat("x", size) + `"}`)}}}
	}
	return items
}

// The streamed list is what WriteJSON would send for the whole list:
// compact JSON, pretty JSON (built whole), and protobuf for a client that
// prefers it (client-go's default), which is never pretty.
func TestWriteListIsWhatWriteJSONWouldSend(t *testing.T) {
	items := listItems(300, 100)
	meta := api.ListMeta{ResourceVersion: "9", Continue: "next"}
	for _, c := range []struct{ ua, accept, contentType string }{
		{"client-go", "", JSONContentType},
		{"curl/8", "", JSONContentType},
		{"client-go", ProtobufContentType + ", application/json", ProtobufContentType},
		{"curl/8", ProtobufContentType, ProtobufContentType},
	} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
		r.Header.Set("User-Agent", c.ua)
		r.Header.Set("Accept", c.accept)
		streamed := httptest.NewRecorder()
		WriteList(streamed, r, "ConfigMapList", "v1", meta, items, nil)

		l := api.List{Kind: "ConfigMapList", APIVersion: "v1", Metadata: meta}
		for _, o := range items {
			l.Items = append(l.Items, AsListItem(o))
		}
		whole := httptest.NewRecorder()
		WriteJSON(whole, r, http.StatusOK, l.AppendJSON(nil))
		assert.Equal(t, whole.Body.Bytes(), streamed.Body.Bytes(), "%+v", c)
		assert.Equal(t, http.StatusOK, streamed.Code)
		assert.Equal(t, c.contentType, streamed.Header().Get("Content-Type"))
	}
}

// discard is a ResponseWriter that keeps nothing, like a socket.
type discard struct {
	h http.Header
	n int
}

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

// A LIST once cost memory in proportion to the whole
// list (145 MB for 50,000 objects). Streamed, it allocates about one
// buffer, whatever the list's size.
func TestWriteListAllocatesAboutOneBuffer(t *testing.T) {
	items := listItems(20000, 1024) // a 21 MB body
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	w := &discard{h: http.Header{}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items, nil)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Greater(t, w.n, 20<<20)
	assert.Less(t, allocated, uint64(w.n/20), "allocated %d bytes to write %d", allocated, w.n)
}

func BenchmarkWriteList(b *testing.B) {
	items := listItems(50000, 1024)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	b.ReportAllocs()
	for b.Loop() {
		WriteList(&discard{h: http.Header{}}, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items, nil)
	}
}

// A LIST whose client went away stops encoding at once.
func TestWriteListStopsWhenTheClientIsGone(t *testing.T) {
	items := listItems(1000, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx)
	w := &discard{h: http.Header{}}
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{}, items, nil)
	assert.Zero(t, w.n, "nothing encoded for a client that is gone")
}

// A stored item that does not fit its kind's schema is found before the
// first byte: the answer is the 500 Status a whole body would get.
func TestWriteListProtobufItemThatDoesNotFit(t *testing.T) {
	items := listItems(3, 10)
	bad := *items[1]
	bad.Fields = []api.Field{{Name: "data", Value: []byte(`5`)}}
	items[1] = &bad
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	r.Header.Set("Accept", ProtobufContentType)
	w := httptest.NewRecorder()
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{}, items, nil)
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Equal(t, ProtobufContentType, w.Header().Get("Content-Type"))
	js, err := ProtobufToJSON(w.Body.Bytes(), "v1", "Status")
	require.NoError(t, err)
	assert.Contains(t, string(js), `"reason":"InternalError"`)
	assert.Contains(t, string(js), ".data: expected an object")
}

// A protobuf LIST whose client went away stops encoding at once.
func TestWriteListProtobufStopsWhenTheClientIsGone(t *testing.T) {
	items := listItems(1000, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx)
	r.Header.Set("Accept", ProtobufContentType)
	w := &discard{h: http.Header{}}
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{}, items, nil)
	assert.Zero(t, w.n, "nothing encoded for a client that is gone")
}

func BenchmarkWriteListProtobuf(b *testing.B) {
	items := listItems(10000, 1024)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	r.Header.Set("Accept", ProtobufContentType)
	b.ReportAllocs()
	for b.Loop() {
		WriteList(&discard{h: http.Header{}}, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items, nil)
	}
}

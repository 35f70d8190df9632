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

func TestWriteListIsWhatWriteJSONWouldSend(t *testing.T) {
	items := listItems(300, 100)
	meta := api.ListMeta{ResourceVersion: "9"}
	for _, ua := range []string{"client-go", "curl/8"} { // compact, and pretty
		r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
		r.Header.Set("User-Agent", ua)
		streamed := httptest.NewRecorder()
		WriteList(streamed, r, "ConfigMapList", "v1", meta, items)

		l := api.List{Kind: "ConfigMapList", APIVersion: "v1", Metadata: meta}
		for _, o := range items {
			l.Items = append(l.Items, AsListItem(o))
		}
		whole := httptest.NewRecorder()
		WriteJSON(whole, r, http.StatusOK, l.AppendJSON(nil))
		assert.Equal(t, whole.Body.String(), streamed.Body.String(), ua)
		assert.Equal(t, http.StatusOK, streamed.Code)
		assert.Equal(t, JSONContentType, streamed.Header().Get("Content-Type"))
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
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items)
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
		WriteList(&discard{h: http.Header{}}, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items)
	}
}

// A LIST whose client went away stops encoding at once.
func TestWriteListStopsWhenTheClientIsGone(t *testing.T) {
	items := listItems(1000, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil).WithContext(ctx)
	w := &discard{h: http.Header{}}
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{}, items)
	assert.Zero(t, w.n, "nothing encoded for a client that is gone")
}

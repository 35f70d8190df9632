package negotiation

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// protobufList answers a protobuf LIST of items with enc.
func protobufList(t testing.TB, items []*api.Object, enc *ProtobufEncodings) []byte {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	r.Header.Set("Accept", ProtobufContentType+", application/json")
	w := httptest.NewRecorder()
	WriteList(w, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items, enc)
	require.Equal(t, http.StatusOK, w.Code)
	require.Equal(t, ProtobufContentType, w.Header().Get("Content-Type"))
	return w.Body.Bytes()
}

// With the cache, a LIST transcodes each item once (its size, kept) and
// writes it from the cache; the next LIST of the same objects transcodes
// none. The bytes are those of a LIST without it.
func TestProtobufEncodingsTranscodeOnce(t *testing.T) {
	const n = 300
	items := listItems(n, 100)
	want := protobufList(t, items, nil)
	enc := NewProtobufEncodings(DefaultProtobufCacheBytes)

	assert.Equal(t, want, protobufList(t, items, enc))
	st := enc.Stats()
	assert.Equal(t, ProtobufCacheStats{Budget: DefaultProtobufCacheBytes, Bytes: st.Bytes,
		Misses: n, Stored: n, Hits: n}, st, "first LIST: sized by transcoding, written from the cache")
	assert.Greater(t, st.Bytes, int64(n*(100+protobufEntryOverhead)))

	assert.Equal(t, want, protobufList(t, items, enc))
	st2 := enc.Stats()
	assert.Equal(t, st.Misses, st2.Misses, "second LIST: nothing transcoded")
	assert.Equal(t, st.Hits+2*n, st2.Hits)
	assert.Equal(t, st.Bytes, st2.Bytes)
	runtime.KeepAlive(items)
}

// Past its budget the cache keeps nothing more: the items it holds are
// the same every LIST, the others are transcoded twice, and the answer
// is the same.
func TestProtobufEncodingsBudget(t *testing.T) {
	const n = 100
	items := listItems(n, 200)
	want := protobufList(t, items, nil)
	one, ok := protobufItem(t, items[0])
	require.True(t, ok)
	budget := int64(10 * (len(one) + protobufEntryOverhead))
	enc := NewProtobufEncodings(budget)

	for range 2 {
		assert.Equal(t, want, protobufList(t, items, enc))
	}
	st := enc.Stats()
	assert.LessOrEqual(t, st.Bytes, budget)
	assert.Equal(t, int64(10), st.Stored, "the first ten are kept, and stay")
	assert.Equal(t, int64(10+2*10), st.Hits, "a kept item: in the first LIST's second pass, and both of the next one's")
	assert.Equal(t, int64(n+3*(n-10)), st.Misses, "every item in the first pass, the others in every pass")
	runtime.KeepAlive(items)
}

// protobufItem returns the encoding of o as a ConfigMapList item, as a
// cache of its own keeps it.
func protobufItem(t *testing.T, o *api.Object) ([]byte, bool) {
	enc := NewProtobufEncodings(DefaultProtobufCacheBytes)
	protobufList(t, []*api.Object{o}, enc)
	return enc.Load(o, "v1", "ConfigMapList")
}

// An encoding is for one kind of list, and only for the object it was
// made from: another object at the same address is not it.
func TestProtobufEncodingsKeyedByObjectAndKind(t *testing.T) {
	items := listItems(1, 10)
	enc := NewProtobufEncodings(DefaultProtobufCacheBytes)
	enc.Store(items[0], "v1", "ConfigMapList", []byte("pb"))
	pb, ok := enc.Load(items[0], "v1", "ConfigMapList")
	assert.True(t, ok)
	assert.Equal(t, []byte("pb"), pb)
	_, ok = enc.Load(items[0], "v1", "SecretList")
	assert.False(t, ok, "another kind")
	_, ok = enc.Load(listItems(1, 10)[0], "v1", "ConfigMapList")
	assert.False(t, ok, "an equal object is another object")
	var nilCache *ProtobufEncodings
	nilCache.Store(items[0], "v1", "ConfigMapList", []byte("pb"))
	_, ok = nilCache.Load(items[0], "v1", "ConfigMapList")
	assert.False(t, ok, "a nil cache keeps nothing")
	assert.Nil(t, NewProtobufEncodings(0))
	runtime.KeepAlive(items)
}

// An entry does not keep its object alive: once the object is collected,
// its entry goes and its bytes return to the budget.
func TestProtobufEncodingsGoWithTheirObjects(t *testing.T) {
	enc := NewProtobufEncodings(DefaultProtobufCacheBytes)
	func() {
		protobufList(t, listItems(50, 100), enc)
	}()
	require.Equal(t, int64(50), enc.Stats().Stored)
	// Cleanups run in their own goroutine some time after a collection
	// finds the objects unreachable: collect until they have run. The
	// hang guard turns an entry that keeps its object alive into a
	// failure instead of go test's timeout.
	guard := time.Now().Add(2 * time.Minute)
	for enc.Stats().Bytes != 0 {
		require.True(t, time.Now().Before(guard), "entries still hold %d bytes: something keeps their objects alive", enc.Stats().Bytes)
		runtime.GC()
		runtime.Gosched()
	}
	n := 0
	enc.entries.Range(func(any, any) bool { n++; return true })
	assert.Zero(t, n, "no entry left")
}

func BenchmarkWriteListProtobufCached(b *testing.B) {
	items := listItems(10000, 1024)
	enc := NewProtobufEncodings(DefaultProtobufCacheBytes)
	protobufList(b, items, enc)
	r := httptest.NewRequest(http.MethodGet, "/api/v1/configmaps", nil)
	r.Header.Set("Accept", ProtobufContentType)
	b.ReportAllocs()
	for b.Loop() {
		WriteList(&discard{h: http.Header{}}, r, "ConfigMapList", "v1", api.ListMeta{ResourceVersion: "9"}, items, enc)
	}
}

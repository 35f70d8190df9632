package protobuf_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api/protobuf"
	"listwatch/internal/fixtures"
)

// jsonItems serves a list's items from their JSON.
func jsonItems(items []json.RawMessage) protobuf.ListItems {
	return func(i int, dst []byte) ([]byte, error) { return append(dst, items[i]...), nil }
}

// The real server's streamed LIST answer, rebuilt item by item from its
// JSON, is the recording byte for byte.
func TestStreamingListIsTheRecording(t *testing.T) {
	s := protobuf.Default()
	body := fixtures.Read(t, "protobuf-list-configmaps.pb")
	env, js, err := s.DecodeObject(body, "", "")
	require.NoError(t, err)
	var l struct {
		Metadata json.RawMessage
		Items    []json.RawMessage
	}
	require.NoError(t, json.Unmarshal(js, &l))
	require.NotEmpty(t, l.Items)
	sl, err := s.NewStreamingList(env.APIVersion, env.Kind, l.Metadata, len(l.Items), jsonItems(l.Items), nil)
	require.NoError(t, err)
	var out bytes.Buffer
	n, err := sl.WriteTo(&out)
	require.NoError(t, err)
	assert.Equal(t, body, out.Bytes())
	assert.Equal(t, int64(len(body)), n)
	assert.Equal(t, len(body), sl.Size())
}

// countingWriter counts writes, and the items asked for before the first.
type countingWriter struct {
	bytes.Buffer
	writes, itemsBeforeFirst int
	asked                    *int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	if w.writes == 0 {
		w.itemsBeforeFirst = *w.asked
	}
	w.writes++
	return w.Buffer.Write(p)
}

// A list of many chunks is what encoding the whole list gives, and its
// first bytes are written long before its last item is transcoded.
func TestStreamingListIsTheWholeListStreamed(t *testing.T) {
	s := protobuf.Default()
	const n = 3000
	items := make([]json.RawMessage, n)
	for i := range items {
		// Sizes on both sides of a one-byte length (128).
		items[i] = json.RawMessage(fmt.Sprintf(`{"metadata":{"name":"cm-%d","namespace":"ns"},"data":{"k":%q}}`, i, strings.Repeat("x", i%300)))
	}
	meta := json.RawMessage(`{"resourceVersion":"42","continue":"abc","remainingItemCount":7}`)
	whole, err := json.Marshal(map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": meta, "items": items})
	require.NoError(t, err)
	want, err := s.EncodeObject("v1", "ConfigMapList", whole)
	require.NoError(t, err)

	asked := 0
	counted := func(i int, dst []byte) ([]byte, error) { asked++; return append(dst, items[i]...), nil }
	sl, err := s.NewStreamingList("v1", "ConfigMapList", meta, n, counted, nil)
	require.NoError(t, err)
	w := &countingWriter{asked: &asked}
	_, err = sl.WriteTo(w)
	require.NoError(t, err)
	assert.Equal(t, want, w.Bytes())
	assert.Greater(t, w.writes, 2, "written in chunks")
	assert.Less(t, w.itemsBeforeFirst, 2*n, "the first chunk is written before the last item is transcoded")
}

func TestStreamingListErrors(t *testing.T) {
	s := protobuf.Default()
	items := []json.RawMessage{json.RawMessage(`{"metadata":{"name":"a"}}`), json.RawMessage(`{"data":5}`)}
	_, err := s.NewStreamingList("v1", "ConfigMapList", []byte(`{}`), 2, jsonItems(items), nil)
	var fe *protobuf.FieldError
	require.ErrorAs(t, err, &fe, "an item that does not fit is found before anything is written")
	assert.Equal(t, ".data", fe.Path)

	_, err = s.NewStreamingList("v1", "ConfigMap", []byte(`{}`), 0, jsonItems(nil), nil)
	assert.Error(t, err, "not a list")
	_, err = s.NewStreamingList("example.com/v1", "WidgetList", []byte(`{}`), 0, jsonItems(nil), nil)
	assert.ErrorIs(t, err, protobuf.ErrUnknownKind)

	// The client goes away while the list is written: WriteTo stops with
	// the items' error.
	gone := errors.New("client gone")
	calls := 0
	items = []json.RawMessage{json.RawMessage(`{"metadata":{"name":"a"}}`), json.RawMessage(`{"metadata":{"name":"b"}}`)}
	sl, err := s.NewStreamingList("v1", "ConfigMapList", []byte(`{}`), 2, func(i int, dst []byte) ([]byte, error) {
		if calls++; calls > 3 {
			return nil, gone
		}
		return append(dst, items[i]...), nil
	}, nil)
	require.NoError(t, err)
	_, err = sl.WriteTo(&bytes.Buffer{})
	assert.ErrorIs(t, err, gone)

	// An item that changed between the passes no longer has the size the
	// envelope promised: an error, not a corrupt body.
	calls = 0
	sl, err = s.NewStreamingList("v1", "ConfigMapList", []byte(`{}`), 1, func(_ int, dst []byte) ([]byte, error) {
		calls++
		return fmt.Appendf(dst, `{"metadata":{"name":%q}}`, strings.Repeat("n", calls)), nil
	}, nil)
	require.NoError(t, err)
	_, err = sl.WriteTo(&bytes.Buffer{})
	assert.ErrorContains(t, err, "sized")
}

// mapCache is an ItemCache that keeps every item it is offered, or none.
type mapCache struct {
	keep  bool
	items map[int][]byte
}

func (c *mapCache) Load(i int) ([]byte, bool) { pb, ok := c.items[i]; return pb, ok }
func (c *mapCache) Store(i int, pb []byte) {
	if c.keep {
		c.items[i] = bytes.Clone(pb)
	}
}

// With a cache that keeps what it is offered, each item is transcoded
// once, in the first pass, and a second list of the same items transcodes
// none; with one that keeps nothing, twice, as without a cache. The bytes
// are the same every time.
func TestStreamingListWithACache(t *testing.T) {
	s := protobuf.Default()
	const n = 500
	items := make([]json.RawMessage, n)
	for i := range items {
		items[i] = json.RawMessage(fmt.Sprintf(`{"metadata":{"name":"cm-%d","namespace":"ns"},"data":{"k":%q}}`, i, strings.Repeat("y", i%200)))
	}
	meta := json.RawMessage(`{"resourceVersion":"42"}`)
	write := func(cache protobuf.ItemCache) (body []byte, asked int) {
		t.Helper()
		counted := func(i int, dst []byte) ([]byte, error) { asked++; return append(dst, items[i]...), nil }
		sl, err := s.NewStreamingList("v1", "ConfigMapList", meta, n, counted, cache)
		require.NoError(t, err)
		var out bytes.Buffer
		_, err = sl.WriteTo(&out)
		require.NoError(t, err)
		assert.Equal(t, sl.Size(), out.Len())
		return out.Bytes(), asked
	}
	want, asked := write(nil)
	assert.Equal(t, 2*n, asked, "no cache: every item transcoded twice")

	keeps := &mapCache{keep: true, items: map[int][]byte{}}
	got, asked := write(keeps)
	assert.Equal(t, want, got)
	assert.Equal(t, n, asked, "each item transcoded once")
	got, asked = write(keeps)
	assert.Equal(t, want, got)
	assert.Zero(t, asked, "a second list transcodes nothing")

	got, asked = write(&mapCache{items: map[int][]byte{}})
	assert.Equal(t, want, got)
	assert.Equal(t, 2*n, asked, "a cache that keeps nothing: twice")
}

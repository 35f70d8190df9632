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
	sl, err := s.NewStreamingList(env.APIVersion, env.Kind, l.Metadata, len(l.Items), jsonItems(l.Items))
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
	sl, err := s.NewStreamingList("v1", "ConfigMapList", meta, n, counted)
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
	_, err := s.NewStreamingList("v1", "ConfigMapList", []byte(`{}`), 2, jsonItems(items))
	var fe *protobuf.FieldError
	require.ErrorAs(t, err, &fe, "an item that does not fit is found before anything is written")
	assert.Equal(t, ".data", fe.Path)

	_, err = s.NewStreamingList("v1", "ConfigMap", []byte(`{}`), 0, jsonItems(nil))
	assert.Error(t, err, "not a list")
	_, err = s.NewStreamingList("example.com/v1", "WidgetList", []byte(`{}`), 0, jsonItems(nil))
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
	})
	require.NoError(t, err)
	_, err = sl.WriteTo(&bytes.Buffer{})
	assert.ErrorIs(t, err, gone)

	// An item that changed between the passes no longer has the size the
	// envelope promised: an error, not a corrupt body.
	calls = 0
	sl, err = s.NewStreamingList("v1", "ConfigMapList", []byte(`{}`), 1, func(_ int, dst []byte) ([]byte, error) {
		calls++
		return fmt.Appendf(dst, `{"metadata":{"name":%q}}`, strings.Repeat("n", calls)), nil
	})
	require.NoError(t, err)
	_, err = sl.WriteTo(&bytes.Buffer{})
	assert.ErrorContains(t, err, "sized")
}

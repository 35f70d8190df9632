package api

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListWriterMatchesAppendJSON(t *testing.T) {
	remaining := int64(7)
	for _, n := range []int{0, 1, 3, 500} {
		items := make([]*Object, n)
		for i := range items {
			items[i] = &Object{Metadata: ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: "ns", ResourceVersion: "5"},
				Fields: []Field{{Name: "data", Value: []byte(`{"k":"` + strings.Repeat("v", i) + `"}`)}}}
		}
		l := List{Kind: "ConfigMapList", APIVersion: "v1",
			Metadata: ListMeta{ResourceVersion: "9", Continue: "tok", RemainingItemCount: &remaining}, Items: items}
		for _, chunk := range []int{0, 1, 100} {
			var got countingBuffer
			lw := NewListWriter(&got, l.Kind, l.APIVersion, l.Metadata, chunk)
			for _, o := range items {
				require.NoError(t, lw.Item(o))
			}
			require.NoError(t, lw.Close())
			assert.Equal(t, string(l.AppendJSON(nil))+"\n", got.String(), "%d items, chunk %d", n, chunk)
			if chunk == 1 {
				assert.Equal(t, n+1, got.writes, "one write per item and one for the end")
			}
		}
	}
}

func TestListWriterStopsAtTheFirstWriteError(t *testing.T) {
	gone := errors.New("client went away")
	w := &failingWriter{err: gone}
	lw := NewListWriter(w, "ConfigMapList", "v1", ListMeta{}, 1)
	require.ErrorIs(t, lw.Item(&Object{}), gone)
	require.ErrorIs(t, lw.Item(&Object{}), gone)
	require.ErrorIs(t, lw.Close(), gone)
	assert.Equal(t, 1, w.calls, "nothing more is written once the client is gone")
}

type countingBuffer struct {
	bytes.Buffer
	writes int
}

func (c *countingBuffer) Write(p []byte) (int, error) { c.writes++; return c.Buffer.Write(p) }

type failingWriter struct {
	err   error
	calls int
}

func (f *failingWriter) Write([]byte) (int, error) { f.calls++; return 0, f.err }

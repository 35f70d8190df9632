package informer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/fifo"
)

// snapshotter records each handler call together with what the cache
// holds at that moment, as "key@rv" sorted.
type snapshotter struct {
	cache *Indexer
	lines []string
}

func (s *snapshotter) note(call string) {
	var held []string
	for _, o := range s.cache.List() {
		held = append(held, o.Key()+"@"+o.Metadata.ResourceVersion)
	}
	s.lines = append(s.lines, fmt.Sprintf("%s | cache %s", call, strings.Join(held, " ")))
}

func (s *snapshotter) OnAdd(o *api.Object, initial bool) {
	s.note(fmt.Sprintf("add %s@%s initial=%t", o.Key(), o.Metadata.ResourceVersion, initial))
}

func (s *snapshotter) OnUpdate(old, o *api.Object) {
	s.note(fmt.Sprintf("update %s %s→%s", o.Key(), old.Metadata.ResourceVersion, o.Metadata.ResourceVersion))
}

func (s *snapshotter) OnDelete(obj any) {
	key, _ := fifo.KeyOf(obj)
	s.note(fmt.Sprintf("delete %s (%T)", key, obj))
}

func TestProcessDeltasEveryType(t *testing.T) {
	cache := NewIndexer(nil, nil)
	h := &snapshotter{cache: cache}
	steps := []struct {
		d       fifo.Delta
		initial bool
		want    string
	}{
		{fifo.Delta{Type: fifo.ReplacedAll, Object: fifo.ReplacedAllInfo{ResourceVersion: "2",
			Objects: []*api.Object{cm("ns", "a", "1"), cm("ns", "b", "2")}}}, true, ""},
		{fifo.Delta{Type: fifo.Added, Object: cm("ns", "c", "3")}, false, "add ns/c@3 initial=false | cache ns/a@1 ns/b@2 ns/c@3"},
		{fifo.Delta{Type: fifo.Updated, Object: cm("ns", "a", "4")}, false, "update ns/a 1→4 | cache ns/a@4 ns/b@2 ns/c@3"},
		{fifo.Delta{Type: fifo.Deleted, Object: cm("ns", "c", "5")}, false, "delete ns/c (*api.Object) | cache ns/a@4 ns/b@2"},
		{fifo.Delta{Type: fifo.Bookmark, Object: fifo.BookmarkInfo{ResourceVersion: "6"}}, false, ""},
		{fifo.Delta{Type: fifo.SyncAll, Object: fifo.SyncAllInfo{}}, false, "update ns/a 4→4 | cache ns/a@4 ns/b@2"},
		{fifo.Delta{Type: fifo.Sync, Object: cm("ns", "b", "2")}, false, "update ns/b 2→2 | cache ns/a@4 ns/b@2"},
		{fifo.Delta{Type: fifo.Replaced, Object: cm("ns", "d", "7")}, false, "add ns/d@7 initial=false | cache ns/a@4 ns/b@2 ns/d@7"},
		{fifo.Delta{Type: fifo.Deleted, Object: fifo.DeletedFinalStateUnknown{Key: "ns/d"}}, false,
			"delete ns/d (fifo.DeletedFinalStateUnknown) | cache ns/a@4 ns/b@2"},
	}
	for _, st := range steps {
		h.lines = nil
		require.NoError(t, ProcessDeltas(cache, h, fifo.Deltas{st.d}, st.initial), st.d.Type)
		if st.d.Type == fifo.Bookmark {
			assert.Equal(t, "6", cache.ResourceVersion())
			continue
		}
		if st.want != "" {
			assert.Equal(t, st.want, h.lines[0], st.d.Type)
		}
	}
}

// The point of AtomicFIFO: during a re-list's calls the cache already
// holds the whole list (a state the server had at the list's
// resourceVersion), deletions come first, then the list in list order.
func TestProcessDeltasReplacedAllSwapsTheCacheFirst(t *testing.T) {
	cache := NewIndexer(nil, nil)
	require.NoError(t, cache.Replace([]*api.Object{cm("ns", "a", "1"), cm("ns", "b", "2"), cm("ns", "c", "3")}, "3"))
	h := &snapshotter{cache: cache}
	require.NoError(t, ProcessDeltas(cache, h, fifo.Deltas{{Type: fifo.ReplacedAll, Object: fifo.ReplacedAllInfo{
		ResourceVersion: "9", Objects: []*api.Object{cm("ns", "c", "8"), cm("ns", "a", "1"), cm("ns", "d", "9")},
	}}}, false))
	const now = " | cache ns/a@1 ns/c@8 ns/d@9"
	assert.Equal(t, []string{
		"delete ns/b (fifo.DeletedFinalStateUnknown)" + now,
		"update ns/c 3→8" + now,
		"update ns/a 1→1" + now,
		"add ns/d@9 initial=false" + now,
	}, h.lines)
	assert.Equal(t, "9", cache.ResourceVersion())
}

func TestProcessDeltasRejectsMalformedDeltas(t *testing.T) {
	cache := NewIndexer(nil, nil)
	h := &snapshotter{cache: cache}
	for _, d := range []fifo.Delta{
		{Type: fifo.Added, Object: "nope"},
		{Type: fifo.Deleted, Object: 42},
		{Type: fifo.ReplacedAll, Object: cm("ns", "a", "1")},
		{Type: fifo.Bookmark, Object: nil},
		{Type: "Teleported", Object: cm("ns", "a", "1")},
		{Type: fifo.ReplacedAll, Object: fifo.ReplacedAllInfo{Objects: []*api.Object{nil}}},
	} {
		assert.Error(t, ProcessDeltas(cache, h, fifo.Deltas{d}, false), d.Type)
	}
	assert.Empty(t, h.lines, "nothing was told")
	assert.Equal(t, 0, cache.Len())
}

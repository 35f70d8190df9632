package fifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestRealFIFOKeepsEveryDeltaInOrder(t *testing.T) {
	q := NewRealFIFO(Options{})
	require.NoError(t, q.Add(obj("a", "1")))
	require.NoError(t, q.Update(obj("a", "2")))
	require.NoError(t, q.Delete(obj("a", "3")))
	require.NoError(t, q.Delete(obj("a", "3"))) // not deduplicated either
	require.NoError(t, q.Delete(obj("never-seen", "4")))
	assert.Equal(t, 5, q.Len())
	p := q.Pending()
	assert.Equal(t, []string{"1", "2", "3", "3", "4"}, rvs(p))
	p[0] = Delta{} // a copy
	for _, want := range []Delta{{Added, obj("a", "1")}, {Updated, obj("a", "2")}, {Deleted, obj("a", "3")}} {
		assert.Equal(t, Deltas{want}, pop(t, q).deltas)
	}
}

func TestRealFIFOReplaceTombstones(t *testing.T) {
	cases := []struct {
		name  string
		known KnownObjects
		ops   func(q *RealFIFO)
		list  []*api.Object
		want  Deltas
	}{
		{
			name: "tombstones come before the Replaced deltas",
			ops: func(q *RealFIFO) {
				_ = q.Add(obj("gone", "1"))
				_ = q.Update(obj("gone", "2"))
			},
			list: []*api.Object{obj("kept", "3")},
			want: Deltas{
				{Added, obj("gone", "1")}, {Updated, obj("gone", "2")},
				{Deleted, tomb("gone", obj("gone", "2"))},
				{Replaced, obj("kept", "3")},
			},
		},
		{
			name: "a queued key already ending in Deleted gets no tombstone",
			ops: func(q *RealFIFO) {
				_ = q.Add(obj("gone", "1"))
				_ = q.Delete(obj("gone", "2"))
			},
			want: Deltas{{Added, obj("gone", "1")}, {Deleted, obj("gone", "2")}},
		},
		{
			name:  "cached keys missing from the list, unless queued",
			known: newKnown(obj("cached", "1"), obj("queued", "1"), obj("kept", "1")),
			ops:   func(q *RealFIFO) { _ = q.Delete(obj("queued", "2")) },
			list:  []*api.Object{obj("kept", "3")},
			want: Deltas{
				{Deleted, obj("queued", "2")},
				{Deleted, tomb("cached", obj("cached", "1"))},
				{Replaced, obj("kept", "3")},
			},
		},
		{
			name:  "a key the cache lists but cannot return gets an empty tombstone",
			known: listOnly{"default/vanished"},
			want:  Deltas{{Deleted, DeletedFinalStateUnknown{Key: "default/vanished"}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := NewRealFIFO(Options{KnownObjects: c.known})
			if c.ops != nil {
				c.ops(q)
			}
			require.NoError(t, q.Replace(c.list, "9"))
			got := popAll(t, q)
			for _, d := range got {
				require.Len(t, d, 1, "RealFIFO pops one delta at a time")
			}
			assert.Equal(t, c.want, flatten(got))
		})
	}
}

// The first Replace's initial list is everything queued after it, including
// what was queued before (for RealFIFO that can only be Resync output).
func TestRealFIFOInitialListIsTheWholeQueue(t *testing.T) {
	q := NewRealFIFO(Options{KnownObjects: newKnown(obj("a", "1"))})
	require.NoError(t, q.Resync())
	require.NoError(t, q.Replace([]*api.Object{obj("a", "2")}, "2"))
	assert.True(t, pop(t, q).initial)
	assert.False(t, q.HasSynced())
	assert.True(t, pop(t, q).initial)
	assert.True(t, q.HasSynced())
}

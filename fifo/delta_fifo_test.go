package fifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestDedupDeltas(t *testing.T) {
	real1, real2 := obj("foo", "1"), obj("foo", "2")
	ts1, ts2 := tomb("foo", real1), tomb("foo", real2)
	cases := []struct {
		name     string
		in, want Deltas
	}{
		{"real then tombstone keeps the real one",
			Deltas{{Deleted, real1}, {Deleted, ts2}}, Deltas{{Deleted, real1}}},
		{"tombstone then real keeps the real one",
			Deltas{{Deleted, ts1}, {Deleted, real2}}, Deltas{{Deleted, real2}}},
		{"two real deletes keep the first",
			Deltas{{Deleted, real1}, {Deleted, real2}}, Deltas{{Deleted, real1}}},
		{"two tombstones keep the newer",
			Deltas{{Deleted, ts1}, {Deleted, ts2}}, Deltas{{Deleted, ts2}}},
		{"updates are never merged",
			Deltas{{Updated, real1}, {Updated, real2}}, Deltas{{Updated, real1}, {Updated, real2}}},
		{"a re-create between deletes keeps all",
			Deltas{{Deleted, real1}, {Added, real2}, {Deleted, real2}}, Deltas{{Deleted, real1}, {Added, real2}, {Deleted, real2}}},
		{"only the newest pair is looked at",
			Deltas{{Deleted, real1}, {Deleted, real2}, {Added, real2}}, Deltas{{Deleted, real1}, {Deleted, real2}, {Added, real2}}},
		{"one delta", Deltas{{Deleted, real1}}, Deltas{{Deleted, real1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, dedupDeltas(c.in))
		})
	}
}

// A watch DELETED followed by a re-list that lacks the object reports one
// deletion: the consumer gets one Deleted, with the real final state.
func TestDeltaFIFOCollapsesConsecutiveDeletes(t *testing.T) {
	q := NewDeltaFIFO(Options{KnownObjects: newKnown(obj("foo", "1"))})
	require.NoError(t, q.Delete(obj("foo", "2")))
	require.NoError(t, q.Replace(nil, "3"))
	assert.Equal(t, []Deltas{{{Deleted, obj("foo", "2")}}}, popAll(t, q))
}

func TestDeltaFIFOKeyKeepsItsPlace(t *testing.T) {
	q := NewDeltaFIFO(Options{})
	require.NoError(t, q.Add(obj("a", "1")))
	require.NoError(t, q.Add(obj("b", "2")))
	require.NoError(t, q.Update(obj("a", "3")))
	require.NoError(t, q.Delete(obj("a", "4")))
	require.NoError(t, q.Add(obj("c", "5")))
	assert.Equal(t, []string{"default/a", "default/b", "default/c"}, q.ListKeys())
	assert.Equal(t, 3, q.Len())

	d, ok := q.Get("default/a")
	require.True(t, ok)
	assert.Equal(t, Deltas{{Added, obj("a", "1")}, {Updated, obj("a", "3")}, {Deleted, obj("a", "4")}}, d)
	d[0] = Delta{} // Get hands out a copy
	assert.Equal(t, []string{"1", "3", "4"}, rvs(pop(t, q).deltas))

	// Once popped, a key that comes back goes to the back of the line.
	require.NoError(t, q.Add(obj("a", "6")))
	assert.Equal(t, []string{"default/b", "default/c", "default/a"}, q.ListKeys())
	_, ok = q.Get("default/zzz")
	assert.False(t, ok)
}

func TestDeltaFIFODeleteOfUnknownKeyIsIgnored(t *testing.T) {
	t.Run("without KnownObjects only queued keys count", func(t *testing.T) {
		q := NewDeltaFIFO(Options{})
		require.NoError(t, q.Delete(obj("ghost", "1")))
		assert.Equal(t, 0, q.Len())
		assert.True(t, q.HasSynced(), "a Delete still counts as populating")
		require.NoError(t, q.Add(obj("foo", "1")))
		require.NoError(t, q.Delete(obj("foo", "2")))
		assert.Equal(t, []string{"1", "2"}, rvs(pop(t, q).deltas))
	})
	t.Run("with KnownObjects cached keys count too", func(t *testing.T) {
		q := NewDeltaFIFO(Options{KnownObjects: newKnown(obj("cached", "1"))})
		require.NoError(t, q.Delete(obj("cached", "2")))
		require.NoError(t, q.Delete(obj("ghost", "1")))
		assert.Equal(t, []string{"default/cached"}, q.ListKeys())
	})
}

func TestDeltaFIFOReplaceTombstones(t *testing.T) {
	cases := []struct {
		name  string
		known KnownObjects
		ops   func(q *DeltaFIFO)
		list  []*api.Object
		want  []Deltas
	}{
		{
			name: "queued key missing from the list: tombstone with the newest queued object",
			ops: func(q *DeltaFIFO) {
				_ = q.Add(obj("gone", "1"))
				_ = q.Update(obj("gone", "2"))
			},
			list: []*api.Object{obj("kept", "3")},
			want: []Deltas{
				{{Added, obj("gone", "1")}, {Updated, obj("gone", "2")}, {Deleted, tomb("gone", obj("gone", "2"))}},
				{{Replaced, obj("kept", "3")}},
			},
		},
		{
			name:  "cached key missing from the list: tombstone with the cached object",
			known: newKnown(obj("kept", "1"), obj("gone", "2")),
			list:  []*api.Object{obj("kept", "3")},
			want: []Deltas{
				{{Replaced, obj("kept", "3")}},
				{{Deleted, tomb("gone", obj("gone", "2"))}},
			},
		},
		{
			name:  "queued beats cached: deleted and re-created while queued",
			known: newKnown(obj("bar", "6")),
			ops: func(q *DeltaFIFO) {
				_ = q.Delete(obj("bar", "6"))
				_ = q.Add(obj("bar", "100"))
			},
			list: nil,
			want: []Deltas{
				{{Deleted, obj("bar", "6")}, {Added, obj("bar", "100")}, {Deleted, tomb("bar", obj("bar", "100"))}},
			},
		},
		{
			name: "queued tombstone is not wrapped twice, and not repeated",
			ops: func(q *DeltaFIFO) {
				_ = q.Add(obj("gone", "1"))
				_ = q.Replace(nil, "2")
			},
			list: nil,
			want: []Deltas{
				{{Added, obj("gone", "1")}, {Deleted, tomb("gone", obj("gone", "1"))}},
			},
		},
		{
			name:  "a key the cache lists but cannot return gets an empty tombstone",
			known: listOnly{"default/vanished"},
			list:  nil,
			want:  []Deltas{{{Deleted, DeletedFinalStateUnknown{Key: "default/vanished"}}}},
		},
		{
			name:  "cached and listed: no tombstone",
			known: newKnown(obj("kept", "1")),
			list:  []*api.Object{obj("kept", "1")},
			want:  []Deltas{{{Replaced, obj("kept", "1")}}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := NewDeltaFIFO(Options{KnownObjects: c.known})
			if c.ops != nil {
				c.ops(q)
			}
			require.NoError(t, q.Replace(c.list, "9"))
			assert.Equal(t, c.want, popAll(t, q))
		})
	}
}

// client-go's TestDeltaFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue:
// however many Replaces run, a key gets exactly one Deleted.
func TestDeltaFIFOReplaceDeletesOnce(t *testing.T) {
	o, o2 := obj("foo", "2"), obj("foo", "3")
	cases := []struct {
		name string
		ops  func(q *DeltaFIFO)
		want Deltas
	}{
		{"added then replaced away", func(q *DeltaFIFO) {
			_ = q.Add(o)
			_ = q.Replace(nil, "0")
		}, Deltas{{Added, o}, {Deleted, tomb("foo", o)}}},
		{"replaced, then replaced away", func(q *DeltaFIFO) {
			_ = q.Add(o)
			_ = q.Replace([]*api.Object{o}, "0")
			_ = q.Replace(nil, "0")
		}, Deltas{{Added, o}, {Replaced, o}, {Deleted, tomb("foo", o)}}},
		{"deleted, then replaced away", func(q *DeltaFIFO) {
			_ = q.Add(o)
			_ = q.Delete(o)
			_ = q.Replace(nil, "0")
		}, Deltas{{Added, o}, {Deleted, o}}},
		{"replaced away twice", func(q *DeltaFIFO) {
			_ = q.Add(o)
			_ = q.Replace(nil, "0")
			_ = q.Replace(nil, "1")
		}, Deltas{{Added, o}, {Deleted, tomb("foo", o)}}},
		{"added, deleted, added, replaced away", func(q *DeltaFIFO) {
			_ = q.Add(o)
			_ = q.Delete(o)
			_ = q.Add(o2)
			_ = q.Replace(nil, "0")
		}, Deltas{{Added, o}, {Deleted, o}, {Added, o2}, {Deleted, tomb("foo", o2)}}},
	}
	for _, c := range cases {
		for _, known := range []KnownObjects{nil, newKnown()} {
			t.Run(c.name, func(t *testing.T) {
				q := NewDeltaFIFO(Options{KnownObjects: known})
				c.ops(q)
				assert.Equal(t, []Deltas{c.want}, popAll(t, q))
			})
		}
	}
}

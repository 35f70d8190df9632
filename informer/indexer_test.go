package informer

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/fifo"
)

func labelled(ns, name, rv string, labels map[string]string) *api.Object {
	o := cm(ns, name, rv)
	o.Metadata.Labels = labels
	return o
}

// byLabelValues indexes an object under each of its label values.
func byLabelValues(o *api.Object) ([]string, error) {
	var out []string
	for _, v := range o.Metadata.Labels {
		out = append(out, v)
	}
	return out, nil
}

func TestIndexerKeepsIndexesInStep(t *testing.T) {
	x := NewIndexer(Indexers{"app": func(o *api.Object) ([]string, error) {
		if app, ok := o.Metadata.Labels["app"]; ok {
			return []string{app}, nil
		}
		return nil, nil
	}}, nil)
	require.NoError(t, x.Add(labelled("default", "a", "1", map[string]string{"app": "web"})))
	require.NoError(t, x.Add(labelled("default", "b", "2", map[string]string{"app": "db"})))
	require.NoError(t, x.Add(labelled("other", "c", "3", map[string]string{"app": "web"})))

	assert.Equal(t, []string{"default/a", "default/b", "other/c"}, x.ListKeys())
	assert.Equal(t, []string{"db", "web"}, x.ListIndexFuncValues("app"))
	assert.Equal(t, []string{"default", "other"}, x.ListIndexFuncValues(NamespaceIndex))
	keys, err := x.IndexKeys("app", "web")
	require.NoError(t, err)
	assert.Equal(t, []string{"default/a", "other/c"}, keys)

	// An update moves the key between index values.
	require.NoError(t, x.Update(labelled("default", "a", "4", map[string]string{"app": "db"})))
	keys, _ = x.IndexKeys("app", "web")
	assert.Equal(t, []string{"other/c"}, keys)
	dbs, err := x.ByIndex("app", "db")
	require.NoError(t, err)
	require.Len(t, dbs, 2)
	assert.Equal(t, "4", dbs[0].Metadata.ResourceVersion)

	// A delete removes it everywhere; an emptied value disappears.
	require.NoError(t, x.Delete(cm("other", "c", "5")))
	assert.Equal(t, []string{"db"}, x.ListIndexFuncValues("app"))
	assert.Equal(t, []string{"default"}, x.ListIndexFuncValues(NamespaceIndex))
	_, ok := x.GetByKey("other/c")
	assert.False(t, ok)

	sameNS, err := x.Index(NamespaceIndex, cm("default", "anything", ""))
	require.NoError(t, err)
	assert.Len(t, sameNS, 2)

	// Replace rebuilds from scratch.
	require.NoError(t, x.Replace([]*api.Object{labelled("z", "only", "9", map[string]string{"app": "cache"})}, "9"))
	assert.Equal(t, []string{"cache"}, x.ListIndexFuncValues("app"))
	assert.Equal(t, []string{"z"}, x.ListIndexFuncValues(NamespaceIndex))
	assert.Equal(t, 1, x.Len())
	got, ok := x.Get(cm("z", "only", ""))
	require.True(t, ok)
	assert.Equal(t, "9", got.Metadata.ResourceVersion)
}

func TestIndexerMultiValuedIndex(t *testing.T) {
	x := NewIndexer(Indexers{"values": byLabelValues}, nil)
	require.NoError(t, x.Add(labelled("ns", "a", "1", map[string]string{"x": "red", "y": "blue"})))
	require.NoError(t, x.Add(labelled("ns", "b", "1", map[string]string{"x": "blue"})))
	keys, _ := x.IndexKeys("values", "blue")
	assert.Equal(t, []string{"ns/a", "ns/b"}, keys)
	require.NoError(t, x.Update(labelled("ns", "a", "2", map[string]string{"x": "green"})))
	assert.Equal(t, []string{"blue", "green"}, x.ListIndexFuncValues("values"))
}

func TestIndexerRejectsBadInputWithoutPanicking(t *testing.T) {
	failing := errors.New("index function broke")
	x := NewIndexer(Indexers{"broken": func(o *api.Object) ([]string, error) {
		if o.Metadata.Name == "bad" {
			return nil, failing
		}
		return []string{"ok"}, nil
	}}, nil)

	assert.ErrorIs(t, x.Add(nil), fifo.ErrNoKey)
	assert.ErrorIs(t, x.Add(cm("ns", "", "1")), fifo.ErrNoKey)
	assert.ErrorIs(t, x.Delete(nil), fifo.ErrNoKey)
	assert.ErrorIs(t, x.Replace([]*api.Object{cm("ns", "a", "1"), nil}, "1"), fifo.ErrNoKey)
	assert.Zero(t, x.Len(), "a refused Replace changes nothing")

	err := x.Add(cm("ns", "bad", "1"))
	assert.ErrorIs(t, err, failing)
	_, ok := x.GetByKey("ns/bad")
	assert.True(t, ok, "the object is cached even though one index failed")
	keys, _ := x.IndexKeys(NamespaceIndex, "ns")
	assert.Equal(t, []string{"ns/bad"}, keys, "the other indexes are right")
	assert.Empty(t, x.ListIndexFuncValues("broken"))
	require.NoError(t, x.Delete(cm("ns", "bad", "2")))

	_, err = x.ByIndex("nope", "x")
	assert.Error(t, err)
	_, err = x.IndexKeys("nope", "x")
	assert.Error(t, err)
	_, err = x.Index("nope", cm("ns", "a", ""))
	assert.Error(t, err)
	_, ok = x.Get(nil)
	assert.False(t, ok)
}

func TestAddIndexersRefusedOnceItemsExist(t *testing.T) {
	x := NewIndexer(nil, nil)
	assert.ErrorContains(t, x.AddIndexers(Indexers{NamespaceIndex: MetaNamespaceIndexFunc}), "already exists")
	assert.Error(t, x.AddIndexers(Indexers{"nil": nil}))
	require.NoError(t, x.AddIndexers(Indexers{"values": byLabelValues}))
	assert.Contains(t, x.GetIndexers(), "values")
	require.NoError(t, x.Add(labelled("ns", "a", "1", map[string]string{"k": "v"})))
	assert.ErrorContains(t, x.AddIndexers(Indexers{"late": byLabelValues}), "already holds 1 objects")
	keys, _ := x.IndexKeys("values", "v")
	assert.Equal(t, []string{"ns/a"}, keys)
}

func TestIndexerIsSafeForConcurrentUse(t *testing.T) {
	x := NewIndexer(Indexers{"values": byLabelValues}, nil)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				o := labelled("ns", fmt.Sprintf("o%d", i%20), fmt.Sprint(i), map[string]string{"w": fmt.Sprint(w)})
				if i%3 == 0 {
					_ = x.Delete(o)
				} else {
					_ = x.Update(o)
				}
				_, _ = x.ByIndex("values", "1")
				_ = x.List()
			}
		})
	}
	wg.Wait()
	// Every key left is in exactly the index value of its object.
	for _, o := range x.List() {
		keys, err := x.IndexKeys("values", o.Metadata.Labels["w"])
		require.NoError(t, err)
		assert.Contains(t, keys, o.Key())
	}
	total := 0
	for _, v := range x.ListIndexFuncValues("values") {
		keys, _ := x.IndexKeys("values", v)
		total += len(keys)
	}
	assert.Equal(t, x.Len(), total, "no stale index entries")
}

func TestRingGrowsAndKeepsOrder(t *testing.T) {
	r := newRing(2)
	next := 0
	for i := range 1000 {
		r.write(notification{kind: addNotification, newObj: cm("ns", fmt.Sprint(i), "")})
		if i%3 == 0 { // interleave reads so the contents wrap around
			n, ok := r.read()
			require.True(t, ok)
			assert.Equal(t, fmt.Sprint(next), n.newObj.Metadata.Name)
			next++
		}
	}
	for r.len() > 0 {
		n, _ := r.read()
		assert.Equal(t, fmt.Sprint(next), n.newObj.Metadata.Name)
		next++
	}
	assert.Equal(t, 1000, next)
	_, ok := r.read()
	assert.False(t, ok)
}

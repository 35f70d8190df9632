package fifo

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func newAtomic(unlock bool) *RealFIFO {
	return NewRealFIFO(Options{Atomic: true, UnlockWhileProcessing: unlock})
}

// An atomic Replace is one ReplacedAll delta behind whatever was queued
// before it; the queue computes no tombstones and ignores KnownObjects.
func TestAtomicReplaceQueuesOneReplacedAll(t *testing.T) {
	q := NewRealFIFO(Options{Atomic: true, KnownObjects: newKnown(obj("cached", "1"))})
	require.NoError(t, q.Add(obj("gone", "1")))
	list := []*api.Object{obj("kept", "3"), obj("new", "4")}
	require.NoError(t, q.Replace(list, "9"))
	list[0] = nil // Replace kept its own copy of the slice
	got := flatten(popAll(t, q))
	assert.Equal(t, Deltas{
		{Added, obj("gone", "1")},
		{ReplacedAll, ReplacedAllInfo{ResourceVersion: "9", Objects: []*api.Object{obj("kept", "3"), obj("new", "4")}}},
	}, got)
}

func TestAtomicReplaceRefusesABadListWhole(t *testing.T) {
	q := newAtomic(false)
	require.ErrorIs(t, q.Replace([]*api.Object{obj("a", "1"), nil}, "2"), ErrNoKey)
	assert.Equal(t, 0, q.Len())
	assert.False(t, q.HasSynced())
}

func TestAtomicResyncAndBookmark(t *testing.T) {
	q := newAtomic(true)
	require.NoError(t, q.Resync())
	require.NoError(t, q.Bookmark("7"))
	assert.Equal(t, Deltas{
		{SyncAll, SyncAllInfo{}},
		{Bookmark, BookmarkInfo{ResourceVersion: "7"}},
	}, flatten(popAll(t, q)))

	// The older RealFIFO takes no bookmarks: nothing would keep them in
	// step with a re-list's separate deltas.
	old := NewRealFIFO(Options{})
	require.NoError(t, old.Bookmark("7"))
	assert.Equal(t, 0, old.Len())
}

// The first ReplacedAll is the whole initial list: HasSynced turns true
// once it has been processed, not when it is taken off the queue.
func TestAtomicHasSyncedAfterTheReplacedAllIsProcessed(t *testing.T) {
	for _, unlock := range []bool{false, true} {
		q := newAtomic(unlock)
		require.NoError(t, q.Replace([]*api.Object{obj("a", "1"), obj("b", "2")}, "2"))
		assert.Equal(t, 1, q.Len())
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		require.NoError(t, q.Pop(ctx, func(d Deltas, initial bool) error {
			assert.True(t, initial)
			select { // not HasSynced: the lock may be held
			case <-q.Synced():
				t.Error("synced while still processing the initial list")
			default:
			}
			return nil
		}))
		cancel()
		assert.True(t, q.HasSynced())
		require.NoError(t, q.Add(obj("c", "3")))
		assert.False(t, pop(t, q).initial)
	}
}

// With UnlockWhileProcessing the Reflector can queue while the consumer
// is busy; the delta it queues is handed out by the next Pop.
func TestUnlockWhileProcessingLetsWritersIn(t *testing.T) {
	q := newAtomic(true)
	require.NoError(t, q.Add(obj("a", "1")))
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	require.NoError(t, q.Pop(ctx, func(Deltas, bool) error {
		added := make(chan error)
		go func() { added <- q.Add(obj("b", "2")) }()
		select {
		case err := <-added:
			return err
		case <-ctx.Done():
			t.Error("Add blocked while the consumer was processing")
			return ctx.Err()
		}
	}))
	assert.Equal(t, Deltas{{Added, obj("b", "2")}}, pop(t, q).deltas)
}

// Without Atomic the option is ignored: the older RealFIFO reads the
// consumer's cache in Replace, so it must keep the consumer out meanwhile.
func TestUnlockWhileProcessingNeedsAtomic(t *testing.T) {
	q := NewRealFIFO(Options{UnlockWhileProcessing: true})
	assert.False(t, q.unlockWhileProcessing)
	assert.True(t, newAtomic(true).unlockWhileProcessing)
	assert.False(t, newAtomic(false).unlockWhileProcessing)
}

// A process that panics leaves the queue locked exactly once, so the
// queue stays usable after the panic is recovered.
func TestUnlockWhileProcessingSurvivesAPanic(t *testing.T) {
	q := newAtomic(true)
	require.NoError(t, q.Add(obj("a", "1")))
	func() {
		defer func() { assert.NotNil(t, recover()) }()
		_ = q.Pop(context.Background(), func(Deltas, bool) error { panic("handler bug") })
	}()
	require.NoError(t, q.Add(obj("b", "2")))
	assert.Equal(t, 1, q.Len())
}

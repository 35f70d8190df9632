package fifo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// "Relist treated as resync" (client-go tools/cache/delta_fifo.go, the
// Replaced DeltaType and its comment): Replace used to queue Sync
// deltas, which a shared informer delivers only to handlers due for a
// resync. An object that changed while the watch was down (cached at rv 1,
// listed at rv 2) was then never reported as updated to the others. A
// re-list must say Replaced, a resync Sync, so the consumer can tell
// "maybe changed" from "unchanged".
func TestRelistIsNotResync(t *testing.T) {
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			known := newKnown(obj("foo", "1"))
			q := k.new(Options{KnownObjects: known})
			require.NoError(t, q.Replace([]*api.Object{obj("foo", "2")}, "2"))
			assert.Equal(t, Deltas{{Replaced, obj("foo", "2")}}, pop(t, q).deltas,
				"a relist must not look like a resync")

			require.NoError(t, q.Resync())
			assert.Equal(t, Deltas{{Sync, obj("foo", "1")}}, pop(t, q).deltas,
				"a resync replays the cached object as Sync")
		})
	}
}

// "Replace dropping a Sync after a Delete" (client-go
// tools/cache/delta_fifo.go, Replace, which queues Replaced whatever the
// key's newest delta): DeltaFIFO once refused to queue a Sync for a key whose
// newest delta was Deleted, to stop a resync from re-creating a deleted
// object. Replace queued Syncs too, so an object deleted and re-created
// while disconnected came out of the re-list as just [Deleted]: the
// informer removed it and never learned of the new one. Replace must always
// append; only Resync skips keys with deltas queued.
func TestReplaceKeepsReplacedAfterDelete(t *testing.T) {
	oldObj, newObj := obj("foo", "1"), obj("foo", "2")
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			q := k.new(Options{KnownObjects: newKnown(oldObj)})
			require.NoError(t, q.Delete(oldObj))
			require.NoError(t, q.Replace([]*api.Object{newObj}, "2"))
			assert.Equal(t, Deltas{{Deleted, oldObj}, {Replaced, newObj}}, flatten(popAll(t, q)))
		})
		t.Run(k.name+"/Resync still skips the deleted key", func(t *testing.T) {
			q := k.new(Options{KnownObjects: newKnown(oldObj)})
			require.NoError(t, q.Delete(oldObj))
			require.NoError(t, q.Resync())
			assert.Equal(t, Deltas{{Deleted, oldObj}}, flatten(popAll(t, q)))
		})
	}
}

package fifo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/narrate"
)

func TestNarration(t *testing.T) {
	want := map[string][]string{
		"DeltaFIFO": {
			"queue         queued Added default/foo (1 delta)",
			"queue         queued Updated default/foo (2 deltas)",
			"queue         ignored Deleted default/ghost: neither queued nor known (a relist already reported it)",
			"queue         queued Replaced default/bar (1 delta)",
			"queue         tombstone default/foo: queued at rv 2 but missing from the relist at rv 9",
			"queue         queued Deleted(tombstone) default/foo (3 deltas)",
			"queue         tombstone default/old: cached at rv 1 but missing from the relist at rv 9",
			"queue         queued Deleted(tombstone) default/old (1 delta)",
			"queue         replaced at rv 9: 1 object listed, 2 tombstones, 3 keys queued",
			"queue         popped default/foo [Added Updated Deleted(tombstone)] (2 keys left)",
			"queue         resync: 0 Sync deltas, 1 key skipped (deltas already queued)",
			"queue         closed",
		},
		"RealFIFO": {
			"queue         queued Added default/foo (1 delta in line)",
			"queue         queued Updated default/foo (2 deltas in line)",
			"queue         queued Deleted default/ghost (3 deltas in line)",
			"queue         tombstone default/foo: queued at rv 2 but missing from the relist at rv 9",
			"queue         queued Deleted(tombstone) default/foo (4 deltas in line)",
			"queue         tombstone default/old: cached at rv 1 but missing from the relist at rv 9",
			"queue         queued Deleted(tombstone) default/old (5 deltas in line)",
			"queue         queued Replaced default/bar (6 deltas in line)",
			"queue         replaced at rv 9: 1 object listed, 2 tombstones, 6 deltas queued",
			"queue         popped Added default/foo (5 deltas left)",
			"queue         resync: 0 Sync deltas, 1 key skipped (deltas already queued)",
			"queue         closed",
		},
	}
	for _, k := range queueKinds {
		t.Run(k.name, func(t *testing.T) {
			var buf bytes.Buffer
			tr := narrate.New(&buf, narrate.WithoutTimes())
			q := k.new(Options{Tracer: tr, KnownObjects: newKnown(obj("old", "1"))})
			require.NoError(t, q.Add(obj("foo", "1")))
			require.NoError(t, q.Update(obj("foo", "2")))
			require.NoError(t, q.Delete(obj("ghost", "1")))
			require.NoError(t, q.Replace([]*api.Object{obj("bar", "3")}, "9"))
			pop(t, q)
			require.NoError(t, q.Resync()) // the one cached key has its tombstone queued: skipped
			q.Close()
			assert.Equal(t, want[k.name], strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"))
		})
	}
}

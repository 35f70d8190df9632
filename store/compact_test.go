package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHistoryIsCompactedAutomatically(t *testing.T) {
	s := newTestStore(t, Options{HistoryLimit: 5})
	for range 10 { // revisions 2..11
		mustCreate(t, s, "ns", NewUID(), "1")
	}
	assert.Equal(t, int64(11), s.Revision())
	assert.Equal(t, int64(6), s.CompactedRevision(), "the last 5 events (7..11) are kept")

	_, err := s.Watch(context.Background(), "/", 5)
	require.ErrorIs(t, err, ErrCompacted)

	w, err := s.Watch(context.Background(), "/", 6)
	require.NoError(t, err)
	defer w.Stop()
	requireConsecutive(t, receive(t, w, 5), 7)

	_, err = s.List(context.Background(), "/", ListOptions{Revision: 5})
	require.ErrorIs(t, err, ErrCompacted)
	res, err := s.List(context.Background(), "/", ListOptions{Revision: 6})
	require.NoError(t, err)
	assert.Len(t, res.Items, 5)
}

func TestCompact(t *testing.T) {
	tests := []struct {
		name          string
		rev           int64
		wantErr       error
		wantCompacted int64
	}{
		{name: "the current revision", rev: 6, wantCompacted: 6},
		{name: "a past revision", rev: 4, wantCompacted: 4},
		{name: "the first revision", rev: 1, wantCompacted: 1},
		{name: "a future revision", rev: 7, wantErr: ErrFutureRevision},
		{name: "zero, already compacted", rev: 0, wantErr: ErrCompacted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Options{})
			for range 5 { // revisions 2..6
				mustCreate(t, s, "ns", NewUID(), "1")
			}
			err := s.Compact(tt.rev)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, int64(0), s.CompactedRevision())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantCompacted, s.CompactedRevision())
			assert.Equal(t, int64(6), s.Revision(), "compaction makes no revision")

			err = s.Compact(tt.rev)
			var ce *CompactedError
			require.True(t, errors.As(err, &ce), "compacting again: %v", err)
			assert.Equal(t, CompactedError{Requested: tt.rev, Compacted: tt.wantCompacted}, *ce)

			// Everything after the compacted revision is still replayable.
			w, err := s.Watch(context.Background(), "/", tt.rev)
			require.NoError(t, err)
			defer w.Stop()
			requireConsecutive(t, receive(t, w, int(6-max(tt.rev, 1))), max(tt.rev, 1)+1)
		})
	}
}

func TestCompactThenWriteKeepsHistoryDense(t *testing.T) {
	s := newTestStore(t, Options{HistoryLimit: 4})
	for i := range 20 {
		mustCreate(t, s, "ns", NewUID(), "1")
		if i%3 == 0 {
			require.NoError(t, s.Compact(s.Revision()-1))
		}
		// Whatever was compacted, every event after it replays in order.
		from := s.CompactedRevision()
		w, err := s.Watch(context.Background(), "/", from)
		require.NoError(t, err)
		evs := receive(t, w, int(s.Revision()-max(from, 1)))
		w.Stop()
		requireConsecutive(t, evs, max(from, 1)+1)
	}
}

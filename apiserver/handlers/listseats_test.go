package handlers

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func TestBigListsTakeTurnsSmallOnesDoNot(t *testing.T) {
	s := &listSeats{seats: make(chan struct{}, 1), maxWait: time.Minute}
	ctx := context.Background()

	first, err := s.take(ctx, bigListItems)
	require.NoError(t, err)
	small, err := s.take(ctx, bigListItems-1)
	require.NoError(t, err, "a small list needs no seat")
	small()

	// The second big list waits for the first one's seat: the one seat is
	// taken, and only a release makes room (seen from the seats, not by
	// waiting a while to see that nothing happens).
	require.Len(t, s.seats, cap(s.seats), "the one seat is held")
	got := make(chan error, 1)
	var second func()
	go func() {
		var err error
		second, err = s.take(ctx, 50000)
		got <- err
	}()
	first()
	require.NoError(t, <-got)
	second()
	assert.Empty(t, s.seats, "every seat given back")
}

func TestBigListSeatWaitEnds(t *testing.T) {
	s := &listSeats{seats: make(chan struct{}, 1), maxWait: 10 * time.Millisecond}
	held, err := s.take(context.Background(), bigListItems)
	require.NoError(t, err)
	defer held()

	// Past the wait: 429 with Retry-After, as a request that waited its
	// queue out in kube-apiserver.
	_, err = s.take(context.Background(), bigListItems)
	require.True(t, api.IsTooManyRequests(err), "got %v", err)
	var st *api.Status
	require.ErrorAs(t, err, &st)
	assert.Equal(t, int32(1), st.Details.RetryAfterSeconds)

	// A client that goes away stops waiting.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.maxWait = time.Minute
	_, err = s.take(ctx, bigListItems)
	assert.ErrorIs(t, err, context.Canceled)
}

package store

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// increment is a tryUpdate that adds one to the "count" annotation.
func increment(cur *api.Object) (*api.Object, error) {
	n, _ := strconv.Atoi(cur.Metadata.Annotations["count"])
	if cur.Metadata.Annotations == nil {
		cur.Metadata.Annotations = map[string]string{}
	}
	cur.Metadata.Annotations["count"] = strconv.Itoa(n + 1)
	return cur, nil
}

func TestGuaranteedUpdateConcurrentIncrements(t *testing.T) {
	s := newTestStore(t, Options{})
	created := mustCreate(t, s, "default", "counter", "")
	key := cmKey("default", "counter")

	const writers = 100
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Go(func() {
			_, err := s.GuaranteedUpdate(context.Background(), key, increment)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	got, err := s.Get(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, "100", got.Metadata.Annotations["count"], "no increment lost")
	assert.Equal(t, rv(t, created)+writers, rv(t, got), "one revision per increment")
	assert.Equal(t, created.Metadata.UID, got.Metadata.UID)
}

func TestGuaranteedUpdateRetriesOnConflict(t *testing.T) {
	s := newTestStore(t, Options{})
	mustCreate(t, s, "default", "a", "1")
	key := cmKey("default", "a")

	var seen []string
	out, err := s.GuaranteedUpdate(context.Background(), key, func(cur *api.Object) (*api.Object, error) {
		seen = append(seen, dataOf(cur))
		if len(seen) == 1 {
			// Someone else writes while we think. tryUpdate runs without
			// the store's lock, so this does not deadlock; it makes our
			// first attempt stale.
			_, err := s.Update(context.Background(), key, configMap("default", "a", "other"), Preconditions{})
			require.NoError(t, err)
		}
		return increment(cur)
	})
	require.NoError(t, err)
	assert.Equal(t, []string{`{"v":"1"}`, `{"v":"other"}`}, seen, "the retry sees the other write")
	assert.Equal(t, "1", out.Metadata.Annotations["count"])
	assert.Equal(t, `{"v":"other"}`, dataOf(out))
	assert.Equal(t, "4", out.Metadata.ResourceVersion)
}

func TestGuaranteedUpdateAbortsOnError(t *testing.T) {
	s := newTestStore(t, Options{})
	stored := mustCreate(t, s, "default", "a", "1")
	boom := errors.New("validation failed")

	out, err := s.GuaranteedUpdate(context.Background(), cmKey("default", "a"), func(cur *api.Object) (*api.Object, error) {
		cur.Metadata.Labels = map[string]string{"scribbled": "on the copy"}
		return nil, boom
	})
	assert.Same(t, boom, err, "tryUpdate's error comes back as-is")
	assert.Nil(t, out)
	assert.Equal(t, int64(2), s.Revision())
	assert.Empty(t, stored.Metadata.Labels, "tryUpdate got a copy")
}

func TestGuaranteedUpdateNoOpMakesNoRevision(t *testing.T) {
	s := newTestStore(t, Options{})
	stored := mustCreate(t, s, "default", "a", "1")
	w, err := s.Watch(context.Background(), "/", s.Revision())
	require.NoError(t, err)
	defer w.Stop()

	out, err := s.GuaranteedUpdate(context.Background(), cmKey("default", "a"), func(cur *api.Object) (*api.Object, error) {
		cur.Metadata.ResourceVersion = "" // differences in resourceVersion do not count
		return cur, nil
	})
	require.NoError(t, err)
	assert.Same(t, stored, out, "the current object, with its old resourceVersion")
	assert.Equal(t, int64(2), s.Revision())
	assert.Empty(t, w.Events(), "no event for a no-op")
}

func TestGuaranteedUpdateCopiesAForeignResult(t *testing.T) {
	s := newTestStore(t, Options{})
	mustCreate(t, s, "default", "a", "1")
	mine := configMap("default", "a", "mine")

	out, err := s.GuaranteedUpdate(context.Background(), cmKey("default", "a"), func(*api.Object) (*api.Object, error) {
		return mine, nil
	})
	require.NoError(t, err)
	require.NoError(t, mine.Set("data", []byte(`{"v":"changed later"}`)))
	assert.Equal(t, `{"v":"mine"}`, dataOf(out))
	assert.Empty(t, mine.Metadata.UID, "the caller's object is not stamped")
}

func TestGuaranteedUpdateErrors(t *testing.T) {
	s := newTestStore(t, Options{})
	mustCreate(t, s, "default", "a", "1")

	_, err := s.GuaranteedUpdate(context.Background(), cmKey("default", "nope"), increment)
	require.ErrorIs(t, err, ErrNotFound)

	_, err = s.GuaranteedUpdate(context.Background(), cmKey("default", "a"), func(*api.Object) (*api.Object, error) {
		return nil, nil
	})
	require.ErrorIs(t, err, ErrInvalid)

	// The object is deleted while tryUpdate runs: the write fails NotFound
	// instead of resurrecting it.
	_, err = s.GuaranteedUpdate(context.Background(), cmKey("default", "a"), func(cur *api.Object) (*api.Object, error) {
		_, err := s.Delete(context.Background(), cmKey("default", "a"), Preconditions{})
		require.NoError(t, err)
		return cur, nil
	})
	require.ErrorIs(t, err, ErrNotFound)

	// A context cancelled during tryUpdate stops the retries.
	mustCreate(t, s, "default", "b", "1")
	ctx, cancel := context.WithCancel(context.Background())
	_, err = s.GuaranteedUpdate(ctx, cmKey("default", "b"), func(cur *api.Object) (*api.Object, error) {
		cancel()
		_, err := s.Update(context.Background(), cmKey("default", "b"), configMap("default", "b", "x"), Preconditions{})
		require.NoError(t, err)
		return increment(cur)
	})
	require.ErrorIs(t, err, context.Canceled)
}

package store

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestNewStoreStartsAboveZero(t *testing.T) {
	s := newTestStore(t, Options{})
	assert.Equal(t, int64(1), s.Revision())
	assert.Equal(t, int64(0), s.CompactedRevision())

	created := mustCreate(t, s, "default", "a", "1")
	assert.Equal(t, "2", created.Metadata.ResourceVersion, "the first write gets revision 2")
	assert.Equal(t, int64(2), s.Revision())
}

func TestCreateStampsWhatOnlyTheStoreMaySet(t *testing.T) {
	s := newTestStore(t, Options{})
	in := configMap("default", "a", "1")
	forged := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	in.Metadata.UID = "forged-uid"
	in.Metadata.ResourceVersion = "999"
	in.Metadata.CreationTimestamp = forged
	in.Metadata.Labels = map[string]string{"app": "x"}

	out, err := s.Create(context.Background(), cmKey("default", "a"), in)
	require.NoError(t, err)

	assert.Equal(t, "2", out.Metadata.ResourceVersion)
	assert.Regexp(t, uuidV4, out.Metadata.UID)
	assert.Equal(t, time.Date(2024, 5, 1, 10, 30, 45, 0, time.UTC), out.Metadata.CreationTimestamp,
		"Options.Now in UTC at second precision")
	assert.Equal(t, time.UTC, out.Metadata.CreationTimestamp.Location())
	assert.Equal(t, `{"v":"1"}`, dataOf(out))

	// The caller's object is neither changed nor kept.
	assert.Equal(t, "forged-uid", in.Metadata.UID)
	assert.Equal(t, "999", in.Metadata.ResourceVersion)
	in.Metadata.Labels["app"] = "changed"
	require.NoError(t, in.Set("data", []byte(`{"v":"changed"}`)))
	got, err := s.Get(context.Background(), cmKey("default", "a"))
	require.NoError(t, err)
	assert.Same(t, out, got, "Get hands out the stored object itself")
	assert.Equal(t, "x", got.Metadata.Labels["app"])
	assert.Equal(t, `{"v":"1"}`, dataOf(got))
}

func TestCreateExistingKey(t *testing.T) {
	s := newTestStore(t, Options{})
	first := mustCreate(t, s, "default", "a", "1")

	_, err := s.Create(context.Background(), cmKey("default", "a"), configMap("default", "a", "2"))
	require.ErrorIs(t, err, ErrAlreadyExists)
	assert.Contains(t, err.Error(), cmKey("default", "a"))
	assert.Equal(t, int64(2), s.Revision(), "a failed write makes no revision")
	got, err := s.Get(context.Background(), cmKey("default", "a"))
	require.NoError(t, err)
	assert.Same(t, first, got)
}

func TestGetMissingKey(t *testing.T) {
	s := newTestStore(t, Options{})
	_, err := s.Get(context.Background(), cmKey("default", "nope"))
	require.ErrorIs(t, err, ErrNotFound)
	assert.EqualError(t, err, "key not found: /registry/configmaps/default/nope")
}

func TestUpdate(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		pre     func(stored *api.Object) Preconditions
		wantErr error
	}{
		{name: "no preconditions", key: "a", pre: func(*api.Object) Preconditions { return Preconditions{} }},
		{name: "matching resourceVersion", key: "a", pre: func(o *api.Object) Preconditions {
			return Preconditions{ResourceVersion: 2}
		}},
		{name: "matching uid and resourceVersion", key: "a", pre: func(o *api.Object) Preconditions {
			return Preconditions{ResourceVersion: 2, UID: o.Metadata.UID}
		}},
		{name: "stale resourceVersion", key: "a", wantErr: ErrConflict, pre: func(*api.Object) Preconditions {
			return Preconditions{ResourceVersion: 1}
		}},
		{name: "other uid", key: "a", wantErr: ErrConflict, pre: func(*api.Object) Preconditions {
			return Preconditions{UID: "someone-else"}
		}},
		{name: "missing key", key: "nope", wantErr: ErrNotFound, pre: func(*api.Object) Preconditions {
			return Preconditions{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Options{})
			stored := mustCreate(t, s, "default", "a", "1")

			in := configMap("default", tt.key, "2")
			in.Metadata.UID = "forged"
			in.Metadata.CreationTimestamp = time.Unix(0, 0)
			in.Metadata.ResourceVersion = "12345"
			out, err := s.Update(context.Background(), cmKey("default", tt.key), in, tt.pre(stored))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Contains(t, err.Error(), cmKey("default", tt.key))
				assert.Nil(t, out)
				assert.Equal(t, int64(2), s.Revision(), "a failed write makes no revision")
				got, err := s.Get(context.Background(), cmKey("default", "a"))
				require.NoError(t, err)
				assert.Same(t, stored, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "3", out.Metadata.ResourceVersion)
			assert.Equal(t, stored.Metadata.UID, out.Metadata.UID, "uid is kept")
			assert.Equal(t, stored.Metadata.CreationTimestamp, out.Metadata.CreationTimestamp, "creationTimestamp is kept")
			assert.Equal(t, `{"v":"2"}`, dataOf(out))
			assert.Equal(t, "forged", in.Metadata.UID, "the caller's object is not changed")
			assert.Equal(t, `{"v":"1"}`, dataOf(stored), "the old object is not changed")
		})
	}
}

func TestUpdateAlwaysWrites(t *testing.T) {
	s := newTestStore(t, Options{})
	stored := mustCreate(t, s, "default", "a", "1")
	out, err := s.Update(context.Background(), cmKey("default", "a"), stored, Preconditions{})
	require.NoError(t, err)
	assert.Equal(t, "3", out.Metadata.ResourceVersion, "Update makes a revision even when nothing changed")
}

func TestDelete(t *testing.T) {
	tests := []struct {
		name    string
		key     string
		pre     func(stored *api.Object) Preconditions
		wantErr error
	}{
		{name: "no preconditions", key: "a", pre: func(*api.Object) Preconditions { return Preconditions{} }},
		{name: "matching preconditions", key: "a", pre: func(o *api.Object) Preconditions {
			return Preconditions{ResourceVersion: 2, UID: o.Metadata.UID}
		}},
		{name: "stale resourceVersion", key: "a", wantErr: ErrConflict, pre: func(*api.Object) Preconditions {
			return Preconditions{ResourceVersion: 1}
		}},
		{name: "other uid", key: "a", wantErr: ErrConflict, pre: func(*api.Object) Preconditions {
			return Preconditions{UID: "someone-else"}
		}},
		{name: "missing key", key: "nope", wantErr: ErrNotFound, pre: func(*api.Object) Preconditions {
			return Preconditions{}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Options{})
			stored := mustCreate(t, s, "default", "a", "1")

			out, err := s.Delete(context.Background(), cmKey("default", tt.key), tt.pre(stored))
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Equal(t, int64(2), s.Revision())
				_, err := s.Get(context.Background(), cmKey("default", "a"))
				require.NoError(t, err, "the object is still there")
				return
			}
			require.NoError(t, err)
			assert.Same(t, stored, out, "Delete returns the last state, with its own resourceVersion")
			assert.Equal(t, "2", out.Metadata.ResourceVersion)
			assert.Equal(t, int64(3), s.Revision(), "a delete is a revision too")
			_, err = s.Get(context.Background(), cmKey("default", "a"))
			require.ErrorIs(t, err, ErrNotFound)

			again := mustCreate(t, s, "default", "a", "1")
			assert.NotEqual(t, stored.Metadata.UID, again.Metadata.UID, "a re-created object is a new object")
		})
	}
}

func TestBadInputIsRejected(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func(s *Store) error
	}{
		{"create with empty key", func(s *Store) error { _, err := s.Create(ctx, "", configMap("d", "a", "1")); return err }},
		{"create nil object", func(s *Store) error { _, err := s.Create(ctx, "/k", nil); return err }},
		{"update with empty key", func(s *Store) error {
			_, err := s.Update(ctx, "", configMap("d", "a", "1"), Preconditions{})
			return err
		}},
		{"update nil object", func(s *Store) error { _, err := s.Update(ctx, "/k", nil, Preconditions{}); return err }},
		{"delete with empty key", func(s *Store) error { _, err := s.Delete(ctx, "", Preconditions{}); return err }},
		{"guaranteed update with empty key", func(s *Store) error {
			_, err := s.GuaranteedUpdate(ctx, "", func(o *api.Object) (*api.Object, error) { return o, nil })
			return err
		}},
		{"guaranteed update without a function", func(s *Store) error { _, err := s.GuaranteedUpdate(ctx, "/k", nil); return err }},
		{"list at a negative revision", func(s *Store) error { _, err := s.List(ctx, "/", ListOptions{Revision: -1}); return err }},
		{"list with a negative limit", func(s *Store) error { _, err := s.List(ctx, "/", ListOptions{Limit: -1}); return err }},
		{"watch from a negative revision", func(s *Store) error { _, err := s.Watch(ctx, "/", -1); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, Options{})
			require.ErrorIs(t, tt.call(s), ErrInvalid)
			assert.Equal(t, int64(1), s.Revision())
		})
	}
}

func TestCancelledContextDoesNothing(t *testing.T) {
	s := newTestStore(t, Options{})
	mustCreate(t, s, "default", "a", "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	key := cmKey("default", "a")
	calls := map[string]func() error{
		"create": func() error {
			_, err := s.Create(ctx, cmKey("default", "b"), configMap("default", "b", "1"))
			return err
		},
		"get":  func() error { _, err := s.Get(ctx, key); return err },
		"list": func() error { _, err := s.List(ctx, "/", ListOptions{}); return err },
		"update": func() error {
			_, err := s.Update(ctx, key, configMap("default", "a", "2"), Preconditions{})
			return err
		},
		"guaranteed update": func() error {
			_, err := s.GuaranteedUpdate(ctx, key, func(o *api.Object) (*api.Object, error) { return o, nil })
			return err
		},
		"delete": func() error { _, err := s.Delete(ctx, key, Preconditions{}); return err },
		"watch":  func() error { _, err := s.Watch(ctx, "/", 0); return err },
	}
	for name, call := range calls {
		require.ErrorIs(t, call(), context.Canceled, name)
	}
	assert.Equal(t, int64(2), s.Revision())
}

func TestClosedStoreRefusesEverything(t *testing.T) {
	s := New(Options{})
	mustCreate(t, s, "default", "a", "1")
	s.Close()
	s.Close() // idempotent

	ctx := context.Background()
	key := cmKey("default", "a")
	calls := map[string]func() error{
		"create": func() error {
			_, err := s.Create(ctx, cmKey("default", "b"), configMap("default", "b", "1"))
			return err
		},
		"get":  func() error { _, err := s.Get(ctx, key); return err },
		"list": func() error { _, err := s.List(ctx, "/", ListOptions{}); return err },
		"update": func() error {
			_, err := s.Update(ctx, key, configMap("default", "a", "2"), Preconditions{})
			return err
		},
		"guaranteed update": func() error {
			_, err := s.GuaranteedUpdate(ctx, key, func(o *api.Object) (*api.Object, error) { return o, nil })
			return err
		},
		"delete":  func() error { _, err := s.Delete(ctx, key, Preconditions{}); return err },
		"watch":   func() error { _, err := s.Watch(ctx, "/", 0); return err },
		"compact": func() error { return s.Compact(2) },
	}
	for name, call := range calls {
		require.ErrorIs(t, call(), ErrClosed, name)
	}
	assert.Equal(t, int64(2), s.Revision(), "Revision still answers")
}

func TestUIDsAreUniqueUUIDv4(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		u := NewUID()
		require.Regexp(t, uuidV4, u)
		require.False(t, seen[u], "duplicate uid %s", u)
		seen[u] = true
	}
}

func TestErrorTypes(t *testing.T) {
	var err error = &CompactedError{Requested: 3, Compacted: 7}
	assert.EqualError(t, err, "revision 3: required revision has been compacted (compacted at 7)")
	assert.True(t, errors.Is(err, ErrCompacted))
	err = &FutureRevisionError{Requested: 9, Current: 4}
	assert.EqualError(t, err, "revision 9: required revision is a future revision (current 4)")
	assert.True(t, errors.Is(err, ErrFutureRevision))
}

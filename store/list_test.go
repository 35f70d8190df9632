package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

func names(items []*api.Object) []string {
	out := []string{}
	for _, o := range items {
		out = append(out, o.Key())
	}
	return out
}

func TestListByPrefix(t *testing.T) {
	s := newTestStore(t, Options{})
	ctx := context.Background()
	for _, n := range []string{"c", "a", "b"} {
		mustCreate(t, s, "ns1", n, "1")
	}
	mustCreate(t, s, "ns2", "a", "1")
	mustCreate(t, s, "ns10", "a", "1")
	_, err := s.Create(ctx, "/registry/namespaces/ns1",
		&api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: "ns1"}})
	require.NoError(t, err)

	tests := []struct {
		prefix string
		want   []string
	}{
		{"/registry/configmaps/ns1/", []string{"ns1/a", "ns1/b", "ns1/c"}},
		{"/registry/configmaps/ns2/", []string{"ns2/a"}},
		{"/registry/configmaps/", []string{"ns1/a", "ns1/b", "ns1/c", "ns10/a", "ns2/a"}},
		{"/registry/namespaces/", []string{"ns1"}},
		{"/registry/secrets/", []string{}},
		{"/registry/configmaps/ns1/b", []string{"ns1/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			res, err := s.List(ctx, tt.prefix, ListOptions{})
			require.NoError(t, err)
			assert.Equal(t, tt.want, names(res.Items), "in key order")
			assert.Equal(t, s.Revision(), res.Revision)
			assert.Empty(t, res.NextKey)
			assert.Zero(t, res.Remaining)
		})
	}
}

func TestListPaging(t *testing.T) {
	s := newTestStore(t, Options{})
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		mustCreate(t, s, "ns", n, n)
	}
	odd := func(o *api.Object) bool { return o.Metadata.Name != "b" && o.Metadata.Name != "d" }

	tests := []struct {
		name   string
		limit  int
		filter func(*api.Object) bool
		pages  [][]string
		remain []int64
	}{
		{name: "limit 2", limit: 2,
			pages:  [][]string{{"ns/a", "ns/b"}, {"ns/c", "ns/d"}, {"ns/e"}},
			remain: []int64{3, 1, 0}},
		{name: "limit divides evenly", limit: 5,
			pages:  [][]string{{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"}},
			remain: []int64{0}},
		{name: "limit above size", limit: 10,
			pages:  [][]string{{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e"}},
			remain: []int64{0}},
		{name: "filter counts kept items; remaining counts keys", limit: 1, filter: odd,
			pages:  [][]string{{"ns/a"}, {"ns/c"}, {"ns/e"}},
			remain: []int64{4, 2, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := ListOptions{Limit: tt.limit, Filter: tt.filter}
			var pages [][]string
			var remain []int64
			for {
				res, err := s.List(ctx, "/registry/configmaps/ns/", opts)
				require.NoError(t, err)
				pages = append(pages, names(res.Items))
				remain = append(remain, res.Remaining)
				if res.NextKey == "" {
					break
				}
				require.Less(t, len(pages), 10, "paging does not end")
				opts.Revision, opts.StartKey = res.Revision, res.NextKey
			}
			assert.Equal(t, tt.pages, pages)
			assert.Equal(t, tt.remain, remain)
		})
	}
}

func TestListAtPastRevision(t *testing.T) {
	s := newTestStore(t, Options{})
	ctx := context.Background()
	a := mustCreate(t, s, "ns", "a", "a1")
	b := mustCreate(t, s, "ns", "b", "b1")
	d := mustCreate(t, s, "ns", "d", "d1")
	mustCreate(t, s, "other", "x", "x1")
	before := s.Revision()

	// After "before": a changes twice, b goes, c comes, d is deleted and
	// re-created, e comes and goes, and a key outside the prefix changes.
	key := func(n string) string { return cmKey("ns", n) }
	_, err := s.Update(ctx, key("a"), configMap("ns", "a", "a2"), Preconditions{})
	require.NoError(t, err)
	_, err = s.Update(ctx, key("a"), configMap("ns", "a", "a3"), Preconditions{})
	require.NoError(t, err)
	_, err = s.Delete(ctx, key("b"), Preconditions{})
	require.NoError(t, err)
	mustCreate(t, s, "ns", "c", "c1")
	_, err = s.Delete(ctx, key("d"), Preconditions{})
	require.NoError(t, err)
	mustCreate(t, s, "ns", "d", "d2")
	mustCreate(t, s, "ns", "e", "e1")
	_, err = s.Delete(ctx, key("e"), Preconditions{})
	require.NoError(t, err)
	_, err = s.Update(ctx, cmKey("other", "x"), configMap("other", "x", "x2"), Preconditions{})
	require.NoError(t, err)

	past, err := s.List(ctx, "/registry/configmaps/ns/", ListOptions{Revision: before})
	require.NoError(t, err)
	assert.Equal(t, before, past.Revision)
	require.Equal(t, []string{"ns/a", "ns/b", "ns/d"}, names(past.Items))
	assert.Same(t, a, past.Items[0], "the state as it was, resourceVersion included")
	assert.Same(t, b, past.Items[1])
	assert.Same(t, d, past.Items[2], "the old d, not its re-creation")

	now, err := s.List(ctx, "/registry/configmaps/ns/", ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, []string{"ns/a", "ns/c", "ns/d"}, names(now.Items))
	assert.Equal(t, `{"v":"a3"}`, dataOf(now.Items[0]))

	// Paging at the past revision: every page sees the same state.
	var got []string
	var remaining []int64
	opts := ListOptions{Revision: before, Limit: 1}
	for {
		res, err := s.List(ctx, "/registry/configmaps/ns/", opts)
		require.NoError(t, err)
		assert.Equal(t, before, res.Revision)
		got = append(got, names(res.Items)...)
		remaining = append(remaining, res.Remaining)
		if res.NextKey == "" {
			break
		}
		opts.StartKey = res.NextKey
	}
	assert.Equal(t, []string{"ns/a", "ns/b", "ns/d"}, got)
	assert.Equal(t, []int64{2, 1, 0}, remaining)

	// Each revision in between reads as the state right after that write.
	for r := int64(1); r <= s.Revision(); r++ {
		res, err := s.List(ctx, "/registry/configmaps/ns/", ListOptions{Revision: r})
		require.NoError(t, err, "revision %d", r)
		for _, o := range res.Items {
			assert.LessOrEqual(t, rv(t, o), r, "revision %d holds %s written later", r, o.Key())
		}
	}
	empty, err := s.List(ctx, "/", ListOptions{Revision: 1})
	require.NoError(t, err)
	assert.Empty(t, empty.Items, "revision 1 is the empty store")
}

func TestListRevisionErrors(t *testing.T) {
	s := newTestStore(t, Options{})
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c"} {
		mustCreate(t, s, "ns", n, "1")
	}
	require.NoError(t, s.Compact(3))

	_, err := s.List(ctx, "/", ListOptions{Revision: 2})
	require.ErrorIs(t, err, ErrCompacted)
	var ce *CompactedError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, CompactedError{Requested: 2, Compacted: 3}, *ce)

	res, err := s.List(ctx, "/", ListOptions{Revision: 3})
	require.NoError(t, err, "the compacted revision itself stays readable")
	assert.Equal(t, []string{"ns/a", "ns/b"}, names(res.Items))

	_, err = s.List(ctx, "/", ListOptions{Revision: 5})
	require.ErrorIs(t, err, ErrFutureRevision)
	var fe *FutureRevisionError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, FutureRevisionError{Requested: 5, Current: 4}, *fe)
}

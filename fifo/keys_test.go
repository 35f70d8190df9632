package fifo

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"listwatch/api"
)

func TestKeyOf(t *testing.T) {
	cluster := &api.Object{Metadata: api.ObjectMeta{Name: "node-1"}}
	ts := DeletedFinalStateUnknown{Key: "ns/b"}
	cases := []struct {
		in   any
		want string
	}{
		{obj("a", "1"), "default/a"},
		{cluster, "node-1"},
		{ts, "ns/b"},
		{&ts, "ns/b"},
		{Delta{Type: Added, Object: obj("c", "1")}, "default/c"},
		{Deltas{{Added, obj("d", "1")}, {Deleted, DeletedFinalStateUnknown{Key: "default/d"}}}, "default/d"},
	}
	for _, c := range cases {
		got, err := KeyOf(c.in)
		assert.NoError(t, err)
		assert.Equal(t, c.want, got)
	}
	for _, bad := range []any{nil, (*api.Object)(nil), obj("", "1"), DeletedFinalStateUnknown{},
		(*DeletedFinalStateUnknown)(nil), Deltas{}, "default/a", api.Object{}} {
		_, err := KeyOf(bad)
		assert.ErrorIs(t, err, ErrNoKey, "%#v", bad)
	}
}

func TestDeltasOldestNewest(t *testing.T) {
	var empty Deltas
	assert.Nil(t, empty.Oldest())
	assert.Nil(t, empty.Newest())
	d := Deltas{{Added, obj("a", "1")}, {Updated, obj("a", "2")}}
	assert.Equal(t, Added, d.Oldest().Type)
	assert.Equal(t, Updated, d.Newest().Type)
}

package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeyIndexMatchesASortedSlice drives the index and a plain sorted slice
// with the same random inserts and deletes (enough to split and merge
// chunks) and checks that they always agree.
func TestKeyIndexMatchesASortedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var x keyIndex
	var want []string
	for step := range 20000 {
		k := fmt.Sprintf("/registry/configmaps/ns%d/%d", rng.IntN(3), rng.IntN(3000))
		i, found := slices.BinarySearch(want, k)
		if rng.IntN(3) == 0 { // delete a third of the time
			x.delete(k)
			if found {
				want = slices.Delete(want, i, i+1)
			}
		} else {
			x.insert(k)
			if !found {
				want = slices.Insert(want, i, k)
			}
		}
		if step%997 == 0 || step == 19999 {
			require.Equal(t, want, slices.Collect(x.from("")), "step %d", step)
			require.Equal(t, len(want), x.n)
			for _, ch := range x.chunks {
				require.NotEmpty(t, ch)
				require.LessOrEqual(t, len(ch), chunkMax)
			}
			probe := fmt.Sprintf("/registry/configmaps/ns1/%d", rng.IntN(3000))
			r, _ := slices.BinarySearch(want, probe)
			require.Equal(t, r, x.rank(probe))
			require.Equal(t, want[r:], slices.Collect(x.from(probe)))
		}
	}
	// Delete everything: no empty chunk is left behind.
	for _, k := range want {
		x.delete(k)
	}
	assert.Empty(t, x.chunks)
	assert.Zero(t, x.n)
}

func TestKeyIndexCountRange(t *testing.T) {
	var x keyIndex
	for _, k := range []string{"/a/1", "/a/2", "/a/3", "/b/1", "/b\xff", "/c"} {
		x.insert(k)
	}
	tests := []struct {
		prefix string
		want   int
	}{
		{"/a/", 3},
		{"/b", 2},
		{"/b/", 1},
		{"/z", 0},
		{"", 6},
		{"/", 6},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, x.countRange(tt.prefix, prefixEnd(tt.prefix)), "prefix %q", tt.prefix)
		n := 0
		for k := range x.from(tt.prefix) {
			if !strings.HasPrefix(k, tt.prefix) {
				break
			}
			n++
		}
		assert.Equal(t, tt.want, n, "prefix %q by scan", tt.prefix)
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct{ prefix, want string }{
		{"/registry/configmaps/", "/registry/configmaps0"},
		{"a", "b"},
		{"a\xff", "b"},
		{"\xff\xff", ""},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, prefixEnd(tt.prefix), "prefix %q", tt.prefix)
	}
}

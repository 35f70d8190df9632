package store

import (
	"iter"
	"slices"
	"sort"
)

// chunkMax bounds a chunk of the key index: inserting or deleting a key moves
// at most this many strings, however many keys the store holds.
const chunkMax = 512

// keyIndex is the sorted set of the store's current keys, which makes a
// prefix a range and paging a seek. etcd keeps a B-tree for this; a list of
// sorted chunks does the same job in a few lines: a write touches one chunk
// (O(chunkMax)), finding a key is two binary searches, and counting keys,
// which "remainingItemCount" needs, adds up chunk lengths.
type keyIndex struct {
	chunks [][]string // each sorted and non-empty; all of chunk i < all of chunk i+1
	n      int
}

// seek returns the position of the first key >= k: chunk c, offset i.
// c == len(chunks) means no such key.
func (x *keyIndex) seek(k string) (c, i int) {
	c = sort.Search(len(x.chunks), func(j int) bool {
		ch := x.chunks[j]
		return ch[len(ch)-1] >= k
	})
	if c < len(x.chunks) {
		i, _ = slices.BinarySearch(x.chunks[c], k)
	}
	return c, i
}

// insert adds k; adding a key already present does nothing.
func (x *keyIndex) insert(k string) {
	if len(x.chunks) == 0 {
		x.chunks = [][]string{{k}}
		x.n = 1
		return
	}
	c, i := x.seek(k)
	if c == len(x.chunks) { // after every key: append to the last chunk
		c = len(x.chunks) - 1
		i = len(x.chunks[c])
	} else if x.chunks[c][i] == k {
		return
	}
	x.chunks[c] = slices.Insert(x.chunks[c], i, k)
	x.n++
	if ch := x.chunks[c]; len(ch) > chunkMax {
		half := len(ch) / 2
		right := slices.Clone(ch[half:])
		clear(ch[half:]) // let the moved strings go from the old array
		x.chunks[c] = ch[:half]
		x.chunks = slices.Insert(x.chunks, c+1, right)
	}
}

// delete removes k if present.
func (x *keyIndex) delete(k string) {
	c, i := x.seek(k)
	if c == len(x.chunks) || x.chunks[c][i] != k {
		return
	}
	x.chunks[c] = slices.Delete(x.chunks[c], i, i+1)
	x.n--
	switch ch := x.chunks[c]; {
	case len(ch) == 0:
		x.chunks = slices.Delete(x.chunks, c, c+1)
	case len(ch) < chunkMax/4 && c+1 < len(x.chunks) && len(ch)+len(x.chunks[c+1]) <= chunkMax:
		// Merge small neighbours, so deletes cannot leave many tiny chunks.
		x.chunks[c] = append(ch, x.chunks[c+1]...)
		x.chunks = slices.Delete(x.chunks, c+1, c+2)
	}
}

// rank counts the keys < k.
func (x *keyIndex) rank(k string) int {
	c, i := x.seek(k)
	for _, ch := range x.chunks[:c] {
		i += len(ch)
	}
	return i
}

// countRange counts the keys in [from, to); to == "" means no upper bound.
func (x *keyIndex) countRange(from, to string) int {
	end := x.n
	if to != "" {
		end = x.rank(to)
	}
	return max(end-x.rank(from), 0)
}

// from yields the keys >= k in order. The index must not change while the
// sequence is in use (the store's lock sees to that).
func (x *keyIndex) from(k string) iter.Seq[string] {
	return func(yield func(string) bool) {
		c, i := x.seek(k)
		for ; c < len(x.chunks); c, i = c+1, 0 {
			for _, key := range x.chunks[c][i:] {
				if !yield(key) {
					return
				}
			}
		}
	}
}

// prefixEnd returns the smallest key greater than every key that starts with
// prefix, or "" if there is none (an empty prefix, or one of only 0xff
// bytes). It is etcd's GetPrefixRangeEnd: a prefix scan is the range
// [prefix, prefixEnd(prefix)).
func prefixEnd(prefix string) string {
	end := []byte(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return string(end[:i+1])
		}
	}
	return ""
}

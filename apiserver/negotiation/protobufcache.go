package negotiation

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"listwatch/api"
)

// The protobuf encodings of stored objects, kept so that a protobuf LIST
// does not transcode every item from JSON twice, and the next LIST of the
// same objects does not transcode them at all. Ours, not Kubernetes'.
//
// What Kubernetes does: kube-apiserver 1.37.2's watch cache wraps the
// object of each event it dispatches in a cachingObject (k8s.io/apiserver
// v0.37.2 pkg/storage/cacher/caching_object.go; cacher.go dispatchEvent
// and setCachingObjects), which keeps each serialization of the object,
// one per encoder identifier (CacheEncode), so an event is encoded once
// per format however many watchers it goes to; after the dispatch it
// drops them, saying in dispatchEvent that there is no convincing data
// that keeping them justifies the memory. LISTs are not cached: the items
// are typed structs, and the protobuf encoder asks each for its Size()
// and then marshals it (apimachinery's
// runtime/serializer/protobuf/collections.go), both cheap generated code.
//
// Where ours differs:
//   - Watch events: our watch cache encodes each event once as JSON and
//     keeps the frame with the event (cacher/frames.go), and
//     SharedWatchFrames (protobuf.go) re-encodes each shared frame once
//     for every protobuf or metadata-only watch: the same
//     once-per-event-and-format as cachingObject, kept a little longer
//     (the last frames, within a byte budget, not one dispatch).
//   - LISTs: we hold JSON, so each item's protobuf is a transcoding, and a
//     streamed LIST needs every item's size before its first byte
//     (api/protobuf/liststream.go): without this cache, two transcodings
//     per item per LIST. ProtobufEncodings keeps an object's encoding for
//     as long as the object lives, within a byte budget: the store and the
//     watch cache share their objects with every LIST (read-only), so the
//     same pointer comes back list after list.
//   - Memory: an entry is charged its bytes and protobufEntryOverhead.
//     When the budget is spent nothing more is kept (no eviction: a LIST
//     larger than the budget then finds the same part cached every time,
//     where evicting would find none), and items not kept are transcoded
//     twice as before. An entry does not keep its object alive: it holds
//     a weak pointer, and a runtime cleanup removes it and returns its
//     budget once the object is collected (replaced or deleted, and no
//     longer in the ring, a watcher's queue or a LIST).
//   - The cost of not evicting: an updated object's old version stays in
//     the watch cache's ring (HistorySize events) and keeps its entry
//     until the ring lets it go and a collection runs, though no LIST
//     asks for it again. With the default ring (10,000 events) of 1 KiB
//     objects that is at most about 13 MiB of the 64; with many large
//     objects updated at once the budget can be spent on old versions
//     for a while, and new versions are transcoded twice, as without the
//     cache, until the old ones are collected: slower, never wrong.

// DefaultProtobufCacheBytes is the default budget of ProtobufEncodings:
// about 50,000 ConfigMaps of 1 KiB.
const DefaultProtobufCacheBytes = 64 << 20

// protobufEntryOverhead is what an entry costs besides its bytes: the
// map's entry, the entry itself, the weak handle and the cleanup.
const protobufEntryOverhead = 192

// ProtobufEncodings remembers the protobuf encodings of objects (their
// message, as a list item), within a byte budget. A nil one remembers
// nothing. It is safe for concurrent use.
type ProtobufEncodings struct {
	budget int64
	used   atomic.Int64
	// entries maps an object's address to its encoding. The address is
	// only a key: the entry's weak pointer says whether it is still the
	// same object (a collected object's address can be reused before its
	// cleanup has run).
	entries                       sync.Map // uintptr → *protobufEncoding
	hits, misses, stored, refused atomic.Int64
}

// protobufEncoding is one object's encoding as an item of a list of
// apiVersion/listKind.
type protobufEncoding struct {
	obj              weak.Pointer[api.Object]
	apiVersion, kind string
	pb               []byte
	cost             int64
}

// NewProtobufEncodings returns a cache of at most budget bytes; a budget
// of 0 or less returns nil, which remembers nothing.
func NewProtobufEncodings(budget int64) *ProtobufEncodings {
	if budget <= 0 {
		return nil
	}
	return &ProtobufEncodings{budget: budget}
}

// Load returns o's encoding as an item of an apiVersion/listKind list, if
// remembered. The bytes are shared: read them only.
func (c *ProtobufEncodings) Load(o *api.Object, apiVersion, listKind string) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	if v, ok := c.entries.Load(uintptr(unsafe.Pointer(o))); ok {
		e := v.(*protobufEncoding)
		if e.obj.Value() == o && e.kind == listKind && e.apiVersion == apiVersion {
			c.hits.Add(1)
			return e.pb, true
		}
	}
	c.misses.Add(1)
	return nil, false
}

// Store remembers a copy of pb as o's encoding as an item of an
// apiVersion/listKind list, if the budget allows. o must not change while
// it lives, as stored objects do not.
func (c *ProtobufEncodings) Store(o *api.Object, apiVersion, listKind string, pb []byte) {
	if c == nil {
		return
	}
	cost := int64(len(pb)) + protobufEntryOverhead
	for {
		used := c.used.Load()
		if used+cost > c.budget {
			c.refused.Add(1)
			return
		}
		if c.used.CompareAndSwap(used, used+cost) {
			break
		}
	}
	key := uintptr(unsafe.Pointer(o))
	e := &protobufEncoding{obj: weak.Make(o), apiVersion: apiVersion, kind: listKind, pb: append([]byte(nil), pb...), cost: cost}
	for {
		old, loaded := c.entries.LoadOrStore(key, e)
		if !loaded {
			break
		}
		if old.(*protobufEncoding).obj.Value() == o {
			c.used.Add(-cost) // already there, or o's encoding for another kind
			return
		}
		// A collected object's entry, whose cleanup has not run yet.
		if c.entries.CompareAndSwap(key, old, e) {
			break
		}
	}
	c.stored.Add(1)
	runtime.AddCleanup(o, c.forget, protobufCleanup{key: key, e: e})
}

// protobufCleanup is what the cleanup of a remembered object needs: never
// the object itself, or it would never be collected.
type protobufCleanup struct {
	key uintptr
	e   *protobufEncoding
}

// forget drops the entry of a collected object, unless a later entry took
// its place, and gives its bytes back to the budget.
func (c *ProtobufEncodings) forget(a protobufCleanup) {
	c.entries.CompareAndDelete(a.key, a.e)
	c.used.Add(-a.e.cost)
}

// ProtobufCacheStats is what a ProtobufEncodings holds and has done.
type ProtobufCacheStats struct {
	// Bytes is what the entries are charged, Budget the most they may be.
	Bytes  int64 `json:"bytes"`
	Budget int64 `json:"budget"`
	// Hits and Misses count Loads; Stored and Refused count Stores kept
	// and turned away for the budget.
	Hits    int64 `json:"hits"`
	Misses  int64 `json:"misses"`
	Stored  int64 `json:"stored"`
	Refused int64 `json:"refused"`
}

// Stats returns the cache's figures (zero for a nil cache).
func (c *ProtobufEncodings) Stats() ProtobufCacheStats {
	if c == nil {
		return ProtobufCacheStats{}
	}
	return ProtobufCacheStats{Bytes: c.used.Load(), Budget: c.budget,
		Hits: c.hits.Load(), Misses: c.misses.Load(), Stored: c.stored.Load(), Refused: c.refused.Load()}
}

// listItemCache is the protobuf.ItemCache of one LIST's items.
type listItemCache struct {
	c                *ProtobufEncodings
	items            []*api.Object
	apiVersion, kind string
}

func (l listItemCache) Load(i int) ([]byte, bool) {
	return l.c.Load(l.items[i], l.apiVersion, l.kind)
}

func (l listItemCache) Store(i int, pb []byte) {
	l.c.Store(l.items[i], l.apiVersion, l.kind, pb)
}

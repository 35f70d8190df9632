package cacher

import (
	"encoding/base64"
	"strconv"
	"sync"
	"sync/atomic"

	"listwatch/api"
	"listwatch/store"
)

// event is one change as the watch cache keeps it: the store's event plus
// the watch frames encoded from it. The cache's current state is made of
// events too (the last one that touched each key), so the synthetic ADDED
// frames of a watch from resourceVersion 0 are shared and encoded once just
// like live ones.
type event struct {
	typ api.EventType // Added, Modified or Deleted
	key string
	rev int64
	// obj is the new state; for Deleted it is the last state stamped with
	// the deletion's revision, as the store delivers it.
	obj *api.Object
	// prev is the state before the change; nil for Added.
	prev *api.Object
	// size is what the event is charged against the ring's byte budget:
	// twice its object, for the object and the frame encoded from it.
	// appendedBefore is the ring's running total before it (history).
	size, appendedBefore int64

	// frames are built lazily, at most once per kind, and then shared by
	// every watcher that gets this kind of frame for this event.
	mu     sync.Mutex
	frames [numFrameKinds]atomic.Pointer[[]byte]
}

// frameKind is which watch frame a watcher gets for an event, depending on
// whether the object matched its selectors before and after the change.
type frameKind uint8

const (
	// frameAdded is ADDED with the new state: a create, a watch's synthetic
	// initial event, or an object that starts matching the selectors.
	frameAdded frameKind = iota
	// frameModified is MODIFIED with the new state.
	frameModified
	// frameDeleted is DELETED with the last state, stamped by the store
	// with the deletion's revision.
	frameDeleted
	// frameDeletedPrev is DELETED for an object that stopped matching: the
	// previous state, stamped with this event's revision, which is what a
	// real kube-apiserver sends (fixture watch-labelselector-transitions).
	frameDeletedPrev
	numFrameKinds
)

func newEvent(ev store.Event) *event {
	return &event{typ: ev.Type, key: ev.Key, rev: ev.Revision, obj: ev.Object, prev: ev.PrevObject,
		size: ringCost(ev)}
}

// ringCost is what a store event costs in the ring: twice its object, for
// the object and the frame encoded from it; nothing for a progress event,
// which only moves the revision.
func ringCost(ev store.Event) int64 {
	if ev.IsProgress() {
		return 0
	}
	return 2 * ev.Object.Size()
}

// frame returns the encoded frame of kind k, building it on first use.
func (e *event) frame(c *Cacher, k frameKind) []byte { return *e.frameRef(c, k) }

// frameRef is frame by reference: what a watcher's queue holds, 8 bytes
// where a slice would take 24 (10,000 watchers with 20 frames queued each
// hold 200,000 of them).
func (e *event) frameRef(c *Cacher, k frameKind) *[]byte {
	if p := e.frames[k].Load(); p != nil {
		return p
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.frames[k].Load(); p != nil {
		return p
	}
	var b []byte
	switch k {
	case frameAdded:
		b = c.encode(api.Added, e.obj)
	case frameModified:
		b = c.encode(api.Modified, e.obj)
	case frameDeleted:
		b = c.encode(api.Deleted, e.obj)
	case frameDeletedPrev:
		// A shallow copy is enough: only the resourceVersion string
		// changes, and the shared maps and fields are only read.
		prev := *e.prev
		prev.Metadata.ResourceVersion = strconv.FormatInt(e.rev, 10)
		b = c.encode(api.Deleted, &prev)
	}
	e.frames[k].Store(&b)
	return &b
}

// scratchPool holds encoding buffers, so encoding allocates only the exact
// frame it keeps.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// encode builds one frame, {"type":T,"object":...}\n, and counts it.
func (c *Cacher) encode(typ api.EventType, obj *api.Object) []byte {
	sp := scratchPool.Get().(*[]byte)
	ev := api.Event{Type: typ, Object: obj}
	b := append(ev.AppendJSON((*sp)[:0]), '\n')
	out := make([]byte, len(b))
	copy(out, b)
	if cap(b) <= 1<<20 { // do not let one huge object pin a huge buffer
		*sp = b
		scratchPool.Put(sp)
	}
	c.framesEncoded.Add(1)
	c.bytesEncoded.Add(int64(len(out)))
	return out
}

// encodeStatus builds the in-stream ERROR frame for a Status.
func (c *Cacher) encodeStatus(s *api.Status) []byte {
	ev := api.Event{Type: api.Error, Status: s}
	b := append(ev.AppendJSON(nil), '\n')
	c.framesEncoded.Add(1)
	c.bytesEncoded.Add(int64(len(b)))
	return b
}

// bookmarkObject is what a BOOKMARK carries: an object of the watched kind
// with nothing but metadata.resourceVersion (and the creationTimestamp: null
// every ObjectMeta writes), as in fixture watch-bookmarks-timeout5.jsonl.
func (c *Cacher) bookmarkObject(rev int64) *api.Object {
	return &api.Object{
		Kind:       c.cfg.Kind,
		APIVersion: c.cfg.APIVersion,
		Metadata:   api.ObjectMeta{ResourceVersion: strconv.FormatInt(rev, 10)},
	}
}

// bookmarkFrame returns the periodic BOOKMARK frame for rev, by reference
// like frameRef. The dispatcher sends the same revision to many watchers,
// so the last frame is kept.
func (c *Cacher) bookmarkFrame(rev int64) *[]byte {
	if f := c.lastBookmark.Load(); f != nil && f.rev == rev {
		return &f.b
	}
	f := &revFrame{rev: rev, b: c.encode(api.Bookmark, c.bookmarkObject(rev))}
	c.lastBookmark.Store(f)
	return &f.b
}

// initialEventsEndFrame returns the BOOKMARK that ends the synthetic events
// of a watch with sendInitialEvents=true. Besides k8s.io/initial-events-end
// it carries the list blueprint a real kube-apiserver v1.32 adds (fixture
// watch-sendinitialevents.jsonl): base64 of the empty list's JSON, which
// client-go's watch-list uses to build the list it hands to the reflector.
func (c *Cacher) initialEventsEndFrame(rev int64) []byte {
	if f := c.lastEndBookmark.Load(); f != nil && f.rev == rev {
		return f.b
	}
	obj := c.bookmarkObject(rev)
	blueprint := `{"kind":` + strconv.Quote(c.cfg.Kind+"List") + `,"apiVersion":` +
		strconv.Quote(c.cfg.APIVersion) + `,"metadata":{},"items":null}` + "\n"
	obj.Metadata.Annotations = map[string]string{
		api.InitialEventsEndAnnotation:       "true",
		InitialEventsListBlueprintAnnotation: base64.StdEncoding.EncodeToString([]byte(blueprint)),
	}
	f := &revFrame{rev: rev, b: c.encode(api.Bookmark, obj)}
	c.lastEndBookmark.Store(f)
	return f.b
}

// InitialEventsListBlueprintAnnotation is the annotation of the
// initial-events-end BOOKMARK that holds, base64-encoded, the JSON of an
// empty list of the watched kind (Kubernetes' metav1
// InitialEventsListBlueprintAnnotationKey).
const InitialEventsListBlueprintAnnotation = "kubernetes.io/initial-events-list-blueprint"

// revFrame is a frame remembered together with its revision.
type revFrame struct {
	rev int64
	b   []byte
}

package cacher

import (
	"strconv"
	"sync"
	"sync/atomic"

	"listwatch/api"
)

// Frames: what a watcher is sent. A frame is one complete JSON watch event,
// {"type":"ADDED","object":{...}} and a newline, exactly the bytes the HTTP
// writer puts on the wire. Each is encoded once per event and kind, however
// many watchers get it, and the same bytes are shared by all of them.
// Kubernetes does the same within one dispatch (cacher.go dispatchEvent
// wraps the object in a cachingObject, caching_object.go, which keeps each
// serialization), then drops the serializations; ours stay with the event
// in the ring, so a replay is not encoded again.

// frameEncoder encodes the frames of one resource and counts them, for the
// debug view.
type frameEncoder struct {
	// kind and apiVersion stamp BOOKMARK objects ({"kind":"ConfigMap",...}).
	kind, apiVersion string
	// The last BOOKMARK frames built, kept because the dispatcher sends the
	// same revision to many watchers.
	lastBookmark, lastEndBookmark atomic.Pointer[revFrame]
	framesEncoded, bytesEncoded   atomic.Int64
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

// frame returns the encoded frame of kind k, building it on first use.
func (e *event) frame(enc *frameEncoder, k frameKind) []byte { return *e.frameRef(enc, k) }

// frameRef is frame by reference: what a watcher's queue holds, 8 bytes
// where a slice would take 24 (10,000 watchers with 20 frames queued each
// hold 200,000 of them).
func (e *event) frameRef(enc *frameEncoder, k frameKind) *[]byte {
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
		b = enc.encode(api.Added, e.obj)
	case frameModified:
		b = enc.encode(api.Modified, e.obj)
	case frameDeleted:
		b = enc.encode(api.Deleted, e.obj)
	case frameDeletedPrev:
		// A shallow copy is enough: only the resourceVersion string
		// changes, and the shared maps and fields are only read.
		prev := *e.prev
		prev.Metadata.ResourceVersion = strconv.FormatInt(e.rev, 10)
		b = enc.encode(api.Deleted, &prev)
	}
	e.frames[k].Store(&b)
	return &b
}

// scratchPool holds encoding buffers, so encoding allocates only the exact
// frame it keeps.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// encode builds one frame, {"type":T,"object":...}\n, and counts it.
func (enc *frameEncoder) encode(typ api.EventType, obj *api.Object) []byte {
	sp := scratchPool.Get().(*[]byte)
	ev := api.Event{Type: typ, Object: obj}
	b := append(ev.AppendJSON((*sp)[:0]), '\n')
	out := make([]byte, len(b))
	copy(out, b)
	if cap(b) <= 1<<20 { // do not let one huge object pin a huge buffer
		*sp = b
		scratchPool.Put(sp)
	}
	enc.framesEncoded.Add(1)
	enc.bytesEncoded.Add(int64(len(out)))
	return out
}

// encodeStatus builds the in-stream ERROR frame for a Status.
func (enc *frameEncoder) encodeStatus(s *api.Status) []byte {
	ev := api.Event{Type: api.Error, Status: s}
	b := append(ev.AppendJSON(nil), '\n')
	enc.framesEncoded.Add(1)
	enc.bytesEncoded.Add(int64(len(b)))
	return b
}

// bookmarkObject is what a BOOKMARK carries: an object of the watched kind
// with nothing but metadata.resourceVersion. (kube-apiserver 1.32 also
// wrote "creationTimestamp":null, as in fixture
// watch-bookmarks-timeout5.jsonl; 1.37 leaves a zero time out.)
func (enc *frameEncoder) bookmarkObject(rev int64) *api.Object {
	return &api.Object{
		Kind:       enc.kind,
		APIVersion: enc.apiVersion,
		Metadata:   api.ObjectMeta{ResourceVersion: strconv.FormatInt(rev, 10)},
	}
}

// bookmarkFrame returns the periodic BOOKMARK frame for rev, by reference
// like frameRef. The dispatcher sends the same revision to many watchers,
// so the last frame is kept.
func (enc *frameEncoder) bookmarkFrame(rev int64) *[]byte {
	if f := enc.lastBookmark.Load(); f != nil && f.rev == rev {
		return &f.b
	}
	f := &revFrame{rev: rev, b: enc.encode(api.Bookmark, enc.bookmarkObject(rev))}
	enc.lastBookmark.Store(f)
	return &f.b
}

// initialEventsEndFrame returns the BOOKMARK that ends the synthetic events
// of a watch with sendInitialEvents=true: the bookmark object with the one
// annotation k8s.io/initial-events-end: "true" (storage.AnnotateInitialEventsEndBookmark
// in k8s.io/apiserver v0.37.2 pkg/storage/util.go). kube-apiserver 1.32 also
// sent kubernetes.io/initial-events-list-blueprint, an empty list of the
// kind (fixture watch-sendinitialevents.jsonl); 1.37 no longer does, and
// client-go v0.37.2 does not read it.
func (enc *frameEncoder) initialEventsEndFrame(rev int64) []byte {
	if f := enc.lastEndBookmark.Load(); f != nil && f.rev == rev {
		return f.b
	}
	obj := enc.bookmarkObject(rev)
	obj.Metadata.Annotations = map[string]string{api.InitialEventsEndAnnotation: "true"}
	f := &revFrame{rev: rev, b: enc.encode(api.Bookmark, obj)}
	enc.lastEndBookmark.Store(f)
	return f.b
}

// revFrame is a frame remembered together with its revision.
type revFrame struct {
	rev int64
	b   []byte
}

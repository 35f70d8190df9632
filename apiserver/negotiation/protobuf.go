package negotiation

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"listwatch/api"
	"listwatch/api/protobuf"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
)

// Kubernetes protobuf on the wire, for every kind api/protobuf's schema
// knows (every built-in kind we serve, and the meta kinds Status and
// DeleteOptions).
//
// The server keeps objects as JSON, so protobuf lives only at the edges: a
// protobuf body is turned into the JSON body the same object would have
// been sent as, and from there it takes the JSON path (DecodeObject), so
// nothing downstream can tell the difference; a response is built as JSON
// and, when the client prefers protobuf, transcoded just before it is
// written (WriteJSON). client-go's typed clients prefer protobuf for
// built-in kinds ("Accept: application/vnd.kubernetes.protobuf,
// application/json") and send their bodies, DeleteOptions included, as
// protobuf; kubectl's create generators can send nothing else.

// ProtobufContentType is Kubernetes' protobuf media type.
const ProtobufContentType = protobuf.ContentType

// DecodeProtobufObject reads a protobuf create or update body for res: it
// converts the body to JSON and decodes that exactly as a JSON body.
func DecodeProtobufObject(res *registry.Resource, body []byte, tracer *narrate.Tracer) (*api.Object, error) {
	js, err := ProtobufToJSON(body, res.APIVersion(), res.Kind)
	if err != nil {
		return nil, err
	}
	if tracer.Enabled() {
		tracer.Printf(narrate.HTTP, "read a %d-byte protobuf %s body as %d bytes of JSON", len(body), res.Kind, len(js))
	}
	return DecodeObject(res, js)
}

// ProtobufToJSON converts a Kubernetes protobuf body into the JSON body of
// the same object. A missing kind or apiVersion in the envelope defaults to
// the given ones (the path's, as the protobuf serializer's
// copyKindDefaults). Malformed input is 400 BadRequest, worded as
// kube-apiserver words decode errors (handlers/rest.go
// transformDecodeError); a kind that is readable but wrong for the path is
// left for DecodeObject to refuse, as it refuses the same JSON.
func ProtobufToJSON(body []byte, apiVersion, kind string) ([]byte, error) {
	s := protobuf.Default()
	env, js, err := s.DecodeObject(body, apiVersion, kind)
	if err == nil {
		return js, nil
	}
	// protobuf-go puts a random non-breaking space in its messages so that
	// nobody matches them; ours are read by people.
	msg := strings.ReplaceAll(err.Error(), "\u00a0", " ")
	switch {
	case errors.Is(err, protobuf.ErrUnknownKind):
		return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: no kind %q is registered for version %q",
			env.Kind, env.APIVersion, kind, env.Kind, env.APIVersion))
	case env.Kind == "":
		return nil, api.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)",
			kind, msg, SummarizeBody(body, 30)))
	}
	return nil, api.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", env.Kind, env.APIVersion, kind, msg))
}

// protobufResponse transcodes a JSON response body (an object, a list or
// a Status, each naming its kind and apiVersion) into a protobuf body. ok
// is false for bodies the schema has no message for (Tables, discovery,
// custom resources): those stay JSON, which every client that asks for
// protobuf also accepts.
func protobufResponse(body []byte) (pb []byte, ok bool, err error) {
	var tm typeMeta
	if json.Unmarshal(body, &tm) != nil {
		return nil, false, nil
	}
	s := protobuf.Default()
	if !s.Knows(tm.APIVersion, tm.Kind) {
		return nil, false, nil
	}
	pb, err = s.EncodeObject(tm.APIVersion, tm.Kind, body)
	return pb, true, err
}

// writeProtobuf writes a protobuf body: no trailing newline, never pretty.
func writeProtobuf(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", ProtobufContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	// A write error means the client went away; there is no one to tell.
	_, _ = w.Write(body)
}

// ProtobufWatchContentType is the Content-Type of a protobuf watch.
const ProtobufWatchContentType = protobuf.WatchContentType

// ProtobufWatchFrame re-encodes one JSON watch frame
// ({"type":...,"object":...}\n) as a protobuf watch frame: a 4-byte
// big-endian length and a WatchEvent whose object is the complete protobuf
// body of the object (protobuf-watch-configmaps.pb). An object that does
// not fit its kind's schema becomes an ERROR event with an InternalError
// Status, so the client hears why instead of reading garbage.
func ProtobufWatchFrame(jsonFrame []byte) []byte {
	s := protobuf.Default()
	var ev struct {
		Type   string          `json:"type"`
		Object json.RawMessage `json:"object"`
	}
	var obj []byte
	err := json.Unmarshal(jsonFrame, &ev)
	if err == nil {
		var tm typeMeta
		if err = json.Unmarshal(ev.Object, &tm); err == nil {
			obj, err = s.EncodeObject(tm.APIVersion, tm.Kind, ev.Object)
		}
	}
	if err != nil {
		st := api.NewInternalError(fmt.Errorf("encoding a watch event as %s: %w", ProtobufContentType, err))
		ev.Type = "ERROR"
		obj, _, _ = protobufResponse(st.AppendJSON(nil))
	}
	return s.AppendWatchFrame(nil, ev.Type, obj)
}

// SharedWatchFrames re-encodes JSON watch frames in another form (protobuf,
// metadata only, or both), remembering the last few: the watch cache
// encodes each event once and hands the same frame to every watcher, so
// with a thousand such watches on a resource the re-encoding is done once
// per event, not a thousand times. This is what kube-apiserver 1.37.2 does
// with cachingObject (k8s.io/apiserver v0.37.2
// pkg/storage/cacher/caching_object.go), which keeps an event's object's
// serializations per encoder identifier while the event is dispatched; the
// watch encoders (pkg/endpoints/handlers/response.go, watchEncoder and
// watchEmbeddedEncoder) name the identifier after the format and, for a
// metadata-only watch, the target kind. Ours are kept by frame instead,
// the last ones made, within a count and a byte budget
// (negotiation/protobufcache.go says how LISTs differ). It is safe for
// concurrent use.
type SharedWatchFrames struct {
	encode   func([]byte) []byte
	maxBytes int64

	mu    sync.Mutex
	done  map[*byte]sharedFrame
	ring  []*byte // keys, oldest at head, for eviction
	head  int
	n     int
	bytes int64
}

// ProtobufWatchFrames is SharedWatchFrames re-encoding as protobuf.
type ProtobufWatchFrames = SharedWatchFrames

// sharedFrame is a remembered frame. The entry keeps the JSON frame
// itself alive, so its address cannot be reused for another frame while
// the entry exists: the pointer and length identify it.
type sharedFrame struct {
	json, out []byte
}

// cost is what a remembered frame holds: its JSON, which the watch cache's
// ring may have let go, and the frame made from it.
func (f sharedFrame) cost() int64 { return int64(len(f.json) + len(f.out)) }

// DefaultSharedFrameBytes bounds the frames one SharedWatchFrames
// remembers, in bytes.
const DefaultSharedFrameBytes = 32 << 20

// NewProtobufWatchFrames remembers up to size protobuf frames, and at most
// DefaultSharedFrameBytes.
func NewProtobufWatchFrames(size int) *ProtobufWatchFrames {
	return NewSharedWatchFrames(size, DefaultSharedFrameBytes, ProtobufWatchFrame)
}

// NewSharedWatchFrames remembers up to size frames made by encode from
// JSON frames, and at most maxBytes of them and their JSON.
func NewSharedWatchFrames(size int, maxBytes int64, encode func([]byte) []byte) *SharedWatchFrames {
	return &SharedWatchFrames{encode: encode, maxBytes: maxBytes,
		done: make(map[*byte]sharedFrame, size), ring: make([]*byte, size)}
}

// Frame returns encode(jsonFrame), from memory when the same shared frame
// was re-encoded before.
func (p *SharedWatchFrames) Frame(jsonFrame []byte) []byte {
	if len(jsonFrame) == 0 {
		return p.encode(jsonFrame)
	}
	key := unsafe.SliceData(jsonFrame)
	p.mu.Lock()
	if f, ok := p.done[key]; ok && len(f.json) == len(jsonFrame) {
		p.mu.Unlock()
		return f.out
	}
	p.mu.Unlock()
	out := p.encode(jsonFrame)
	p.remember(key, sharedFrame{json: jsonFrame, out: out})
	return out
}

// remember keeps f, forgetting the oldest frames while there are too many
// or they hold too many bytes. A frame larger than the budget is not kept.
func (p *SharedWatchFrames) remember(key *byte, f sharedFrame) {
	if f.cost() > p.maxBytes || len(p.ring) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if old, ok := p.done[key]; ok { // made twice at once: keep the last
		p.bytes += f.cost() - old.cost()
		p.done[key] = f
		return
	}
	for p.n > 0 && (p.n == len(p.ring) || p.bytes+f.cost() > p.maxBytes) {
		oldest := p.ring[p.head]
		p.bytes -= p.done[oldest].cost()
		delete(p.done, oldest)
		p.ring[p.head] = nil
		p.head = (p.head + 1) % len(p.ring)
		p.n--
	}
	p.ring[(p.head+p.n)%len(p.ring)] = key
	p.n++
	p.bytes += f.cost()
	p.done[key] = f
}

package negotiation

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
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

// BodyFormat is how a request body is encoded.
type BodyFormat int

const (
	// JSONBody is a JSON body (or one without a Content-Type).
	JSONBody BodyFormat = iota
	// ProtobufBody is a Kubernetes protobuf body of a kind we read.
	ProtobufBody
)

// ObjectBodyFormat decides, from the Content-Type alone, whether a create
// or update body for res can be read: JSON (or no Content-Type, which
// Kubernetes reads as JSON) always, protobuf for every kind the protobuf
// schema knows (not custom resources, which real Kubernetes serves as JSON
// only too). Anything else is 415 naming the types this path accepts.
func ObjectBodyFormat(r *http.Request, res *registry.Resource) (BodyFormat, error) {
	return BodyFormatOf(r, protobuf.Default().Knows(res.APIVersion(), res.Kind))
}

// BodyFormatOf is ObjectBodyFormat for a body whose kind is known in
// advance (DeleteOptions): protobufOK says whether protobuf is readable.
func BodyFormatOf(r *http.Request, protobufOK bool) (BodyFormat, error) {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return JSONBody, nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case err == nil && mt == JSONContentType:
		return JSONBody, nil
	case err == nil && mt == ProtobufContentType && protobufOK:
		return ProtobufBody, nil
	case protobufOK:
		return 0, api.NewUnsupportedMediaType(ct, []string{JSONContentType, ProtobufContentType})
	default:
		return 0, api.NewUnsupportedMediaType(ct, []string{JSONContentType})
	}
}

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

// ProtobufWatchFrames re-encodes JSON watch frames as protobuf frames,
// remembering the last few: the watch cache encodes each event once and
// hands the same frame to every watcher, so with a thousand protobuf
// watches on a resource the transcoding is done once per event, not a
// thousand times. It is safe for concurrent use.
type ProtobufWatchFrames struct {
	mu   sync.Mutex
	done map[*byte]protobufFrame
	ring []*byte // keys in insertion order, for eviction
	next int
}

// protobufFrame is a remembered frame. The entry keeps the JSON frame
// itself alive, so its address cannot be reused for another frame while
// the entry exists: the pointer and length identify it.
type protobufFrame struct {
	json, out []byte
}

// NewProtobufWatchFrames remembers up to size frames.
func NewProtobufWatchFrames(size int) *ProtobufWatchFrames {
	return &ProtobufWatchFrames{done: make(map[*byte]protobufFrame, size), ring: make([]*byte, size)}
}

// Frame returns ProtobufWatchFrame(jsonFrame), from memory when the same
// shared frame was re-encoded before.
func (p *ProtobufWatchFrames) Frame(jsonFrame []byte) []byte {
	if len(jsonFrame) == 0 {
		return ProtobufWatchFrame(jsonFrame)
	}
	key := unsafe.SliceData(jsonFrame)
	p.mu.Lock()
	if f, ok := p.done[key]; ok && len(f.json) == len(jsonFrame) {
		p.mu.Unlock()
		return f.out
	}
	p.mu.Unlock()
	out := ProtobufWatchFrame(jsonFrame)
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.done[key]; !ok {
		if old := p.ring[p.next]; old != nil {
			delete(p.done, old)
		}
		p.ring[p.next] = key
		p.next = (p.next + 1) % len(p.ring)
	}
	p.done[key] = protobufFrame{json: jsonFrame, out: out}
	return out
}

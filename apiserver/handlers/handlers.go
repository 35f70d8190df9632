package handlers

import (
	"context"
	"net/http"
	"sync/atomic"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/watchserver"
	"listwatch/narrate"
	"listwatch/store"
)

// Handlers serve the verbs of the resource API: one file per verb (get.go,
// list.go, create.go, update.go, patch.go, delete.go, watch.go), each
// reading the request, doing what the verb does to the store or the watch
// cache, and answering through package negotiation.
type Handlers struct {
	store  store.Interface
	reg    *registry.Registry
	watch  *watchserver.Server
	tracer *narrate.Tracer
	// protobufWatch is the Encoding of every protobuf watch; its frames
	// are re-encoded once per event for all such watches.
	protobufWatch *watchserver.Encoding
	// metadataWatches are the Encodings of metadata-only watches, by
	// metadata version and then JSON (false) or protobuf (true); their
	// frames too are re-encoded once per event for all such watches.
	metadataWatches map[string]map[bool]*watchserver.Encoding
	// protobufItems are the protobuf encodings of listed objects, so a
	// protobuf LIST transcodes each object once, not twice per LIST
	// (negotiation/protobufcache.go); nil when turned off.
	protobufItems *negotiation.ProtobufEncodings
	// bigLists are the seats big LISTs take turns in (listseats.go).
	bigLists *listSeats
	// storeWatches numbers the watches of resources that are not
	// watch-cached (watch.go); stopping ends them (StopStoreWatches).
	storeWatches     atomic.Int64
	stopping         context.Context
	stopStoreWatches context.CancelFunc
	// schemas are the kinds' schemas server-side apply and the recording
	// of updates read (managedfields.go).
	schemas applySchemas
}

// New returns the handlers of the resources in reg over st; watches are
// served by ws. protobufCacheBytes bounds the protobuf encodings of listed
// objects kept (0 or less: none).
func New(st store.Interface, reg *registry.Registry, ws *watchserver.Server, tracer *narrate.Tracer, protobufCacheBytes int64) *Handlers {
	frames := negotiation.NewProtobufWatchFrames(protobufFramesRemembered)
	stopping, stop := context.WithCancel(context.Background())
	return &Handlers{store: st, reg: reg, watch: ws, tracer: tracer, bigLists: newListSeats(),
		stopping: stopping, stopStoreWatches: stop,
		protobufItems:   negotiation.NewProtobufEncodings(protobufCacheBytes),
		metadataWatches: metadataWatchEncodings(),
		protobufWatch: &watchserver.Encoding{
			ContentType: negotiation.ProtobufWatchContentType,
			Binary:      true,
			NewFrame:    func() func([]byte) []byte { return frames.Frame },
		}}
}

// ProtobufCacheStats returns what the protobuf encodings of listed objects
// hold and have done.
func (h *Handlers) ProtobufCacheStats() negotiation.ProtobufCacheStats {
	return h.protobufItems.Stats()
}

// metadataWatchEncodings returns the Encodings of metadata-only watches,
// for each version of PartialObjectMetadata: the garbage collector's and
// the quota controller's metadata informers ask for them, protobuf first.
func metadataWatchEncodings() map[string]map[bool]*watchserver.Encoding {
	encodings := map[string]map[bool]*watchserver.Encoding{}
	for _, v := range []string{"meta.k8s.io/v1", "meta.k8s.io/v1beta1"} {
		partial := negotiation.PartialWatchFrame(v)
		asJSON := negotiation.NewSharedWatchFrames(protobufFramesRemembered, metadataSharedFrameBytes, partial)
		asProtobuf := negotiation.NewSharedWatchFrames(protobufFramesRemembered, metadataSharedFrameBytes,
			func(f []byte) []byte { return negotiation.ProtobufWatchFrame(partial(f)) })
		encodings[v] = map[bool]*watchserver.Encoding{
			false: {ContentType: negotiation.JSONContentType,
				NewFrame: func() func([]byte) []byte { return asJSON.Frame }},
			true: {ContentType: negotiation.ProtobufWatchContentType, Binary: true,
				NewFrame: func() func([]byte) []byte { return asProtobuf.Frame }},
		}
	}
	return encodings
}

// StopStoreWatches ends, cleanly, every watch of a resource that is not
// watch-cached, and refuses new ones: the server is stopping. (Stopping
// the watch caches does the same for every other watch.)
func (h *Handlers) StopStoreWatches() { h.stopStoreWatches() }

// metadataSharedFrameBytes bounds each of the four metadata-only watch
// encodings' remembered frames (two versions of PartialObjectMetadata, as
// JSON and as protobuf), so that with the protobuf watches' 32 MiB
// (negotiation.DefaultSharedFrameBytes) every shared frame together holds
// at most 64 MiB. A remembered frame is charged its JSON frame too, and a
// metadata frame is a small part of it.
const metadataSharedFrameBytes = 8 << 20

// protobufFramesRemembered is how many re-encoded watch frames are kept:
// enough for a burst of events that every protobuf watch of a resource is
// still catching up on.
const protobufFramesRemembered = 4096

// Serve runs one resource request whose verb the route table has found
// (VerbOf) and allowed: it parses what the verb reads from the query and
// calls the verb's handler.
func (h *Handlers) Serve(w http.ResponseWriter, r *http.Request, ri RequestInfo, verb string) {
	if ri.Name != "" {
		if err := checkPathName(ri.Name); err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
	}
	if ri.Subresource == registry.SubresourceScale {
		h.serveScale(w, r, ri, verb)
		return
	}
	switch verb {
	case registry.VerbGet, registry.VerbList:
		out, err := negotiation.NegotiateOutput(r)
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		if verb == registry.VerbGet {
			h.serveGet(w, r, ri, out)
			return
		}
		p, err := parseListParams(r.URL.Query(), false, "")
		if err == nil {
			err = p.forResource(ri.Entry.Resource)
		}
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		h.serveList(w, r, ri, p, out)
	case registry.VerbWatch:
		out, err := negotiation.NegotiateOutput(r)
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		p, err := parseListParams(r.URL.Query(), true, ri.Name)
		if err == nil {
			err = p.forResource(ri.Entry.Resource)
		}
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		h.serveWatch(w, r, ri, p, out)
	case registry.VerbCreate, registry.VerbUpdate, registry.VerbPatch, registry.VerbDelete, registry.VerbDeleteCollection:
		// Not faster than the watch cache can fan the writes out
		// (cacher/backpressure.go): at most a second's wait, never a refusal.
		if c := ri.Entry.Cacher; c != nil {
			done, _ := c.AdmitWrite(r.Context())
			defer done()
		}
		h.serveWrite(w, r, ri, verb)
	default:
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
	}
}

// serveWrite dispatches the verbs that change objects.
func (h *Handlers) serveWrite(w http.ResponseWriter, r *http.Request, ri RequestInfo, verb string) {
	switch verb {
	case registry.VerbCreate:
		h.serveCreate(w, r, ri)
	case registry.VerbUpdate:
		h.serveUpdate(w, r, ri)
	case registry.VerbPatch:
		h.servePatch(w, r, ri)
	case registry.VerbDelete:
		h.serveDelete(w, r, ri)
	case registry.VerbDeleteCollection:
		h.serveDeleteCollection(w, r, ri)
	default:
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
	}
}

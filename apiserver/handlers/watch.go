package handlers

import (
	"context"
	"net/http"
	"time"

	"listwatch/api/protobuf"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/storagewatch"
	"listwatch/apiserver/watchserver"
)

// WATCH, the request side. A watch is not a separate API: it is the GET of
// a list with ?watch=true (or the legacy /watch/ path). This handler turns
// the query, already parsed and checked (params.go), into the watch
// cache's WatchOptions and hands the request to the WatchServer, which
// registers the watcher and writes the stream (package watchserver).
// Kubernetes: handlers/get.go ListResource (the watch branch).

func (h *Handlers) serveWatch(w http.ResponseWriter, r *http.Request, ri RequestInfo, p listParams, out negotiation.Output) {
	opts := cacher.WatchOptions{
		SendInitialEvents: defaultSendInitialEvents(p),
		AllowBookmarks:    p.allowBookmarks,
		Namespace:         ri.Namespace,
		Label:             p.label,
		Field:             p.field,
		FieldMatch:        p.fieldMatch,
	}
	if p.resourceVersion != "" {
		rv, err := parseResourceVersion(p.resourceVersion)
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		opts.ResourceVersion, opts.RVSet = rv, true
	}
	timeout := watchTimeout(p.timeoutSeconds)
	h.watch.Serve(w, r, watchserver.Request{Source: h.watchSource(ri), Options: opts, Timeout: timeout,
		Resource: ri.Entry.Name, Namespace: ri.Namespace, Encoding: h.watchEncoding(ri.Entry.Resource, out)})
}

// watchSource is where the watch's frames come from: the resource's watch
// cache, or for a resource that is not watch-cached (Events) a watch of
// the store of its own, as kube-apiserver's undecorated storage watches
// etcd (registry.Resource.NotWatchCached, package storagewatch).
func (h *Handlers) watchSource(ri RequestInfo) watchserver.Source {
	if ri.Entry.Cacher != nil {
		return watchserver.FromCache(ri.Entry.Cacher)
	}
	res := ri.Entry.Resource
	return func(ctx context.Context, opts cacher.WatchOptions) (watchserver.Watcher, error) {
		sw, err := storagewatch.Start(ctx, storagewatch.Config{Store: res.Storage(h.store),
			Prefix: res.CollectionPrefix(ri.Namespace), Kind: res.Kind, APIVersion: res.APIVersion(),
			ID: h.storeWatches.Add(1), Stopping: h.stopping}, opts)
		if err != nil {
			return nil, err
		}
		return sw, nil
	}
}

// defaultSendInitialEvents is the watch's sendInitialEvents as
// kube-apiserver 1.37 defaults it (metainternalversion
// SetListOptionsDefaults, with the WatchList feature on, as it is by
// default): a watch that starts from no particular point (resourceVersion
// unset or "0") and says neither sendInitialEvents nor
// resourceVersionMatch gets sendInitialEvents=true with NotOlderThan. It
// gets the current state as ADDED events either way; what the default
// adds is, when it asked for bookmarks, the initial-events-end BOOKMARK
// after them and, from a client accepting gzip, a compressed response.
func defaultSendInitialEvents(p listParams) *bool {
	if p.sendInitialEvents != nil || p.rvMatch != "" || (p.resourceVersion != "" && p.resourceVersion != "0") {
		return p.sendInitialEvents
	}
	yes := true
	return &yes
}

// watchEncoding picks how a watch writes its events: Tables for kubectl
// get -w, protobuf frames for a client that prefers protobuf and a kind
// that has a protobuf message, else the cacher's JSON frames as they are.
func (h *Handlers) watchEncoding(res *registry.Resource, out negotiation.Output) *watchserver.Encoding {
	switch {
	case out.Metadata != "":
		// The garbage collector's metadata informers: each event's
		// object reduced to its metadata, then protobuf if asked, once
		// per event for all such watches.
		if enc := h.metadataWatches[out.MetadataVersion][out.Protobuf]; enc != nil {
			return enc
		}
		partial := negotiation.PartialWatchFrame(out.MetadataVersion)
		if out.Protobuf {
			return &watchserver.Encoding{ContentType: negotiation.ProtobufWatchContentType, Binary: true,
				NewFrame: func() func([]byte) []byte {
					return func(f []byte) []byte { return negotiation.ProtobufWatchFrame(partial(f)) }
				}}
		}
		return &watchserver.Encoding{ContentType: negotiation.JSONContentType,
			NewFrame: func() func([]byte) []byte { return partial }}
	case out.Table != "":
		// kubectl get -w: each event a Table of one row, as the real
		// server streams it (watch-table-kubectl-get-w.jsonl).
		return &watchserver.Encoding{ContentType: negotiation.JSONContentType,
			NewFrame: func() func([]byte) []byte { return res.TableWatchFrame(out.Table, out.TableInclude) }}
	case out.Protobuf && protobuf.Default().Knows(res.APIVersion(), res.Kind):
		return h.protobufWatch
	}
	return nil
}

// MaxWatchTimeout is the longest watch the server grants, whatever
// ?timeoutSeconds asks: the longest default one (twice the default
// --min-request-timeout). A client asking for more gets this and re-watches
// like after any other timeout. kube-apiserver multiplies the value by a
// second without a bound; ours once did too, and timeoutSeconds=9223372037
// overflowed to a negative duration (a watch that never ended) and
// 18446744074 wrapped to 0.3 s.
const MaxWatchTimeout = time.Hour

// watchTimeout is the timeout a watch asked for: 0 when absent or 0 (the
// server's randomised default applies), else the asked seconds clamped to
// MaxWatchTimeout, compared in seconds so the product cannot overflow.
// (Negative values were refused with 400 by parseListParams.)
func watchTimeout(seconds *int64) time.Duration {
	if seconds == nil || *seconds <= 0 {
		return 0
	}
	return time.Duration(min(*seconds, int64(MaxWatchTimeout/time.Second))) * time.Second
}

package handlers

import (
	"net/http"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/watchserver"
)

// WATCH, the request side. A watch is not a separate API: it is the GET of
// a list with ?watch=true (or the legacy /watch/ path). This handler turns
// the query, already parsed and checked (params.go), into the watch
// cache's WatchOptions and hands the request to the WatchServer, which
// registers the watcher and writes the stream (package watchserver).
// Kubernetes: handlers/get.go ListResource (the watch branch).

func (h *Handlers) serveWatch(w http.ResponseWriter, r *http.Request, ri RequestInfo, p listParams) {
	opts := cacher.WatchOptions{
		SendInitialEvents: p.sendInitialEvents,
		AllowBookmarks:    p.allowBookmarks,
		Namespace:         ri.Namespace,
		Label:             p.label,
		Field:             p.field,
	}
	if p.resourceVersion != "" {
		rv, err := parseResourceVersion(p.resourceVersion)
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		opts.ResourceVersion, opts.RVSet = rv, true
	}
	var timeout time.Duration
	if p.timeoutSeconds != nil && *p.timeoutSeconds > 0 {
		timeout = time.Duration(*p.timeoutSeconds) * time.Second
	}
	h.watch.Serve(w, r, watchserver.Request{Cacher: ri.Entry.Cacher, Options: opts, Timeout: timeout,
		Resource: ri.Entry.Name, Namespace: ri.Namespace})
}

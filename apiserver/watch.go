package apiserver

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/narrate"
)

// WATCH, the request side. A watch is not a separate API: it is the GET of
// a list with ?watch=true (or the legacy /watch/ path). The server answers
// 200 at once and keeps the response open, writing one JSON event per line
// as things change, until the timeout. This file turns the query into the
// watch cache's WatchOptions, registers the watcher and picks the timeout;
// watch_serve.go writes the stream (chunked HTTP or websocket).
// Kubernetes: handlers/get.go handleWatch, handlers/watch.go.

// watchTimeout is how long a watch may last: ?timeoutSeconds exactly, or the
// default MinRequestTimeout × (1 + rand), the randomisation that spreads
// re-watches of thousands of clients over time instead of having them all
// come back at once.
func (s *Server) watchTimeout(p listParams) time.Duration {
	if p.timeoutSeconds != nil && *p.timeoutSeconds > 0 {
		return time.Duration(*p.timeoutSeconds) * time.Second
	}
	if d := s.faults.watchTimeoutOverride(); d > 0 {
		return d
	}
	return time.Duration(float64(s.cfg.MinRequestTimeout) * (1 + rand.Float64()))
}

// isWebSocket reports whether the request asks to upgrade to a websocket
// (Upgrade: websocket and a Connection header listing "upgrade").
func isWebSocket(r *http.Request) bool {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for tok := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request, ri requestInfo, p listParams) {
	opts := cacher.WatchOptions{
		SendInitialEvents: p.sendInitialEvents,
		AllowBookmarks:    p.allowBookmarks,
		Namespace:         ri.namespace,
		Label:             p.label,
		Field:             p.field,
		Description:       r.UserAgent(),
	}
	if p.resourceVersion != "" {
		rv, err := parseResourceVersion(p.resourceVersion)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		opts.ResourceVersion, opts.RVSet = rv, true
	}
	timeout := s.watchTimeout(p)
	opts.Deadline = time.Now().Add(timeout)

	// The watch ends when the client goes away, when its timeout passes
	// (the writer ends the response cleanly) or when the server stops. Its
	// context is the server's, not the request's: an HTTP/1.1 watch
	// outlives its handler, and net/http ends the request's context when
	// the handler returns. Until then, the request's end (the client gone
	// while we wait for the watch cache) ends the watch too.
	ctx, cancel := context.WithCancel(s.ctx)
	stopReq := context.AfterFunc(r.Context(), cancel)

	cw, err := ri.rs.cacher.Watch(ctx, opts)
	if err != nil {
		stopReq()
		cancel()
		s.writeError(w, r, err)
		return
	}
	ws := isWebSocket(r)
	s.counters.watchesStarted.Add(1)
	resource, ns := ri.rs.res.Name, ri.namespace
	if s.tracer.Enabled() {
		transport := "chunked"
		if ws {
			transport = "websocket"
		}
		s.tracer.Printf(narrate.HTTP, "WATCH %s%s rv=%q label=%q field=%q bookmarks=%v timeout=%s over %s",
			resource, nsSuffix(ns), p.resourceVersion, p.label.String(), p.field.String(),
			p.allowBookmarks, timeout.Round(time.Second), transport)
	}
	// end is the watch's clean-up, wherever the watch ends: in the handler
	// or in the goroutine serving it after the handler.
	end := func() {
		stopReq()
		cw.Stop()
		cancel()
		s.counters.watchesEnded.Add(1)
		if s.tracer.Enabled() {
			s.tracer.Printf(narrate.HTTP, "WATCH %s%s ended", resource, nsSuffix(ns))
		}
	}
	detached := false
	defer func() {
		if !detached {
			end()
		}
	}()
	rest := startWatch(w, r.WithContext(ctx), watchStream{
		watcher: cw,
		timeout: timeout,
		stall:   s.faults.stallChannel(),
		kill:    s.faults.killChannel(),
		held:    &s.faults.held,
		ws:      ws,
		tracer:  s.tracer,
	})
	if rest == nil {
		return
	}
	// The HTTP/1.1 watch goes on after the handler, from a goroutine of
	// ours: net/http frees the connection's goroutine and buffers, which
	// are most of what an idle watch would otherwise cost.
	stopReq()
	detached = true
	s.detach(w, r, func() {
		defer end()
		rest(ctx)
	})
}

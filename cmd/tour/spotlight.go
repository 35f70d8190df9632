package main

import (
	"strings"
	"sync/atomic"

	"listwatch/narrate"
)

// spotlight is the filter of the tour's one Tracer. Every layer narrates
// everything it does; the spotlight keeps what the current chapter is
// about, so the story of a few objects is not buried under routine lines
// (the apiserver starting seven watch caches, bookmarks, other objects'
// events):
//
//   - every line about a followed object (default/demo, default/alpha);
//     in the "trip" chapter from every layer, otherwise only where the
//     change enters (store) and where it lands (queue, handler);
//   - where a change lands (queue, handler) for the objects followed only
//     there (default/busy, whose burst of writes would bury the story if
//     the store's lines about it were kept);
//   - the lines that tell a watch's life: the LIST and WATCH requests,
//     the StreamWatcher opening and ending, the server's timeout, the
//     killed connection, the 410, the Reflector's decisions, the queue's
//     Replace and tombstones;
//   - the tour's own network lines.
//
// Run the tour with -all to switch it off and see every line.
type spotlight struct {
	quiet  atomic.Bool // the tour is over: nothing more
	all    bool
	follow []string // "namespace/name" keys
	// landing are keys followed only where their changes land: the queue
	// and the handler.
	landing []string
	trip    atomic.Bool // the trip chapter: every layer's lines about followed objects
	// scene, when set, replaces the rules above: a chapter about a side
	// story (the hot loop, RetryWatcher) keeps only its own lines, not
	// the informer's routine re-watches happening meanwhile.
	scene atomic.Pointer[func(layer, line string) bool]
}

// focus makes keep follow f until the returned function is called.
func (s *spotlight) focus(f func(layer, line string) bool) (restore func()) {
	s.scene.Store(&f)
	return func() { s.scene.Store(nil) }
}

// layers returns a scene that keeps every line of the given layers.
func layers(names ...string) func(layer, line string) bool {
	return func(layer, _ string) bool {
		for _, n := range names {
			if layer == n {
				return true
			}
		}
		return false
	}
}

// keep is the narrate.WithFilter function.
func (s *spotlight) keep(layer, line string) bool {
	if s.quiet.Load() {
		return false
	}
	if s.all {
		return true
	}
	if f := s.scene.Load(); f != nil {
		return (*f)(layer, line)
	}
	if layer == networkLayer {
		return true
	}
	if (layer == narrate.Queue || layer == narrate.Handler) && mentions(line, s.landing) {
		return true
	}
	if s.followed(line) {
		if s.trip.Load() {
			return true
		}
		switch layer {
		case narrate.Store, narrate.Queue, narrate.Handler:
			return true
		}
		return false
	}
	return lifecycle(layer, line, s.trip.Load())
}

func (s *spotlight) followed(line string) bool { return mentions(line, s.follow) }

// mentions reports whether line names one of keys.
func mentions(line string, keys []string) bool {
	for _, k := range keys {
		if strings.Contains(line, k) {
			return true
		}
	}
	return false
}

// lifecycle reports whether a line not about a followed object tells part
// of a watch's life.
func lifecycle(layer, line string, trip bool) bool {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(line, s) {
				return true
			}
		}
		return false
	}
	switch layer {
	case narrate.HTTP:
		switch {
		case strings.HasPrefix(line, "WATCH configmaps") && has("timeout="):
			return true // the server accepted a watch, with its timeout
		case strings.HasPrefix(line, "FAULT"):
			return true
		case strings.HasPrefix(line, "client read chunk") && has(`"ERROR"`):
			return true // the raw bytes of an in-stream error
		case has("timeout after", "killed:"):
			return true
		case strings.HasPrefix(line, "GET /api/v1/namespaces/default/configmaps?") && !has("watch=true"):
			return true // the client's LIST request, with its query
		case trip && strings.HasPrefix(line, "watch ") && has("wrote"):
			return true // the server writing the followed event's frame
		}
	case narrate.WatchCache:
		return strings.HasPrefix(line, "configmaps: watch ") || has("too old") ||
			strings.HasPrefix(line, "configmaps: fault")
	case narrate.StreamWatcher:
		return has("watch open", "stream ended", "ERROR")
	case narrate.Reflector:
		// Its events for objects not followed are left out; its bookmarks
		// and errors, and all its decisions, are kept.
		return !has("event ") || has("event BOOKMARK", "event ERROR")
	case narrate.Queue:
		return has("replaced at rv", "tombstone")
	case narrate.Indexer:
		return has("replaced with")
	case narrate.Processor:
		return has("synced")
	}
	return false
}

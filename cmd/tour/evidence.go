package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"listwatch/api"
)

// evidence records what the tour observed, from the informer's handler,
// the ListerWatcher wrapper and the Reflector's error handler, so that the
// tour can wait for each stage to happen and fail clearly if it did not.
// It is written from several goroutines and read by the tour.
type evidence struct {
	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every record

	notes     []note     // what the handler was told, in order
	watches   []watchReq // every watch the Reflector opened
	lists     []string   // the resourceVersion of every List asked for
	expired   int        // 410 errors the Reflector reported
	waiting   int        // requests that found the cable unplugged
	lastError error      // the last error the Reflector reported
	// tripSteps are the steps of the trip chapter whose narration lines
	// have been printed (see tripStep).
	tripSteps map[string]bool
}

// note is one call of the tour's handler.
type note struct {
	verb      string // "add", "update", "delete"
	key       string
	rv        string
	tombstone bool // the delete carried a DeletedFinalStateUnknown
	initial   bool // the add was part of the initial list
}

// watchReq is one Watch call of the Reflector.
type watchReq struct {
	rv string
	at time.Time
}

func newEvidence() *evidence {
	return &evidence{changed: make(chan struct{}), tripSteps: map[string]bool{}}
}

// record runs f under the lock and wakes every waiter.
func (e *evidence) record(f func()) {
	e.mu.Lock()
	defer e.mu.Unlock()
	f()
	close(e.changed)
	e.changed = make(chan struct{})
}

// waitFor blocks until cond holds (it is checked under the lock), ctx is
// done or limit passes. what names the stage in the error.
func (e *evidence) waitFor(ctx context.Context, limit time.Duration, what string, cond func() bool) error {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		e.mu.Lock()
		ok, ch := cond(), e.changed
		e.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-timer.C:
			return fmt.Errorf("%s: did not happen within %v", what, limit)
		}
	}
}

// The predicates below are called by waitFor, with the lock held.

// handled reports whether the handler was told verb for key at rv ("" for
// any resourceVersion).
func (e *evidence) handled(verb, key, rv string) bool {
	for _, n := range e.notes {
		if n.verb == verb && n.key == key && (rv == "" || n.rv == rv) {
			return true
		}
	}
	return false
}

// tombstoned reports whether key was deleted through a tombstone.
func (e *evidence) tombstoned(key string) bool {
	for _, n := range e.notes {
		if n.verb == "delete" && n.key == key && n.tombstone {
			return true
		}
	}
	return false
}

// watchCount is how many watches the Reflector has asked for.
func (e *evidence) watchCount() int { return len(e.watches) }

// listCount is how many lists the Reflector has asked for.
func (e *evidence) listCount() int { return len(e.lists) }

// handlerNote turns a handler call into a note.
func handlerNote(verb string, obj *api.Object, tombstone, initial bool) note {
	n := note{verb: verb, tombstone: tombstone, initial: initial}
	if obj != nil {
		n.key, n.rv = obj.Key(), obj.Metadata.ResourceVersion
	}
	return n
}

// The steps of one event's trip, as the layers narrate them: each is a
// layer name, except that the HTTP layer has two, the server writing the
// frame and the client reading it off the socket.
var tripSteps = []string{"store", "watchcache", "http (server wrote)", "http (client read)",
	"streamwatcher", "reflector", "queue", "indexer", "processor", "handler"}

// tripStep names the step a printed narration line shows, or "" if it is
// not part of the followed object's trip.
func tripStep(layer, msg, key string) string {
	switch {
	case layer == "http" && strings.HasPrefix(msg, "watch ") && strings.Contains(msg, "wrote"):
		return "http (server wrote)"
	case !strings.Contains(msg, key):
		return ""
	case layer == "http" && strings.HasPrefix(msg, "client read chunk"):
		return "http (client read)"
	case layer == "http":
		return "" // the CREATE request itself
	}
	return layer
}

// missingTripSteps lists the trip's steps not printed yet; called with the
// lock held.
func (e *evidence) missingTripSteps() []string {
	var missing []string
	for _, s := range tripSteps {
		if !e.tripSteps[s] {
			missing = append(missing, s)
		}
	}
	return missing
}

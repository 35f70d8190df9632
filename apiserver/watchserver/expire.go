package watchserver

import (
	"context"
	"sync"
)

// The expire fault, ours and not Kubernetes': a workshop switch
// (faults.ExpireWatchesIn) that makes the timeout of the watches in a scope
// pass now, so a room sees every client re-watch at once. kube-apiserver
// has no such switch: a watch ends at its timeout (k8s.io/apiserver v0.37.2
// pkg/endpoints/handlers/get.go, handleWatch), when the client goes, or
// when the server stops.
//
// It costs a watch nothing until it is used: no context, timer or
// goroutine of its own, only the pump's cancel, which already ends the
// watch with errWatchTimeout at its timeout (watchContext, pump.go).

// expiry is a watch's part in the expire fault.
type expiry struct {
	mu      sync.Mutex
	expired bool
	// end ends the pump's context; nil until the pump runs.
	end context.CancelCauseFunc
}

// arm gives the fault the pump's cancel: an expiry from now on ends the
// pump at once, and one that came before the pump ran ends it now.
func (e *expiry) arm(end context.CancelCauseFunc) {
	e.mu.Lock()
	e.end = end
	expired := e.expired
	e.mu.Unlock()
	if expired {
		end(errWatchTimeout)
	}
}

// expire ends the watch as its timeout would. It reports false for a
// watch expired before (still ending), which is not counted again.
func (e *expiry) expire() bool {
	e.mu.Lock()
	if e.expired {
		e.mu.Unlock()
		return false
	}
	e.expired = true
	end := e.end
	e.mu.Unlock()
	if end != nil {
		end(errWatchTimeout)
	}
	return true
}

// Expire makes the timeout of every watch being served that match
// accepts pass now (the expire fault): each ends as its timer would have
// ended it. It returns how many it ended (a watch expired before and still
// ending is not counted again).
func (s *Server) Expire(match func(WatchInfo) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for wt := range s.open {
		if match(wt.info()) && wt.expiry.expire() {
			n++
		}
	}
	return n
}

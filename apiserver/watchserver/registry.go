package watchserver

import (
	"sort"
	"time"
)

// The watches being served, for the debug view and the connection-wide
// faults: which transport each uses and which connection carries it.

// WatchInfo is one watch being served, as the debug view shows it.
type WatchInfo struct {
	// ID is the cache watcher's id, unique within its resource (the watch
	// cache's stats use it too).
	ID        int64  `json:"id"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	// Transport is one of the Transport constants.
	Transport string `json:"transport"`
	// Connection is the id of the connection carrying the watch (0 when
	// unknown); HTTP/2 watches of one client share it.
	Connection int64     `json:"connection"`
	UserAgent  string    `json:"userAgent,omitempty"`
	RemoteAddr string    `json:"remoteAddr,omitempty"`
	Started    time.Time `json:"started"`
}

func (s *Server) register(wt *watch) {
	s.mu.Lock()
	s.open[wt] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) unregister(wt *watch) {
	s.mu.Lock()
	delete(s.open, wt)
	s.mu.Unlock()
}

func (s *Server) setTransport(wt *watch, transport string) {
	s.mu.Lock()
	wt.transport = transport
	s.mu.Unlock()
}

// Watches returns the watches being served, oldest first.
func (s *Server) Watches() []WatchInfo {
	s.mu.Lock()
	out := make([]WatchInfo, 0, len(s.open))
	for wt := range s.open {
		out = append(out, wt.info())
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// info is the watch as the debug view shows it; the caller holds the
// Server's lock (transport may change under it).
func (wt *watch) info() WatchInfo {
	info := WatchInfo{ID: wt.id, Resource: wt.resource, Namespace: wt.namespace, Transport: wt.transport,
		UserAgent: wt.userAgent, RemoteAddr: wt.remoteAddr, Started: wt.started}
	if wt.conn != nil {
		info.Connection = wt.conn.ID()
	}
	return info
}

// FreezeHTTP2Connections freezes every connection that carries an HTTP/2
// watch (the stall fault over HTTP/2: see h2.go) and returns how many.
func (s *Server) FreezeHTTP2Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for wt := range s.open {
		if wt.transport == TransportH2Stream && wt.conn != nil && !wt.conn.Frozen() {
			wt.conn.Freeze()
			n++
		}
	}
	return n
}

package apiserver

import (
	"context"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/faults"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/watchserver"
)

// The debug view: GET /debug/listwatch is a read-only JSON picture of the
// server, always on, so a learner can find their informer's watch on the
// server side: every watch cache with its revision, history span, open
// watchers (selector, start time, last revision sent, buffer use) and
// counters (events dispatched, 410s, watchers closed for being too slow or
// killed), plus the server's own counters and the fault switches' state.
// Kubernetes spreads the same information over /metrics and -v logs.

// debugPath is where the debug view lives.
const debugPath = "/debug/listwatch"

// counters are the server's request counters.
type counters struct {
	verbs map[string]*atomic.Int64 // fixed at construction: read-only map
	gone  atomic.Int64             // 410 responses (lists and continue tokens)
}

func newCounters() *counters {
	c := &counters{verbs: map[string]*atomic.Int64{}}
	for _, v := range slices.Concat(registry.AllVerbs, []string{"discovery"}) {
		c.verbs[v] = &atomic.Int64{}
	}
	return c
}

func (c *counters) countVerb(verb string) {
	if n, ok := c.verbs[verb]; ok {
		n.Add(1)
	}
}

// debugView is the JSON of /debug/listwatch.
type debugView struct {
	Now               time.Time        `json:"now"`
	StoreRevision     int64            `json:"storeRevision"`
	CompactedRevision int64            `json:"compactedRevision"`
	Requests          map[string]int64 `json:"requestsByVerb"`
	Gone              int64            `json:"gone410"`
	WatchesStarted    int64            `json:"watchesStarted"`
	WatchesEnded      int64            `json:"watchesEnded"`
	WatchesOpen       int64            `json:"watchesOpen"`
	ClosedTooSlow     int64            `json:"closedTooSlow"`
	// Connections counts the open client connections, and those that
	// speak HTTP/2 (each carrying any number of watches).
	Connections connectionCounts `json:"connections"`
	// Watches are the watches being served: transport and connection.
	Watches []watchserver.WatchInfo `json:"watches"`
	// Limits are the request, watch and connection limits and what they
	// hold now (docs/limits.md).
	Limits limitsView `json:"limits"`
	// WatchWriters is the line watches wait in to write: how many may
	// write at once, how many do, how many wait (cacher/turns.go).
	WatchWriters cacher.TurnsStats `json:"watchWriters"`
	// ProtobufListCache is what the protobuf encodings of listed objects
	// hold and have saved (negotiation/protobufcache.go).
	ProtobufListCache negotiation.ProtobufCacheStats `json:"protobufListCache"`
	Caches            []cacher.Stats                 `json:"watchCaches"`
	Faults            faults.State                   `json:"faults"`
	FaultsOverHTTP    bool                           `json:"faultsOverHTTP"`
}

// limitsView is the debug view of the limits: in flight now, the caps,
// and how many requests and connections they refused.
type limitsView struct {
	filters.InFlightStats
	Connections         int64 `json:"connections"`
	MaxConnections      int64 `json:"maxConnections"`
	RejectedConnections int64 `json:"rejectedConnections503"`
}

// connectionCounts are the debug view's connection counts.
type connectionCounts struct {
	Open  int `json:"open"`
	HTTP2 int `json:"http2"`
}

func (s *Server) debugView() debugView {
	v := debugView{
		Now:               time.Now().UTC(),
		StoreRevision:     s.storeRevision(),
		CompactedRevision: s.store.CompactedRevision(),
		Requests:          map[string]int64{},
		Gone:              s.counters.gone.Load(),
		Faults:            s.faults.State(),
		FaultsOverHTTP:    s.cfg.EnableFaults,
	}
	v.Limits = limitsView{InFlightStats: s.limits.Stats(), Connections: s.connLimit.Open(),
		MaxConnections: s.connLimit.Max(), RejectedConnections: s.connLimit.Rejected()}
	v.WatchesStarted, v.WatchesEnded = s.watch.Counts()
	v.WatchWriters = s.turns.Stats()
	v.ProtobufListCache = s.handlers.ProtobufCacheStats()
	v.Watches = s.watch.Watches()
	for _, c := range s.conns.List() {
		v.Connections.Open++
		if c.HTTP2() {
			v.Connections.HTTP2++
		}
	}
	v.WatchesOpen = v.WatchesStarted - v.WatchesEnded
	for verb, n := range s.counters.verbs {
		v.Requests[verb] = n.Load()
	}
	for _, e := range s.registry.Entries() {
		if e.Cacher == nil {
			continue // not watch-cached
		}
		st := e.Cacher.Stats()
		if st.Watchers == nil {
			st.Watchers = []cacher.WatcherStat{}
		}
		v.ClosedTooSlow += st.ClosedTooSlow
		v.Caches = append(v.Caches, st)
	}
	return v
}

func (s *Server) serveDebug(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	negotiation.WriteBody(w, http.StatusOK, negotiation.MustJSON(s.debugView()), true)
}

// debugStoreTimeout bounds the debug view's read of the store's revision (a
// request to etcd when the server runs on it).
const debugStoreTimeout = 5 * time.Second

// storeRevision is the store's current revision for the debug view; 0 if
// the store cannot say (etcd unreachable).
func (s *Server) storeRevision() int64 {
	ctx, cancel := context.WithTimeout(s.ctx, debugStoreTimeout)
	defer cancel()
	rev, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return 0
	}
	return rev
}

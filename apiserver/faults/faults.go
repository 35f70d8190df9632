package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
	"listwatch/store"
)

// Fault switches for workshops: the failures list-watch clients meet in
// production, on demand. Each is a method of Faults (the Go API) and, when
// the server runs with EnableFaults (--enable-faults), a POST under
// /faults/:
//
//	POST /faults/kill-watches                        drop every open watch connection abruptly (tcpkill; over
//	                                                 HTTP/2 the whole connection, all its streams)
//	POST /faults/kill-watch-streams                  drop every open watch abruptly, over HTTP/2 one stream
//	                                                 each (RST_STREAM), the connection going on
//	POST /faults/compact                             compact history now: older watches and continue tokens get 410
//	POST /faults/stall-watches                       open watches stop writing but stay open (half-open; over
//	                                                 HTTP/2 the whole connection freezes, PINGs unanswered)
//	POST /faults/watch-timeout?duration=10s          default watch timeout (0 restores MinRequestTimeout×(1+rand))
//	POST /faults/expire-watches                      every open watch's timeout passes now: a clean end of stream
//	POST /faults/expire-watches?userAgent=kubectl&resource=configmaps&namespace=default
//	                                                 only the open watches that match (each parameter optional)
//	POST /faults/bookmark-interval?duration=5s       periodic bookmark interval (0 restores the configured one)
//	POST /faults/fail-resource?resource=configmaps&group=&code=429&duration=30s
//	                                                 a resource answers 403 or 429 for a while
//	POST /faults/request-delay?duration=200ms        every non-watch request waits first (a slow handler)
//	GET  /faults                                     the switches' current state, and the last ones thrown
//	                                                 over HTTP with who threw them (log.go)
//
// How many watchers the watch cache closed for being too slow is in the
// debug view (/debug/listwatch, closedTooSlow).

// Path is where the HTTP fault switches live, apart from the API.
const Path = "/faults"

// Faults are the workshop fault switches of one Server. They are safe for
// concurrent use.
type Faults struct {
	reg              *registry.Registry
	store            store.Interface
	tracer           *narrate.Tracer
	defaultBookmarks time.Duration

	mu sync.Mutex
	// stall is closed by StallWatches; watches started before see it
	// closed, later ones get the next channel.
	stall chan struct{}
	// kill is closed by KillWatchConnections, like stall: it reaches the
	// connections the watch cache no longer knows about, the stalled ones.
	kill chan struct{}
	// held counts stalled connections being held open.
	held             atomic.Int64
	watchTimeout     time.Duration
	bookmarkInterval time.Duration
	delay            time.Duration
	failing          map[api.GroupResource]resourceFailure
	counts           Counts
	log              switchLog
	// freezeHTTP2 freezes the connections of HTTP/2 watches (OnStall).
	freezeHTTP2 func() int
	// expire ends the open watches in a scope as their timeouts would
	// (OnExpire).
	expire func(WatchScope) int
}

// resourceFailure makes one resource answer code until a deadline.
type resourceFailure struct {
	code  int
	until time.Time
}

// Counts says how often each fault fired, for the debug view.
type Counts struct {
	Kills       int64 `json:"killWatchConnections"`
	StreamKills int64 `json:"killWatchStreams"`
	Killed      int64 `json:"watchesKilled"`
	Compactions int64 `json:"compactions"`
	Expiries    int64 `json:"expireWatches"`
	Stalls      int64 `json:"stalls"`
	Failures    int64 `json:"failedRequests"`
}

// New returns the switches of a server's resources (their watch caches
// are reached through reg once started) over store. defaultBookmarks is
// the bookmark interval SetBookmarkInterval(0) restores; tracer narrates
// every switch thrown.
func New(reg *registry.Registry, st store.Interface, defaultBookmarks time.Duration, tracer *narrate.Tracer) *Faults {
	return &Faults{reg: reg, store: st, tracer: tracer, defaultBookmarks: defaultBookmarks,
		stall: make(chan struct{}), kill: make(chan struct{}), failing: map[api.GroupResource]resourceFailure{}}
}

// KillWatchConnections drops every open watch connection abruptly, with no
// clean end of stream, the way tcpkill does in the first article. Clients
// see a broken connection and must re-watch. An HTTP/2 connection is
// reset whole: every stream on it dies, other watches and requests alike.
// It returns how many watches it killed.
func (f *Faults) KillWatchConnections() int {
	f.mu.Lock()
	// Stalled connections have left the watch cache; they are dropped
	// through the kill channel they hold. Closing it first also tells each
	// HTTP/2 watch killed below that the kill is a connection's, not its
	// stream's.
	n := int(f.held.Load())
	close(f.kill)
	f.kill = make(chan struct{})
	f.mu.Unlock()
	n += f.killWatchers()
	f.mu.Lock()
	f.counts.Kills++
	f.counts.Killed += int64(n)
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT killed %d watch connection(s)", n)
	return n
}

// KillWatchStreams drops every open watch abruptly, like
// KillWatchConnections, except that over HTTP/2 it resets each watch's
// stream only and the connection carries on (a stalled watch is left
// alone). Over HTTP/1.1 and websockets a watch is its connection: the two
// faults are the same. It returns how many watches it killed.
func (f *Faults) KillWatchStreams() int {
	n := f.killWatchers()
	f.mu.Lock()
	f.counts.StreamKills++
	f.counts.Killed += int64(n)
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT killed %d watch stream(s)", n)
	return n
}

// killWatchers ends every watcher of every watch cache with
// cacher.ErrKilled: its writer drops it abruptly. (The watches of a
// resource that is not watch-cached, Events, are store watches of their
// own and are not killed.)
func (f *Faults) killWatchers() int {
	entries := f.reg.Entries()
	caches := make([]*cacher.Cacher, 0, len(entries))
	for _, e := range entries {
		if e.Cacher != nil {
			caches = append(caches, e.Cacher)
		}
	}
	return cacher.KillAll(caches)
}

// compactTimeout bounds CompactNow's read of the store's revision (a
// request to etcd when the server runs on it).
const compactTimeout = 10 * time.Second

// CompactNow compacts the store's history at its current revision, as
// etcd's compactor does every five minutes: from then on a watch from an
// older revision or a continue token issued before gets 410 Expired. It
// returns the compacted revision.
func (f *Faults) CompactNow() int64 {
	ctx, cancel := context.WithTimeout(context.Background(), compactTimeout)
	defer cancel()
	rev, err := f.store.CurrentRevision(ctx)
	if err != nil {
		f.tracer.Printf(narrate.HTTP, "FAULT compact: reading the store's revision failed: %v", err)
		return 0
	}
	if err := f.store.Compact(rev); err != nil {
		f.tracer.Printf(narrate.HTTP, "FAULT compact at %d failed: %v", rev, err)
	}
	f.mu.Lock()
	f.counts.Compactions++
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT compacted history at revision %d", rev)
	return rev
}

// StallWatches makes every open watch stop writing without closing its
// connection: a half-open connection, as when a peer vanishes without a
// FIN. Over HTTP/1.1 only a client-side idle timeout notices. Over HTTP/2
// the whole connection freezes (no frame at all, no answer to PINGs), so
// the client's HTTP/2 health check finds it. Watches started later are
// not affected.
func (f *Faults) StallWatches() {
	f.mu.Lock()
	close(f.stall)
	f.stall = make(chan struct{})
	f.counts.Stalls++
	freeze := f.freezeHTTP2
	f.mu.Unlock()
	frozen := 0
	if freeze != nil {
		frozen = freeze()
	}
	f.tracer.Printf(narrate.HTTP, "FAULT stalled open watches (half-open); %d HTTP/2 connection(s) frozen", frozen)
}

// OnStall sets how StallWatches freezes the connections of HTTP/2 watches
// (the WatchServer knows them); it returns how many it froze.
func (f *Faults) OnStall(freezeHTTP2 func() int) {
	f.mu.Lock()
	f.freezeHTTP2 = freezeHTTP2
	f.mu.Unlock()
}

// SetWatchTimeout sets the timeout of watches that do not ask for one
// (?timeoutSeconds), instead of MinRequestTimeout × (1 + rand); 0 restores
// that default. Watches already open keep their timeout.
func (f *Faults) SetWatchTimeout(d time.Duration) {
	f.mu.Lock()
	f.watchTimeout = max(d, 0)
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT default watch timeout set to %s", d)
}

// ExpireWatches makes the timeout of every open watch pass now: each ends
// exactly as its timer would have ended it (the same code path, a clean
// end of the response, not a dropped connection), and the client re-watches.
// Watches started later keep their own timeout. It lets a test or a
// workshop decide when a watch times out rather than guess how long a
// write and its delivery take; kube-apiserver has no such switch, only the
// timer (see watchserver.Server.Timeout). It returns how many watches it
// ended.
func (f *Faults) ExpireWatches() int { return f.ExpireWatchesIn(WatchScope{}) }

// WatchScope picks some of the open watches: those that match every field
// that is set. The zero WatchScope is every watch.
type WatchScope struct {
	// Resource is the watched resource, as in its path: "configmaps".
	Resource string
	// Namespace is the watched namespace; a watch across all namespaces
	// has none, and only the zero Namespace matches it.
	Namespace string
	// UserAgent is a prefix of the client's User-Agent: "kubectl" is
	// every kubectl, "kubectl/v1.37.2" one release.
	UserAgent string
}

// Matches reports whether a watch of resource in namespace, by a client
// sending userAgent, is in the scope.
func (sc WatchScope) Matches(resource, namespace, userAgent string) bool {
	return (sc.Resource == "" || sc.Resource == resource) &&
		(sc.Namespace == "" || sc.Namespace == namespace) &&
		strings.HasPrefix(userAgent, sc.UserAgent)
}

// String is the scope as narration shows it.
func (sc WatchScope) String() string {
	var parts []string
	for _, p := range [][2]string{{"resource", sc.Resource}, {"namespace", sc.Namespace}, {"userAgent", sc.UserAgent}} {
		if p[1] != "" {
			parts = append(parts, p[0]+"="+p[1])
		}
	}
	if len(parts) == 0 {
		return "every open watch"
	}
	return "the open watches with " + strings.Join(parts, ", ")
}

// ExpireWatchesIn is ExpireWatches for the watches in scope only: the
// others, a client's informer beside the watch being shown for instance,
// go on. It returns how many watches it ended.
func (f *Faults) ExpireWatchesIn(scope WatchScope) int {
	f.mu.Lock()
	expire := f.expire
	f.counts.Expiries++
	f.mu.Unlock()
	n := 0
	if expire != nil {
		n = expire(scope)
	}
	f.tracer.Printf(narrate.HTTP, "FAULT the timeout of %s passed now: %d ended", scope, n)
	return n
}

// OnExpire sets how ExpireWatchesIn ends the watches in a scope as their
// timeouts would (the WatchServer knows them); it returns how many it
// ended.
func (f *Faults) OnExpire(expire func(WatchScope) int) {
	f.mu.Lock()
	f.expire = expire
	f.mu.Unlock()
}

// SetBookmarkInterval changes the periodic bookmark interval of every watch
// cache; 0 restores Config.BookmarkInterval.
func (f *Faults) SetBookmarkInterval(d time.Duration) {
	f.mu.Lock()
	f.bookmarkInterval = max(d, 0)
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT bookmark interval set to %s", d)
}

// FailResource makes every request for resource gr answer code for the
// given duration: 403 Forbidden, or 429 TooManyRequests asking the client
// to retry after a second (what API priority and fairness sends under
// load). A duration of 0 ends the failure.
func (f *Faults) FailResource(gr api.GroupResource, code int, duration time.Duration) error {
	if code != http.StatusForbidden && code != http.StatusTooManyRequests {
		return fmt.Errorf("apiserver: FailResource code must be 403 or 429, not %d", code)
	}
	if f.reg.ByGroupResource(gr) == nil {
		return fmt.Errorf("apiserver: FailResource: unknown resource %q", gr)
	}
	f.mu.Lock()
	if duration <= 0 {
		delete(f.failing, gr)
	} else {
		f.failing[gr] = resourceFailure{code: code, until: time.Now().Add(duration)}
	}
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT %s answers %d for %s", gr, code, duration)
	return nil
}

// SetRequestDelay makes every non-watch request wait d before it is
// handled: a slow handler. 0 turns it off.
func (f *Faults) SetRequestDelay(d time.Duration) {
	f.mu.Lock()
	f.delay = max(d, 0)
	f.mu.Unlock()
	f.tracer.Printf(narrate.HTTP, "FAULT request delay set to %s", d)
}

// StallChannel is the channel a new watch watches for a stall.
func (f *Faults) StallChannel() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stall
}

// KillChannel is the channel a new watch holds for the kill fault.
func (f *Faults) KillChannel() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kill
}

// Held counts the stalled connections being held open; a watch that
// holds one adds itself while it does, so the kill fault can count it.
func (f *Faults) Held() *atomic.Int64 { return &f.held }

// WatchTimeout is the timeout SetWatchTimeout set for watches that do not
// ask for one; 0 when none is set.
func (f *Faults) WatchTimeout() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.watchTimeout
}

// BookmarkInterval is what the watch caches read for each bookmark.
func (f *Faults) BookmarkInterval() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.bookmarkInterval > 0 {
		return f.bookmarkInterval
	}
	return f.defaultBookmarks
}

// RequestDelay is how long every non-watch request waits first.
func (f *Faults) RequestDelay() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delay
}

// Failure returns the Status a failing resource answers, or nil.
func (f *Faults) Failure(gr api.GroupResource) *api.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	rf, ok := f.failing[gr]
	if !ok {
		return nil
	}
	if time.Now().After(rf.until) {
		delete(f.failing, gr)
		return nil
	}
	f.counts.Failures++
	if rf.code == http.StatusForbidden {
		return api.NewForbidden(gr, "", "access denied by the fail-resource fault switch")
	}
	return api.NewTooManyRequests("Too many requests, please try again later.", 1)
}

// State is GET /faults and the debug view's "faults".
type State struct {
	WatchTimeout     string            `json:"watchTimeout,omitempty"`
	BookmarkInterval string            `json:"bookmarkInterval"`
	RequestDelay     string            `json:"requestDelay,omitempty"`
	Failing          map[string]string `json:"failingResources,omitempty"`
	Counts           Counts            `json:"counts"`
	// Switched are the last switches thrown over HTTP, oldest first (see
	// log.go).
	Switched []Switched `json:"switched"`
}

// State is the switches' current state.
func (f *Faults) State() State {
	interval := f.BookmarkInterval()
	f.mu.Lock()
	defer f.mu.Unlock()
	st := State{BookmarkInterval: interval.String(), Counts: f.counts, Switched: slices.Clone(f.log.last)}
	if st.Switched == nil {
		st.Switched = []Switched{}
	}
	if f.watchTimeout > 0 {
		st.WatchTimeout = f.watchTimeout.String()
	}
	if f.delay > 0 {
		st.RequestDelay = f.delay.String()
	}
	now := time.Now()
	for gr, rf := range f.failing {
		if st.Failing == nil {
			st.Failing = map[string]string{}
		}
		st.Failing[gr.String()] = fmt.Sprintf("%d for %s", rf.code, rf.until.Sub(now).Round(time.Second))
	}
	return st
}

// ServeHTTP is the HTTP side of the switches, under Path.
func (f *Faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, Path), "/")
	if name == "" {
		if r.Method != http.MethodGet {
			negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
			return
		}
		negotiation.WriteJSON(w, r, http.StatusOK, negotiation.MustJSON(f.State()))
		return
	}
	if r.Method != http.MethodPost {
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	result, found, err := f.throw(name, r.URL.Query())
	if !found {
		negotiation.NotFoundText(w, r)
		return
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	result["seq"] = f.logSwitch(r, name, result)
	b, _ := json.Marshal(result)
	negotiation.WriteJSON(w, r, http.StatusOK, b)
}

// throw throws the switch name with the query's parameters and returns
// what it did, for the answer; found is false for an unknown switch.
func (f *Faults) throw(name string, q url.Values) (result map[string]any, found bool, err error) {
	duration := func() (time.Duration, error) {
		v := q.Get("duration")
		if v == "" {
			return 0, api.NewBadRequest("duration is required, e.g. ?duration=10s")
		}
		if n, err := strconv.Atoi(v); err == nil {
			return time.Duration(n) * time.Second, nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, api.NewBadRequest(fmt.Sprintf("duration: invalid value %q: want a duration such as 10s", v))
		}
		return d, nil
	}
	result = map[string]any{"fault": name}
	switch name {
	case "kill-watches":
		result["killed"] = f.KillWatchConnections()
	case "kill-watch-streams":
		result["killed"] = f.KillWatchStreams()
	case "compact":
		result["compactedRevision"] = f.CompactNow()
	case "stall-watches":
		f.StallWatches()
	case "expire-watches":
		result["expired"] = f.ExpireWatchesIn(WatchScope{Resource: q.Get("resource"),
			Namespace: q.Get("namespace"), UserAgent: q.Get("userAgent")})
	case "watch-timeout":
		var d time.Duration
		if d, err = duration(); err == nil {
			f.SetWatchTimeout(d)
			result["watchTimeout"] = d.String()
		}
	case "bookmark-interval":
		var d time.Duration
		if d, err = duration(); err == nil {
			f.SetBookmarkInterval(d)
			result["bookmarkInterval"] = d.String()
		}
	case "request-delay":
		var d time.Duration
		if d, err = duration(); err == nil {
			f.SetRequestDelay(d)
			result["requestDelay"] = d.String()
		}
	case "fail-resource":
		var d time.Duration
		code, cerr := strconv.Atoi(q.Get("code"))
		if d, err = duration(); err == nil {
			if cerr != nil {
				err = api.NewBadRequest("code must be 403 or 429")
			} else if ferr := f.FailResource(api.GroupResource{Group: q.Get("group"), Resource: q.Get("resource")}, code, d); ferr != nil {
				err = api.NewBadRequest(ferr.Error())
			}
		}
		result["resource"], result["code"], result["duration"] = q.Get("resource"), code, d.String()
	default:
		return nil, false, nil
	}
	return result, true, err
}

package watchserver

import (
	"context"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/apiserver/cacher"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/serving"
	"listwatch/narrate"
)

// Config configures a WatchServer.
type Config struct {
	// Context lives as long as the apiserver: its end (Stop) ends every
	// watch. nil is context.Background().
	Context context.Context
	// MinRequestTimeout: a watch that does not ask for a timeout lasts
	// MinRequestTimeout × (1 + rand). 0 means no timeout at all.
	MinRequestTimeout time.Duration
	// Faults are the fault switches a watch obeys; nil obeys none.
	Faults Faults
	// Detach runs the rest of an HTTP/1.1 watch after its handler returns
	// (see Server.Serve), in a goroutine the apiserver waits for at Stop.
	// rest must not touch w or r. nil runs rest in the handler.
	Detach func(w http.ResponseWriter, r *http.Request, rest func())
	// Tracer narrates every watch; nil is silent.
	Tracer *narrate.Tracer
	// WriteTimeout bounds each write of an HTTP/1.1 watch (chunked.go):
	// a client that reads nothing for this long loses its connection. 0
	// is filters.ResponseWriteTimeout, a minute.
	WriteTimeout time.Duration
}

// Faults are the fault switches a watch obeys (package faults implements
// them): the stall and kill channels it holds from its start, the count of
// stalled connections held open, and an override of the default timeout.
// (The expire fault reaches watches through Server.Expire.)
type Faults interface {
	StallChannel() <-chan struct{}
	KillChannel() <-chan struct{}
	Held() *atomic.Int64
	WatchTimeout() time.Duration
}

// Server is the WatchServer: it serves every watch request of an
// apiserver. It is safe for concurrent use.
type Server struct {
	cfg     Config
	started atomic.Int64
	ended   atomic.Int64

	mu   sync.Mutex
	open map[*watch]struct{} // the watches being served

	// compressors compress watch-lists (gzip.go), one per CPU.
	compressors *compressors
}

// New returns a WatchServer.
func New(cfg Config) *Server {
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = filters.ResponseWriteTimeout
	}
	return &Server{cfg: cfg, open: map[*watch]struct{}{}, compressors: newCompressors(runtime.GOMAXPROCS(0))}
}

// Counts returns how many watches have started and how many have ended.
func (s *Server) Counts() (started, ended int64) { return s.started.Load(), s.ended.Load() }

// Request is one watch request, its query already parsed and checked by
// the REST layer (handlers/watch.go).
type Request struct {
	// Source opens the watch: the resource's watch cache (FromCache), or
	// a store watch for a resource that is not watch-cached (source.go).
	Source Source
	// Options are the watch cache's options from the query; Serve fills in
	// Deadline and Description.
	Options cacher.WatchOptions
	// Timeout is ?timeoutSeconds; 0 when absent (the default applies).
	Timeout time.Duration
	// Resource and Namespace name the watch in narration.
	Resource, Namespace string
	// Encoding re-encodes the cacher's JSON frames for this watch
	// (protobuf, Tables); nil writes them as they are, JSON.
	Encoding *Encoding
}

// Encoding is how one watch writes its frames when it does not write the
// cacher's shared JSON frames as they are: the response's Content-Type and
// a function from one JSON frame ({"type":...,"object":...}\n) to the
// frame to write. The cacher still encodes each event once; a watch with
// an Encoding pays for its own re-encoding. NewFrame is called once per
// watch, so its function may keep state (a Table watch sends its column
// definitions only in the first event).
type Encoding struct {
	ContentType string
	// Binary frames cannot travel over a websocket as text messages; a
	// binary Encoding is refused for websocket watches, which stay JSON.
	Binary   bool
	NewFrame func() func(jsonFrame []byte) []byte
}

// Serve serves one watch request, in the order a watch lives:
//
//  1. the deadline: ?timeoutSeconds, or the randomised default;
//  2. a watcher: registered with the watch cache, which from now on
//     queues this watch's frames, encoded once for every watcher (or a
//     store watch of its own, for a resource that is not watch-cached:
//     source.go);
//  3. a writer for the transport: a websocket (websocket.go), the bare
//     HTTP/1.1 connection taken over from net/http (chunked.go), one
//     HTTP/2 stream (h2.go), or net/http's ResponseWriter (stream.go);
//  4. frames until the deadline (pump, below): the same loop whatever the
//     transport;
//  5. the end: the watcher leaves the cache, then the writer ends the
//     stream cleanly, or drops it for a kill.
//
// An HTTP/1.1 watch runs steps 4 and 5 after the handler has returned (see
// chunked.go); every other watch returns once it has ended.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, req Request) {
	// 1. The deadline.
	timeout := s.Timeout(req.Timeout)
	// 2. A cache watcher.
	wt, r, stopReq, end := s.openWatch(w, r, req, timeout)
	if wt == nil {
		return
	}
	// 3. A writer for the transport, then 4 and 5. A watch-list may be
	// compressed (gzip.go): a writer of its own in front of the
	// transport's.
	compress := func(wr writer) writer { return wr }
	if wantsGzip(r, req.Options, wt.transport) {
		setGzipHeaders(w.Header())
		compress = func(wr writer) writer { return &gzipWriter{writer: wr, pool: s.compressors} }
	}
	switch wt.transport {
	case TransportH1Websocket:
		defer end()
		serveWebsocket(w, r, wt)
	case TransportH2Stream:
		defer end()
		setWatchHeaders(w, r, wt.contentType)
		if sw := newStreamWriter(w, r); sw != nil {
			wt.pump(compress(&h2Writer{streamWriter: sw, conn: wt.conn, kill: wt.kill}))
		}
	default:
		wr, hijacked := hijackChunked(w, r, wt, wt.contentType)
		if !hijacked {
			defer end()
			s.setTransport(wt, TransportH1Stream)
			if sw := newStreamWriter(w, r); sw != nil {
				wt.pump(compress(sw))
			}
			return
		}
		if wr == nil { // the connection broke before the headers were out
			end()
			return
		}
		// The HTTP/1.1 watch goes on after the handler, from a goroutine
		// of ours: net/http frees the connection's goroutine and buffers,
		// which are most of what an idle watch would otherwise cost.
		stopReq()
		s.detach(w, r, func() {
			defer end()
			wt.pump(compress(wr))
		})
	}
}

// openWatch is step 2 of Serve: it registers a cache watcher for the
// request and returns the watch, the request with the watch's context,
// the function that stops the request's end from ending the watch, and
// the watch's clean-up, to call wherever the watch ends: in the handler or
// in the goroutine serving it after the handler. When the watch cache
// refuses the watch it writes the error and returns a nil watch.
//
// The watch ends when the client goes away, when its timeout passes (the
// writer ends the response cleanly) or when the server stops. Its context
// is the server's, not the request's: an HTTP/1.1 watch outlives its
// handler, and net/http ends the request's context when the handler
// returns. Until then, the request's end (the client gone while we wait
// for the watch cache) ends the watch too.
func (s *Server) openWatch(w http.ResponseWriter, r *http.Request, req Request, timeout time.Duration) (wt *watch, watchReq *http.Request, stopReq func() bool, end func()) {
	opts := req.Options
	opts.Description = r.UserAgent()
	opts.RemoteAddr = r.RemoteAddr
	// The watch cache shows the transport in its stats too (the debug view
	// and the live page read it there).
	opts.Transport = transportOf(r)
	opts.Request = requestURI(r)
	if timeout > 0 {
		opts.Deadline = time.Now().Add(timeout)
	}
	conn := serving.FromContext(r.Context())
	ctx, cancel := context.WithCancel(s.cfg.Context)
	stopReq = context.AfterFunc(r.Context(), cancel)
	cw, err := req.Source(ctx, opts)
	if err != nil {
		stopReq()
		cancel()
		negotiation.WriteError(w, r, err)
		return nil, r, nil, nil
	}
	wt = s.newWatch(cw, timeout, req, r, conn)
	s.started.Add(1)
	s.register(wt)
	if wt.tracer.Enabled() {
		wt.tracer.Printf(narrate.HTTP, "WATCH %s%s rv=%q label=%q field=%q bookmarks=%v timeout=%s over %s%s",
			req.Resource, nsSuffix(req.Namespace), rvString(opts), opts.Label.String(), opts.Field.String(),
			opts.AllowBookmarks, timeout.Round(time.Second), wt.transport, connSuffix(conn))
	}
	end = func() {
		stopReq()
		cw.Stop()
		cancel()
		s.unregister(wt)
		s.ended.Add(1)
		if wt.tracer.Enabled() {
			wt.tracer.Printf(narrate.HTTP, "WATCH %s%s ended", req.Resource, nsSuffix(req.Namespace))
		}
	}
	return wt, r.WithContext(ctx), stopReq, end
}

// detach runs rest after the handler (or in it, without Config.Detach).
func (s *Server) detach(w http.ResponseWriter, r *http.Request, rest func()) {
	if s.cfg.Detach == nil {
		rest()
		return
	}
	s.cfg.Detach(w, r, rest)
}

// Timeout is how long a watch that asked for requested (?timeoutSeconds;
// 0 when absent) may last: requested exactly, or the default
// MinRequestTimeout × (1 + rand), the randomisation that spreads re-watches
// of thousands of clients over time instead of having them all come back
// at once.
func (s *Server) Timeout(requested time.Duration) time.Duration {
	if requested > 0 {
		return requested
	}
	if s.cfg.Faults != nil {
		if d := s.cfg.Faults.WatchTimeout(); d > 0 {
			return d
		}
	}
	return time.Duration(float64(s.cfg.MinRequestTimeout) * (1 + rand.Float64()))
}

// newWatch is the state of one watch the pump needs.
func (s *Server) newWatch(cw Watcher, timeout time.Duration, req Request, r *http.Request, conn *serving.Conn) *watch {
	wt := &watch{id: cw.ID(), watcher: cw, timeout: timeout, writeTimeout: s.cfg.WriteTimeout, tracer: s.cfg.Tracer,
		transport: transportOf(r), conn: conn, resource: req.Resource, namespace: req.Namespace,
		userAgent: r.UserAgent(), remoteAddr: r.RemoteAddr, started: time.Now(), contentType: headerJSON}
	if f := s.cfg.Faults; f != nil {
		wt.stall, wt.kill, wt.held = f.StallChannel(), f.KillChannel(), f.Held()
	}
	if enc := req.Encoding; enc != nil && !(enc.Binary && wt.transport == TransportH1Websocket) {
		wt.encode = enc.NewFrame()
		wt.contentType = []string{enc.ContentType}
	}
	return wt
}

// The transports a watch is served over, as narration and the debug view
// name them.
const (
	// TransportH1Chunked is an HTTP/1.1 chunked response on a connection
	// of its own (chunked.go).
	TransportH1Chunked = "h1 chunked"
	// TransportH1Websocket is a websocket, one text message per event
	// (websocket.go).
	TransportH1Websocket = "h1 websocket"
	// TransportH2Stream is one stream of a shared HTTP/2 connection
	// (h2.go).
	TransportH2Stream = "h2 stream"
	// TransportH1Stream is net/http's own HTTP/1.x response: HTTP/1.0, or
	// a connection that cannot be taken over (stream.go).
	TransportH1Stream = "h1 stream"
)

// transportOf picks the transport the request asks for.
func transportOf(r *http.Request) string {
	switch {
	case isWebSocket(r):
		return TransportH1Websocket
	case r.ProtoMajor == 2:
		return TransportH2Stream
	case r.ProtoAtLeast(1, 1):
		return TransportH1Chunked
	default:
		return TransportH1Stream
	}
}

// connSuffix renders " on connection <id>" for narration.
func connSuffix(c *serving.Conn) string {
	if c == nil {
		return ""
	}
	return " on connection " + strconv.FormatInt(c.ID(), 10)
}

// requestURI is the request's target as the client sent it (path and
// query), which net/http already holds: the debug view shows it for every
// watch, so it is not built again for each (URL.RequestURI allocates). A
// request made in-process has none and gets its URL's.
func requestURI(r *http.Request) string {
	if r.RequestURI != "" {
		return r.RequestURI
	}
	return r.URL.RequestURI()
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

// rvString is the watch's resourceVersion as narration shows it.
func rvString(opts cacher.WatchOptions) string {
	if !opts.RVSet {
		return ""
	}
	return strconv.FormatInt(opts.ResourceVersion, 10)
}

// nsSuffix renders " in <ns>" for narration.
func nsSuffix(ns string) string {
	if ns == "" {
		return ""
	}
	return " in " + ns
}

package apiserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver/cacher"
	"listwatch/apiserver/crd"
	"listwatch/apiserver/faults"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/handlers"
	"listwatch/apiserver/metrics"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/serving"
	"listwatch/apiserver/ui"
	"listwatch/apiserver/watchserver"
	"listwatch/narrate"
	"listwatch/store"
)

// Server is the toy kube-apiserver: the Kubernetes REST API over a store,
// with one watch cache per resource. Start it, talk to URL() with curl,
// kubectl or client-go, Stop it.
type Server struct {
	cfg    Config
	tracer *narrate.Tracer

	listener   net.Listener
	httpServer *http.Server
	serveDone  chan struct{}
	store      store.Interface
	// ownStore: the server made the store (Config.Store was nil) and
	// closes it on Stop.
	ownStore bool

	registry *registry.Registry
	// published is discovery and OpenAPI as last built: rebuilt whenever a
	// CustomResourceDefinition adds or removes a resource.
	published atomic.Pointer[published]
	started   time.Time
	// crds serves CustomResourceDefinitions (customresources.go).
	crds       *crd.Controller
	crdsRun    sync.WaitGroup
	crdsCancel context.CancelFunc
	// crdMu serialises Install and Uninstall with Stop; crdsStopped is
	// set under it.
	crdMu       sync.Mutex
	crdsStopped bool
	// undeleted are the custom resources no longer served whose objects
	// Uninstall could not all delete, for its next call to finish; under
	// crdMu.
	undeleted map[api.GroupResource]*registry.Resource
	handlers  *handlers.Handlers
	watch     *watchserver.Server
	// turns is the line every watch cache's watchers write in turn.
	turns *cacher.Turns

	faults   *faults.Faults
	counters *counters
	// metrics are served at /metrics (metrics.go).
	metrics *metrics.Metrics
	// conns are the open connections; tlsConfig is nil for plain HTTP,
	// caPEM the certificate clients should trust when it was generated.
	conns     *serving.Conns
	tlsConfig *tls.Config
	caPEM     []byte
	// ui serves the live page under /ui/ (apiserver/ui).
	ui http.Handler
	// writeTimeout bounds writing one non-watch response.
	writeTimeout time.Duration
	// limits are the in-flight request and open-watch limits
	// (filters/inflight.go); listener caps open connections.
	limits    *filters.InFlight
	connLimit *filters.ConnLimiter

	// ctx lives as long as the server; Stop cancels it, which ends the
	// watch caches, open watches and any request still running.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	stopping bool
	inflight sync.WaitGroup
	stopOnce sync.Once
	stopErr  error
}

// Faults are the workshop fault switches of a Server (package faults).
type Faults = faults.Faults

// cacherStoreWatchBuffer is how far each watch cache's one store watch may
// fall behind. That watch is the only one per resource, so it is given
// room to absorb a burst of writes (a benchmark or a chaos writer) while the
// cache applies them; the store's default suits ordinary watchers. If a
// burst still overflows it, the cache re-lists and its clients re-watch.
// The store takes the memory for a backlog only while there is one
// (store/spill.go): an idle resource's cache costs no buffer of this size.
const cacherStoreWatchBuffer = 16384

// Start starts a server: it listens on cfg.Listen, creates the store with
// the namespaces a new cluster has (registry.InitialNamespaces), starts
// one watch cache per resource and serves HTTP until Stop. ctx bounds
// start-up only.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	tlsConfig, caPEM, err := cfg.tls()
	if err != nil {
		return nil, err
	}
	tcp, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("apiserver: listen on %s: %w", cfg.Listen, err)
	}
	ln := filters.LimitListener(tcp, cfg.MaxConnections)
	s := &Server{
		turns:        cacher.NewTurns(cfg.WatchWriters),
		conns:        serving.NewConns(),
		tlsConfig:    tlsConfig,
		caPEM:        caPEM,
		cfg:          cfg,
		tracer:       cfg.Tracer,
		listener:     ln,
		serveDone:    make(chan struct{}),
		store:        cfg.Store,
		registry:     registry.New(append(registry.Builtin(), crd.DefinitionsResource(isBuiltin))),
		started:      time.Now(),
		counters:     newCounters(),
		ui:           ui.Handler(),
		writeTimeout: cmp.Or(cfg.WriteTimeout, filters.ResponseWriteTimeout),
		limits:       filters.NewInFlight(cfg.MaxRequestsInFlight, cfg.MaxMutatingRequestsInFlight, cfg.MaxWatches),
		connLimit:    ln,
	}
	if s.store == nil {
		s.store = store.New(store.Options{Tracer: cfg.Tracer, WatchBuffer: cacherStoreWatchBuffer,
			HistoryBytes: cfg.StoreHistoryBytes, StartRevision: cfg.StartRevision,
			CompactionInterval: max(cfg.CompactionInterval, 0)})
		s.ownStore = true
	}
	errorLog := cfg.Logger
	if errorLog == nil {
		errorLog = log.New(io.Discard, "", 0)
	}
	s.httpServer = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ConnContext:       serving.ConnContext,
		ErrorLog:          errorLog,
	}
	// Every connection is a serving.Conn (an id, and the connection-wide
	// faults); over TLS, HTTP/2 is negotiated by ALPN.
	served := s.conns.Listen(ln)
	if tlsConfig != nil {
		s.httpServer.TLSConfig = tlsConfig
		if err := serving.ConfigureHTTP2(s.httpServer); err != nil {
			s.closeStore()
			_ = ln.Close()
			return nil, fmt.Errorf("apiserver: configuring HTTP/2: %w", err)
		}
		served = tls.NewListener(served, s.httpServer.TLSConfig)
	}
	s.faults = faults.New(s.registry, s.store, cfg.BookmarkInterval, cfg.Tracer)
	s.metrics = metrics.New(metricsSource{s})
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.watch = watchserver.New(watchserver.Config{
		Context:           s.ctx,
		MinRequestTimeout: cfg.MinRequestTimeout,
		Faults:            s.faults,
		Detach:            s.detach,
		Tracer:            cfg.Tracer,
		WriteTimeout:      s.writeTimeout,
	})
	s.faults.OnStall(s.watch.FreezeHTTP2Connections)
	s.faults.OnExpire(func(scope faults.WatchScope) int {
		return s.watch.Expire(func(w watchserver.WatchInfo) bool {
			return scope.Matches(w.Resource, w.Namespace, w.UserAgent)
		})
	})
	s.handlers = handlers.New(s.store, s.registry, s.watch, cfg.Tracer, cfg.ProtobufCacheBytes)
	if err := s.init(ctx); err != nil {
		s.cancel()
		for _, e := range s.registry.Entries() {
			if e.Cacher != nil {
				e.Cacher.Stop()
			}
		}
		s.closeStore()
		_ = ln.Close()
		return nil, err
	}
	go func() {
		defer close(s.serveDone)
		// Serve returns http.ErrServerClosed after Shutdown; any other
		// error (the listener failing) also just ends serving.
		_ = s.httpServer.Serve(served)
	}()
	s.tracer.Printf(narrate.HTTP, "apiserver listening on %s", s.URL())
	return s, nil
}

// init seeds the namespaces, starts the caches and builds discovery.
func (s *Server) init(ctx context.Context) error {
	if err := registry.SeedNamespaces(ctx, s.store, s.registry.Namespaces().Resource); err != nil {
		return fmt.Errorf("apiserver: %w", err)
	}
	for _, e := range s.registry.Entries() {
		if e.NotWatchCached {
			continue // served straight from the store (registry.Resource)
		}
		c, err := s.newCacher(e.Resource)
		if err != nil {
			return err
		}
		e.Cacher = c
	}
	s.publish()
	return s.startCRDs(ctx)
}

// newCacher starts the watch cache of one resource.
func (s *Server) newCacher(res *registry.Resource) (*cacher.Cacher, error) {
	c, err := cacher.New(s.ctx, cacher.Config{
		Store:            res.Storage(s.store),
		Prefix:           res.Prefix(),
		Resource:         res.GroupResource(),
		Kind:             res.Kind,
		APIVersion:       res.APIVersion(),
		HistorySize:      s.cfg.HistorySize,
		HistoryBytes:     s.cfg.HistoryBytes,
		WatcherBuffer:    s.cfg.WatcherBuffer,
		Turns:            s.turns,
		BookmarkInterval: s.faults.BookmarkInterval,
		Tracer:           s.tracer,
	})
	if err != nil {
		return nil, fmt.Errorf("apiserver: starting the watch cache of %s: %w", res.GroupResource(), err)
	}
	return c, nil
}

// URL is the server's base URL, e.g. http://127.0.0.1:8080, or
// https://127.0.0.1:6443 when it serves TLS.
func (s *Server) URL() string {
	if s.tlsConfig != nil {
		return "https://" + s.listener.Addr().String()
	}
	return "http://" + s.listener.Addr().String()
}

// CACertificate is the PEM certificate a client should trust when the
// server generated its own (Config.SelfSignedTLS); nil otherwise.
func (s *Server) CACertificate() []byte { return s.caPEM }

// Kubeconfig is a kubeconfig for kubectl --kubeconfig and client-go's
// clientcmd: the server's URL, the certificate to trust when it generated
// its own, and Config.Token if set.
func (s *Server) Kubeconfig() []byte { return serving.Kubeconfig(s.URL(), s.caPEM, s.cfg.Token) }

// Store is the store behind the API: Config.Store, or the in-memory store
// the server made. Writing to it directly is allowed (watchers see the
// change like any other); its objects are read-only.
func (s *Server) Store() store.Interface { return s.store }

// closeStore closes the store if the server made it; a store passed in
// Config.Store is the caller's to close (several servers may share it).
func (s *Server) closeStore() {
	if s.ownStore {
		s.store.Close()
	}
}

// Faults returns the workshop fault switches.
func (s *Server) Faults() *Faults { return s.faults }

// Stop shuts the server down gracefully: every open watch ends cleanly (a
// chunked stream gets its terminating chunk, a websocket a close frame),
// in-flight requests finish, and every goroutine the server started is
// gone. If ctx ends first, connections are closed abruptly and ctx's error
// is returned. Stop is idempotent.
func (s *Server) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.stop(ctx) })
	return s.stopErr
}

func (s *Server) stop(ctx context.Context) error {
	s.tracer.Printf(narrate.HTTP, "apiserver stopping")
	s.stopCRDs()
	// Ending the watch caches ends every watcher: each watch response is
	// finished cleanly by its writer, so its connection becomes idle.
	for _, e := range s.registry.Entries() {
		if e.Cacher != nil {
			e.Cacher.Stop()
		}
	}
	s.handlers.StopStoreWatches()
	// A frozen (stalled HTTP/2) connection would never finish; nothing
	// else ends it.
	s.conns.ResetFrozen()
	err := s.httpServer.Shutdown(ctx)
	if err != nil {
		_ = s.httpServer.Close()
	}
	s.mu.Lock()
	s.stopping = true
	s.mu.Unlock()
	// Hijacked (websocket) connections are not the http.Server's any more:
	// cancelling the server context ends them, then we wait for their
	// handlers.
	s.cancel()
	done := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		err = errors.Join(err, fmt.Errorf("apiserver: requests still running at stop: %w", ctx.Err()))
	}
	<-s.serveDone
	s.closeStore()
	return err
}

// serveHTTP is the outermost handler: bookkeeping, log, panic safety, the
// ?timeout= check, authentication, then routing.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		w.Header().Set("Connection", "close")
		negotiation.WriteStatus(w, r, api.NewServiceUnavailable("the server is shutting down"))
		return
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()
	if r.ProtoMajor == 2 {
		if c := serving.FromContext(r.Context()); c != nil {
			c.MarkHTTP2()
		}
	}

	rr := filters.NewRecorder(w)
	defer s.logRequest(rr, r)
	defer s.recoverPanic(rr, r)
	kind := filters.Classify(r)
	// Before authentication, as kube-apiserver's WithRequestDeadline sits
	// outside WithAuthentication in its handler chain.
	if st := filters.CheckTimeout(r, kind); st != nil {
		negotiation.WriteStatus(rr, r, st)
		return
	}
	if !filters.Authorized(r, s.cfg.Token) {
		negotiation.WriteStatus(rr, r, api.NewUnauthorized(""))
		return
	}
	// After authentication, as in kube-apiserver's handler chain: an
	// unauthenticated client cannot use up the slots of others.
	release, ok := s.limits.Begin(kind)
	if !ok {
		filters.CloseRefusedWatch(rr, r, kind)
		negotiation.WriteStatus(rr, r, filters.TooManyRequests(kind))
		return
	}
	rr.Release = release
	defer func() {
		if !rr.Detached {
			release()
		}
	}()
	s.route(rr, r)
}

// logRequest counts a 410 and writes the request's log line, unless the
// request was detached from its handler (its goroutine logs it when it
// ends).
func (s *Server) logRequest(rr *filters.Recorder, r *http.Request) {
	if rr.Code == http.StatusGone {
		s.counters.gone.Add(1)
	}
	if rr.Detached {
		return
	}
	s.requestEnded(rr.Metrics, rr.Code, rr.Start)
	if s.cfg.Logger == nil {
		return
	}
	filters.LogLine(s.cfg.Logger, r.Method, r.URL.RequestURI(), rr.Code, rr.Start, r.UserAgent())
}

// detach runs the rest of a request after its handler returns, in a
// goroutine of its own that Stop waits for like a request (an HTTP/1.1
// watch, whose connection was taken over from net/http). rest must not use
// w or r: net/http reuses or frees them once the handler returns. The
// request's log line is written when rest returns, with its status and its
// whole duration.
func (s *Server) detach(w http.ResponseWriter, r *http.Request, rest func()) {
	// The handler still counts as in flight, so Stop cannot have stopped
	// waiting yet: adding one for the goroutine is safe.
	s.inflight.Add(1)
	var logLine func()
	if rr := filters.RecorderOf(w); rr != nil {
		rr.Detached = true
		// Only what the log line and the metrics need is kept, not the
		// request.
		m, code, start := rr.Metrics, rr.Code, rr.Start
		logLine = func() { s.requestEnded(m, code, start) }
		if l := s.cfg.Logger; l != nil {
			method, uri, ua := r.Method, r.URL.RequestURI(), r.UserAgent()
			logLine = func() {
				s.requestEnded(m, code, start)
				filters.LogLine(l, method, uri, code, start, ua)
			}
		}
	}
	var release func()
	if rr := filters.RecorderOf(w); rr != nil {
		release = rr.Release
	}
	go func() {
		defer s.inflight.Done()
		if release != nil {
			defer release() // the watch's slot, held until it really ends
		}
		if logLine != nil {
			defer logLine()
		}
		defer s.recoverDetached()
		rest()
	}()
}

// recoverDetached keeps a panic in a detached request from taking the
// server down; the connection is the request's own to close.
func (s *Server) recoverDetached() {
	v := recover()
	if v == nil {
		return
	}
	s.tracer.Printf(narrate.HTTP, "PANIC in a detached request: %v", v)
	if s.cfg.Logger != nil {
		s.cfg.Logger.Printf("panic in a detached request: %v\n%s", v, debug.Stack())
	}
}

// recoverPanic turns a handler panic into a 500 Status, so no input can
// take the server down. http.ErrAbortHandler is the deliberate abort of a
// connection (the kill-watches fault) and is passed on.
func (s *Server) recoverPanic(rr *filters.Recorder, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	s.tracer.Printf(narrate.HTTP, "PANIC serving %s %s: %v", r.Method, r.URL.Path, v)
	if s.cfg.Logger != nil {
		s.cfg.Logger.Printf("panic serving %s %s: %v\n%s", r.Method, r.URL.RequestURI(), v, debug.Stack())
	}
	if rr.Code == 0 && !rr.Hijacked {
		negotiation.WriteStatus(rr, r, api.NewInternalError(fmt.Errorf("panic: %v", v)))
	}
}

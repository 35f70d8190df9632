package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/store"
)

// ErrDiverged is returned (wrapped, with the seed and the first divergence)
// when a run's checks fail.
var ErrDiverged = errors.New("informers diverged from the server")

// Timeouts of the run's own steps, apart from the convergence wait.
const (
	setupTimeout = 30 * time.Second
	stopTimeout  = 15 * time.Second
	pollInterval = 50 * time.Millisecond
	// maxDivergences bounds how many lines one check reports.
	maxDivergences = 20
)

// sentinelName is the ConfigMap the run writes once the writers have
// stopped: the last change of the run, so "every informer has seen it"
// means "every informer has reached the final resourceVersion".
const sentinelName = "chaos-sentinel"

// Run does one chaos run: it starts an apiserver with its fault switches
// on, informers watching it, writers writing to it and the fault injector
// disturbing both, for cfg.Duration; then it switches the faults off,
// stops the writers and checks convergence (see package doc). It returns
// the report and, if any check failed, an error wrapping ErrDiverged that
// quotes the seed. Any other error means the run itself could not be
// carried out.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	cfg, err = cfg.withDefaults()
	if err != nil {
		return rep, err
	}
	rep.Seed, rep.Duration = cfg.Seed, cfg.Duration
	logf := func(format string, args ...any) {
		if cfg.Logf != nil {
			cfg.Logf(format, args...)
		}
		cfg.Tracer.Printf(layer, format, args...)
	}
	logf("seed %d", cfg.Seed)
	defer func() {
		if err != nil && !errors.Is(err, ErrDiverged) {
			err = fmt.Errorf("chaos run with seed %d: %w", cfg.Seed, err)
		}
	}()

	r, err := newRun(ctx, cfg, logf)
	if err != nil {
		return rep, err
	}
	defer r.stop()
	return r.do(ctx, rep)
}

// run is the state of one Run.
type run struct {
	cfg           Config
	logf          func(string, ...any)
	tr            *narrate.Tracer
	srv           *apiserver.Server
	hist          *historyRecorder
	stopHist      context.CancelFunc
	writerHTTP    *http.Transport
	writerC       *client.Client
	namespaces    []string
	informers     []*observedInformer
	compactor     sync.WaitGroup
	stopCompactor context.CancelFunc
	stopInfs      context.CancelFunc
	infsDone      sync.WaitGroup
	debug         *debugClient
}

// newRun starts the server, the history recorder and the informers.
func newRun(ctx context.Context, cfg Config, logf func(string, ...any)) (r *run, err error) {
	r = &run{cfg: cfg, logf: logf, tr: cfg.Tracer}
	defer func() {
		if err != nil {
			r.stop()
		}
	}()
	sctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	r.srv, err = apiserver.Start(sctx, apiserver.Config{
		Listen:            apiserver.DefaultListen,
		MinRequestTimeout: cfg.ServerWatchTimeout,
		BookmarkInterval:  cfg.BookmarkInterval,
		HistorySize:       cfg.HistorySize,
		WatcherBuffer:     cfg.WatcherBuffer,
		EnableFaults:      true,
		Store:             cfg.Store,
		Tracer:            cfg.ServerTracer,
	})
	if err != nil {
		return r, err
	}
	hctx, stopHist := context.WithCancel(context.WithoutCancel(ctx))
	r.stopHist = stopHist
	if r.hist, err = startHistory(hctx, r.srv.Store(), configMapsPrefix); err != nil {
		return r, err
	}
	if cfg.CompactionInterval > 0 {
		cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		r.stopCompactor = stop
		r.compactor.Go(func() { r.compact(cctx, cfg.CompactionInterval) })
	}
	r.writerHTTP = http.DefaultTransport.(*http.Transport).Clone()
	r.debug = &debugClient{url: r.srv.URL() + "/debug/listwatch", http: &http.Client{Transport: r.writerHTTP, Timeout: 10 * time.Second}}
	if r.writerC, err = client.New(client.Config{Host: r.srv.URL(), HTTPClient: &http.Client{Transport: r.writerHTTP}, UserAgent: "chaos-writer"}); err != nil {
		return r, err
	}
	for i := range cfg.Namespaces {
		ns := fmt.Sprintf("ns-%d", i)
		obj := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: ns}}
		if _, err := r.writerC.Resource(api.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(sctx, obj); err != nil {
			return r, fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		r.namespaces = append(r.namespaces, ns)
	}

	ictx, stopInfs := context.WithCancel(context.WithoutCancel(ctx))
	r.stopInfs = stopInfs
	var syncs []informer.Syncable
	for i := range cfg.Informers {
		v := variantFor(i, r.namespaces)
		o, err := newObservedInformer(i, v, r.srv.URL(), cfg)
		if err != nil {
			return r, fmt.Errorf("informer %d: %w", i, err)
		}
		r.informers = append(r.informers, o)
		r.infsDone.Go(func() { o.inf.Run(ictx) })
		syncs = append(syncs, o.inf, o.fastReg, o.slowReg)
		logf("%s: %s", o.name(), v)
	}
	if !informer.WaitForCacheSync(sctx, syncs...) {
		return r, fmt.Errorf("the informers did not sync within %v", setupTimeout)
	}
	return r, nil
}

// stop ends everything newRun started, in reverse order.
func (r *run) stop() {
	if r.stopInfs != nil {
		r.stopInfs()
		r.infsDone.Wait()
	}
	for _, o := range r.informers {
		o.transport.CloseIdleConnections()
	}
	if r.writerHTTP != nil {
		r.writerHTTP.CloseIdleConnections()
	}
	if r.stopCompactor != nil {
		r.stopCompactor()
		r.compactor.Wait()
	}
	if r.stopHist != nil {
		r.stopHist()
		<-r.hist.done
	}
	if r.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), stopTimeout)
		defer cancel()
		if err := r.srv.Stop(ctx); err != nil {
			r.logf("stopping the apiserver: %v", err)
		}
	}
}

// compact compacts the store's history every interval, as etcd's
// compactor does. A compaction with nothing new to compact fails harmlessly.
func (r *run) compact(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			st := r.srv.Store()
			rev, err := st.CurrentRevision(ctx)
			if err == nil && st.Compact(rev) == nil {
				r.tr.Printf(layer, "compactor: compacted the store's history at revision %d", rev)
			}
		}
	}
}

// do runs the write phase and the checks.
func (r *run) do(ctx context.Context, rep Report) (Report, error) {
	rep, err := r.writePhase(ctx, rep)
	if err != nil {
		return rep, err
	}
	cfg := r.cfg

	// The last change of the run: once an informer has seen it, it has
	// every change there was.
	sentinel, err := r.writeSentinel(ctx)
	if err != nil {
		return rep, err
	}
	r.logf("writers stopped at revision %d; waiting for convergence", sentinel)
	wctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	if err := r.hist.waitFor(wctx, sentinel); err != nil {
		return rep, err
	}
	hist, events, err := r.hist.snapshot()
	if err != nil {
		return rep, err
	}
	rep.Events = events
	want := finalState(hist)
	rep.FinalObjects = len(want)

	var divergences []string
	divergences = append(divergences, checkHistory(hist)...)
	serverDiv, err := r.checkServer(ctx, want)
	if err != nil {
		return rep, err
	}
	divergences = append(divergences, serverDiv...)

	converged := time.Now()
	deadline := converged.Add(cfg.ConvergenceTimeout)
	for !r.converged(want, sentinel) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return rep, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	if r.converged(want, sentinel) {
		rep.ConvergedAfter = time.Since(converged)
	} else {
		divergences = append(divergences, fmt.Sprintf("not converged within %v of the writers stopping", cfg.ConvergenceTimeout))
	}
	divergences = append(divergences, r.checkInformers(hist, want, sentinel)...)

	view, err := r.debug.get(ctx)
	if err != nil {
		return rep, err
	}
	_, tooOld, _, killed, _ := view.cache("configmaps")
	rep.ClosedTooSlow = view.ClosedTooSlow
	rep.Expired = tooOld + view.Gone
	rep.WatchesKilled = killed
	rep.RefusedRequests = view.Faults.Counts.Failures
	r.fillInformerCounts(&rep)
	rep.Divergences = divergences
	r.logf("done: %d events, %d divergences", rep.Events, len(divergences))
	if len(divergences) > 0 {
		return rep, fmt.Errorf("%w: seed %d: %d divergence(s); first: %s", ErrDiverged, cfg.Seed, len(divergences), divergences[0])
	}
	return rep, nil
}

// writePhase runs the writers and the fault injector for cfg.Duration and
// counts what they did into rep.
func (r *run) writePhase(ctx context.Context, rep Report) (Report, error) {
	cfg := r.cfg
	in := &injector{
		srv: r.srv, st: r.srv.Store(), informers: r.informers, namespaces: r.namespaces,
		debug: r.debug, tr: r.tr, logf: r.logf, ballast: ballastString(), watcherBuffer: cfg.WatcherBuffer,
		// A slow watcher's window spaces slow watchers apart: about how
		// long one attempt can starve a watch before the client's idle
		// timeout ends it (the fault then tries again until the server
		// closes a watcher).
		sched: schedule(cfg.Seed, cfg.Duration, *cfg.Faults, cfg.IdleWatchTimeout*3/4),
	}
	for _, o := range r.informers {
		if o.variant.transport == client.TransportHTTP {
			in.slowTargets = append(in.slowTargets, o)
		}
	}
	keys := allKeys(cfg.Keys, cfg.Writers, r.namespaces)
	writers := make([]*writer, cfg.Writers)
	for i := range writers {
		writers[i] = newWriter(i, r.writerC.Resource(configMaps), ownedBy(keys, i, cfg.Writers), cfg.Seed, cfg.WriteInterval)
	}

	r.logf("writing for %v with %d writers over %d keys in %d namespaces; %d faults scheduled", cfg.Duration, cfg.Writers, cfg.Keys, cfg.Namespaces, len(in.sched))
	phase, endPhase := context.WithTimeout(ctx, cfg.Duration)
	start := time.Now()
	var wg sync.WaitGroup
	var left stragglers
	left.writers.Store(int32(len(writers)))
	left.injector.Store(true)
	wg.Go(func() {
		defer left.injector.Store(false)
		in.run(ctx, phase, start)
	})
	for _, w := range writers {
		wg.Go(func() {
			defer left.writers.Add(-1)
			w.run(ctx, phase)
		})
	}
	done := make(chan struct{})
	go left.report(phase, done, r.logf)
	wg.Wait()
	close(done)
	endPhase()
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if err := in.err(); err != nil {
		return rep, err
	}
	for _, w := range writers {
		rep.Creates += w.stats.creates
		rep.Updates += w.stats.updates
		rep.Deletes += w.stats.deletes
		rep.WriteRetries += w.stats.retries
	}
	rep.Faults = in.counts()
	rep.SlowWatcherClosures = in.slowClosed.Load()
	return rep, nil
}

// writeSentinel creates or updates the sentinel ConfigMap and returns the
// revision of that write.
func (r *run) writeSentinel(ctx context.Context) (int64, error) {
	rc := r.writerC.Resource(configMaps).Namespace(r.namespaces[0])
	obj := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: r.namespaces[0], Name: sentinelName}}
	_ = obj.Set("data", []byte(`{"written":"after the writers stopped"}`))
	got, err := rc.Create(ctx, obj)
	if api.IsAlreadyExists(err) {
		got, err = rc.Update(ctx, obj)
	}
	if err != nil {
		return 0, fmt.Errorf("writing the sentinel: %w", err)
	}
	return revisionOf(got), nil
}

// checkServer compares the history's final state with what the server
// answers: the store itself, and a consistent list over HTTP.
func (r *run) checkServer(ctx context.Context, want map[string]int64) ([]string, error) {
	res, err := r.srv.Store().List(ctx, configMapsPrefix, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the store: %w", err)
	}
	fromStore := map[string]int64{}
	for _, o := range res.Items {
		fromStore[o.Key()] = revisionOf(o)
	}
	list, err := r.writerC.Resource(configMaps).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing over HTTP: %w", err)
	}
	fromHTTP := map[string]int64{}
	for _, o := range list.Items {
		fromHTTP[o.Key()] = revisionOf(o)
	}
	out := diffState("store (vs its own history)", fromStore, want, maxDivergences)
	return append(out, diffState("consistent list over HTTP", fromHTTP, want, maxDivergences)...), nil
}

// converged reports whether every informer's cache and every handler's
// view hold exactly the final state and every informer has reached the
// sentinel's revision.
func (r *run) converged(want map[string]int64, sentinel int64) bool {
	for _, o := range r.informers {
		w := inNamespace(want, o.variant.namespace)
		if rv, err := strconv.ParseInt(o.inf.LastSyncResourceVersion(), 10, 64); err != nil || rv < sentinel {
			return false
		}
		if !sameState(cacheState(o.inf), w) || !sameState(o.fast.viewCopy(), w) || !sameState(o.slow.viewCopy(), w) {
			return false
		}
	}
	return true
}

// checkInformers runs every check on every informer and handler.
func (r *run) checkInformers(hist map[string][]change, want map[string]int64, sentinel int64) []string {
	var out []string
	for _, o := range r.informers {
		w := inNamespace(want, o.variant.namespace)
		rv := o.inf.LastSyncResourceVersion()
		if n, err := strconv.ParseInt(rv, 10, 64); err != nil || n < sentinel {
			out = append(out, fmt.Sprintf("%s: last synced resourceVersion %q, before the final revision %d", o.name(), rv, sentinel))
		}
		out = append(out, diffState(o.name()+" cache", cacheState(o.inf), w, maxDivergences)...)
		out = append(out, checkHandler(o.name()+" handler fast", o.fast.notesCopy(), o.fast.viewCopy(), hist, w, maxDivergences)...)
		out = append(out, checkHandler(o.name()+" handler slow", o.slow.notesCopy(), o.slow.viewCopy(), hist, w, maxDivergences)...)
	}
	return out
}

func (r *run) fillInformerCounts(rep *Report) {
	for _, o := range r.informers {
		ir := InformerReport{
			Name: o.name(), Variant: o.variant.String(),
			Lists: o.lw.lists.Load(), Watches: o.lw.watches.Load(), WatchEvents: o.lw.watchEvents.Load(),
			LastSyncResourceVersion: o.inf.LastSyncResourceVersion(),
		}
		ir.Adds, ir.Updates, ir.Deletes, ir.Tombstones = o.fast.total()
		sa, su, sd, st := o.slow.total()
		rep.Informers = append(rep.Informers, ir)
		rep.Reconnects += ir.Watches
		rep.Relists += ir.Lists
		rep.WatchEvents += ir.WatchEvents
		rep.Tombstones += ir.Tombstones + st
		rep.Notifications += ir.Adds + ir.Updates + ir.Deletes + ir.Tombstones + sa + su + sd + st
	}
}

// cacheState is what an informer's cache holds: key → resourceVersion.
func cacheState(inf *informer.SharedIndexInformer) map[string]int64 {
	out := map[string]int64{}
	for _, o := range inf.GetIndexer().List() {
		out[o.Key()] = revisionOf(o)
	}
	return out
}

func sameState(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// stragglers counts what of the write phase is still running after its
// time is up: writers finishing a request (each is retried until it
// succeeds or the run's context ends) and the injector's faults still
// under way. A run that hangs there then says what it waits for, instead
// of ending with an empty report when the run's context runs out.
type stragglers struct {
	writers  atomic.Int32
	injector atomic.Bool
}

// report logs, once a minute after phase ends and until done is closed,
// what is still running.
func (s *stragglers) report(phase context.Context, done <-chan struct{}, logf func(string, ...any)) {
	select {
	case <-done:
		return
	case <-phase.Done():
	}
	end := time.Now()
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			logf("write phase over %v ago; still running: %d writer(s), faults under way: %v",
				time.Since(end).Round(time.Second), s.writers.Load(), s.injector.Load())
		}
	}
}

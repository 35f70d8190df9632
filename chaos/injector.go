package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/narrate"
	"listwatch/store"
)

// layer tags the run's own narration.
const layer = "chaos"

// Ballast: what a slow-watcher fault writes while its informer has stopped
// reading, so the server's socket buffer and then the watcher's queue fill
// within a second whatever the writers' pace. Written to the store
// directly (a 429 burst must not hold it up); the objects are ordinary
// ConfigMaps, part of the history and of every check like any other.
const (
	ballastBytes    = 256 << 10
	ballastKeys     = 4
	maxBallastBytes = 16 << 20
	// maxSlowAttempts bounds how often one slow-watcher fault starts again
	// after its watch ended some other way (a timeout, a kill, the
	// client's idle timeout). On a very busy machine every attempt can end
	// that way; the fault then gives up, says so, and the run goes on to
	// its checks. A count, not a deadline: a slow machine takes longer
	// per attempt, not more attempts.
	maxSlowAttempts = 8
)

// injector fires the fault schedule at the server and the informers.
type injector struct {
	srv       *apiserver.Server
	st        store.Interface
	sched     []injection
	informers []*observedInformer
	// slowTargets are the informers a slow watcher may pick: those whose
	// connections are sized like real ones (HTTP transport; a websocket
	// dials its own).
	slowTargets []*observedInformer
	namespaces  []string
	debug       *debugClient
	tr          *narrate.Tracer
	// logf reports what the slow watchers achieved (a few lines a run).
	logf    func(string, ...any)
	ballast string
	// watcherBuffer is the server's per-watcher queue, in frames.
	watcherBuffer int

	injected       [numFaultKinds]atomic.Int64
	slowClosed     atomic.Int64 // slow-watcher faults that saw the server close the watcher
	ballastWritten atomic.Int64
	slowMu         sync.Mutex // held by the slow-watcher fault in progress
	wg             sync.WaitGroup

	errMu sync.Mutex
	errs  []error
}

// action is one step of the timeline: an injection starting, or a fault
// that was switched on being switched off again.
type action struct {
	at  time.Duration
	in  injection
	end bool
}

func (in *injector) timeline() []action {
	var out []action
	for _, inj := range in.sched {
		out = append(out, action{at: inj.at, in: inj})
		switch inj.kind {
		case FaultWatchTimeout, FaultRequestDelay, FaultSlowHandler:
			out = append(out, action{at: inj.at + inj.window, in: inj, end: true})
		}
	}
	slices.SortStableFunc(out, func(a, b action) int { return int(a.at - b.at) })
	return out
}

// run fires the schedule, counting from start, until phase is done; then
// it switches every fault off and waits for the faults it started (a kill
// waiting for a watch to hit, a slow watcher waiting for the server to
// close it), which carry on under ctx after the phase: on a busy machine
// they may need longer than the phase had left, and what the run checks is
// that they happen, not how soon.
func (in *injector) run(ctx, phase context.Context, start time.Time) {
	defer in.restore()
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for _, a := range in.timeline() {
		if d := time.Until(start.Add(a.at)); d > 0 {
			t.Reset(d)
			select {
			case <-phase.Done():
				return
			case <-t.C:
			}
		}
		if phase.Err() != nil {
			return
		}
		in.do(ctx, a)
	}
	<-phase.Done()
}

// do carries out one action.
func (in *injector) do(ctx context.Context, a action) {
	f := in.srv.Faults()
	inj := a.in
	if a.end {
		in.tr.Printf(layer, "fault %s ends", inj.kind)
		switch inj.kind {
		case FaultWatchTimeout:
			f.SetWatchTimeout(0)
		case FaultRequestDelay:
			f.SetRequestDelay(0)
		case FaultSlowHandler:
			in.pick(in.informers, inj.target).slow.setDelay(0)
		}
		return
	}
	in.injected[inj.kind].Add(1)
	in.tr.Printf(layer, "fault %s", inj)
	switch inj.kind {
	case FaultWatchTimeout:
		f.SetWatchTimeout(inj.param)
	case FaultKill:
		in.wg.Go(func() { in.whenWatched(ctx, func() { f.KillWatchConnections() }) })
	case FaultStall:
		in.wg.Go(func() { in.whenWatched(ctx, f.StallWatches) })
	case FaultCompact:
		f.CompactNow()
	case FaultTooManyRequests:
		in.fail(f.FailResource(configMaps.GroupResource(), http.StatusTooManyRequests, inj.window))
	case FaultForbidden:
		in.fail(f.FailResource(configMaps.GroupResource(), http.StatusForbidden, inj.window))
	case FaultRequestDelay:
		f.SetRequestDelay(inj.param)
	case FaultSlowHandler:
		in.pick(in.informers, inj.target).slow.setDelay(inj.param)
	case FaultSlowWatcher:
		if len(in.slowTargets) == 0 {
			return
		}
		first := min(int(inj.target*float64(len(in.slowTargets))), len(in.slowTargets)-1)
		in.wg.Go(func() { in.slowWatcher(ctx, first) })
	}
}

// whenWatched calls fault as soon as some informer has a watch open, however
// long that takes (until ctx is done): right after a stall or a 429 burst
// every informer may be between two watches, and a kill or a stall then
// hits nothing.
func (in *injector) whenWatched(ctx context.Context, fault func()) {
	for {
		v, err := in.debug.get(ctx)
		if err != nil {
			if ctx.Err() == nil {
				in.fail(err)
			}
			return
		}
		if v.openWatchers() > 0 {
			fault()
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollWatchers):
		}
	}
}

// pick maps a fraction in [0, 1) to one of infs.
func (in *injector) pick(infs []*observedInformer, frac float64) *observedInformer {
	return infs[min(int(frac*float64(len(infs))), len(infs)-1)]
}

// slowWatcher stops an informer reading its watch and writes the ballast:
// large objects until the server's queue for that watch starts to fill (its
// socket buffers are full: how much that takes depends on the kernel and
// its congestion control, from a hundred KiB to several MiB), then small
// updates, one frame each, to fill the queue, until the server closes a
// watcher for being too slow. Then the informer reads again, finds its
// stream ended and must re-watch, or re-list if the watch cache's ring has
// moved past it.
//
// The watch may end some other way first: the server's watch timeout, a
// kill, or the client's own idle timeout (Config.IdleWatchTimeout), whose
// clock keeps running while the informer does not read, so on a busy
// machine it can beat the server. The fault then tries again, on whichever
// eligible informer has a watch open next, until the server closes one or
// ctx is done.
//
// first is the informer the schedule picked; if it has no watch open (it
// may be backing off after a 429, or re-listing after a 410), the next
// eligible informer that has one is taken instead.
func (in *injector) slowWatcher(ctx context.Context, first int) {
	// One at a time: two would count the same closure twice.
	in.slowMu.Lock()
	defer in.slowMu.Unlock()
	ok, err := in.slowWatcherAttempts(ctx, first)
	switch {
	case err != nil && ctx.Err() == nil:
		in.fail(err)
	case ok:
		in.slowClosed.Add(1)
	}
}

func (in *injector) slowWatcherAttempts(ctx context.Context, first int) (bool, error) {
	before, err := in.debug.get(ctx)
	if err != nil {
		return false, err
	}
	sent, small := 0, 0
	for attempt := 1; attempt <= maxSlowAttempts; attempt++ {
		target, v, err := in.watchingTarget(ctx, first)
		if err != nil {
			in.logf("slow watcher: no watcher closed in %d attempt(s) (%d KiB and %d small writes): %v", attempt-1, sent>>10, small, err)
			return false, err
		}
		closed, err := in.starve(ctx, target, v, before.ClosedTooSlow, &sent, &small)
		if err != nil || closed {
			if closed {
				in.logf("slow watcher: closed by the server at attempt %d", attempt)
			}
			return closed, err
		}
		in.tr.Printf(layer, "slow watcher: %s's watch ended before the server closed it; trying again", target.name())
	}
	in.logf("slow watcher: no watcher closed in %d attempts (%d KiB and %d small writes): each watch ended some other way first; giving up",
		maxSlowAttempts, sent>>10, small)
	return false, nil
}

// watchingTarget returns the first eligible informer, from slowTargets[first]
// on, that has a watch open, waiting for one until ctx is done.
func (in *injector) watchingTarget(ctx context.Context, first int) (*observedInformer, debugView, error) {
	for {
		v, err := in.debug.get(ctx)
		if err != nil {
			return nil, v, err
		}
		for i := range in.slowTargets {
			o := in.slowTargets[(first+i)%len(in.slowTargets)]
			if v.watching(o.userAgent()) {
				return o, v, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, v, ctx.Err()
		case <-time.After(pollWatchers):
		}
	}
}

// starve stops target reading and writes ballast until the server closes a
// watcher as too slow (it reports true) or the target's watch ends some
// other way (a timeout, a kill, the client's idle timeout: false, try
// again). sent and small count the ballast across attempts.
func (in *injector) starve(ctx context.Context, target *observedInformer, v debugView, closedBefore int64, sent, small *int) (bool, error) {
	g := target.lw.gate
	g.close()
	defer g.reopen()
	in.tr.Printf(layer, "slow watcher: %s stops reading its watch", target.name())
	ns := target.variant.namespace
	if ns == "" {
		ns = in.namespaces[0]
	}
	// write writes one ballast object and returns the debug view once the
	// watch cache has applied it.
	write := func(name, fill string) (debugView, error) {
		rev, err := in.writeBallast(ctx, ns, name, fill)
		if err != nil {
			return debugView{}, err
		}
		return in.debug.waitDispatched(ctx, rev)
	}
	fillQueue := false // the socket is full: frames stay in the server's queue
	for v.watching(target.userAgent()) {
		var err error
		switch {
		case !fillQueue && *sent < maxBallastBytes:
			v, err = write(fmt.Sprintf("ballast-%d", (*sent/len(in.ballast))%ballastKeys), in.ballast)
			*sent += len(in.ballast)
		case fillQueue && *small%(2*in.watcherBuffer+2*smallBatch) == 0 && *small > 0:
			// Well over a queue's worth of frames: give the dispatcher,
			// which may be waiting out its time budget on this very
			// watcher, a moment before writing more.
			select {
			case <-ctx.Done():
				return false, ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
			v, err = in.debug.get(ctx)
			*small++
		default:
			for range smallBatch - 1 {
				if _, err := in.writeBallast(ctx, ns, "ballast-small", "s"); err != nil {
					return false, err
				}
			}
			v, err = write("ballast-small", "s")
			*small += smallBatch
		}
		if err != nil {
			return false, err
		}
		if v.ClosedTooSlow > closedBefore {
			in.logf("slow watcher: the server closed a watcher as too slow after %d KiB and %d small writes; %s reads again",
				*sent>>10, *small, target.name())
			return true, nil
		}
		if !fillQueue && v.queued(target.userAgent()) >= 2 {
			// The HTTP writer takes every queued frame at once whenever it
			// can; two still waiting mean it is stuck in a write.
			fillQueue = true
		}
	}
	return false, nil
}

// writeBallast writes one ConfigMap of the ballast straight into the store
// and returns the revision of the write.
func (in *injector) writeBallast(ctx context.Context, ns, name, fill string) (int64, error) {
	key := configMapsPrefix + ns + "/" + name
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
	data, _ := json.Marshal(map[string]string{"ballast": fill, "n": fmt.Sprint(in.ballastWritten.Add(1))})
	_ = o.Set("data", data)
	got, err := in.st.Update(ctx, key, o, store.Preconditions{})
	if errors.Is(err, store.ErrNotFound) {
		got, err = in.st.Create(ctx, key, o)
	}
	if err != nil {
		return 0, fmt.Errorf("chaos: writing ballast %s/%s: %w", ns, name, err)
	}
	return revisionOf(got), nil
}

// restore switches every fault off, waits for the faults still under way
// (which then meet no watch timeout, delay or refusal the phase left
// switched on), and switches off what they did meanwhile.
func (in *injector) restore() {
	in.switchOff()
	in.wg.Wait()
	in.switchOff()
	for _, o := range in.informers {
		o.lw.gate.reopen()
	}
	in.tr.Printf(layer, "every fault switched off")
}

// switchOff switches off every fault that stays on until switched off.
func (in *injector) switchOff() {
	f := in.srv.Faults()
	f.SetWatchTimeout(0)
	f.SetRequestDelay(0)
	gr := configMaps.GroupResource()
	in.fail(f.FailResource(gr, http.StatusTooManyRequests, 0))
	for _, o := range in.informers {
		o.slow.setDelay(0)
	}
}

func (in *injector) fail(err error) {
	if err == nil {
		return
	}
	in.errMu.Lock()
	defer in.errMu.Unlock()
	in.errs = append(in.errs, err)
}

func (in *injector) err() error {
	in.errMu.Lock()
	defer in.errMu.Unlock()
	return errors.Join(in.errs...)
}

// counts returns how often each fault was injected.
func (in *injector) counts() map[FaultKind]int64 {
	out := map[FaultKind]int64{}
	for k := range in.injected {
		out[FaultKind(k)] = in.injected[k].Load()
	}
	return out
}

// debugClient reads the server's debug view, /debug/listwatch.
type debugClient struct {
	url  string
	http *http.Client
}

// debugView is the part of the debug view the run reads.
type debugView struct {
	StoreRevision  int64            `json:"storeRevision"`
	Requests       map[string]int64 `json:"requestsByVerb"`
	Gone           int64            `json:"gone410"`
	WatchesStarted int64            `json:"watchesStarted"`
	WatchesOpen    int64            `json:"watchesOpen"`
	ClosedTooSlow  int64            `json:"closedTooSlow"`
	Caches         []struct {
		Resource      string `json:"resource"`
		Revision      int64  `json:"revision"`
		TooOldErrors  int64  `json:"tooOldErrors"`
		ClosedTooSlow int64  `json:"closedTooSlow"`
		Killed        int64  `json:"killed"`
		Relists       int64  `json:"relists"`
		Watchers      []struct {
			Description string `json:"description"`
			Buffered    int    `json:"buffered"`
		} `json:"watchers"`
	} `json:"watchCaches"`
	Faults struct {
		Counts struct {
			Kills       int64 `json:"killWatchConnections"`
			Killed      int64 `json:"watchesKilled"`
			Compactions int64 `json:"compactions"`
			Stalls      int64 `json:"stalls"`
			Failures    int64 `json:"failedRequests"`
		} `json:"counts"`
	} `json:"faults"`
}

func (d *debugClient) get(ctx context.Context) (debugView, error) {
	var v debugView
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.url, nil)
	if err != nil {
		return v, err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return v, fmt.Errorf("chaos: reading the debug view: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("chaos: reading the debug view: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return v, fmt.Errorf("chaos: decoding the debug view: %w", err)
	}
	return v, nil
}

// waitDispatched polls the debug view until the configmaps watch cache has
// applied revision rev (and so, the dispatcher being quick, handed it to
// the watchers), or ctx is done; it returns the last view.
func (d *debugClient) waitDispatched(ctx context.Context, rev int64) (debugView, error) {
	for {
		v, err := d.get(ctx)
		if err != nil {
			return v, err
		}
		if cur, _, _, _, _ := v.cache("configmaps"); cur >= rev {
			return v, nil
		}
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// How the faults that wait for a watch poll the debug view, and how often a
// slow-watcher fault checks the server's state: after every smallBatch
// small writes.
const (
	pollWatchers = 20 * time.Millisecond
	smallBatch   = 16
)

// openWatchers counts the watches open on the configmaps watch cache.
func (v debugView) openWatchers() int {
	n := 0
	for _, c := range v.Caches {
		if c.Resource == "configmaps" {
			n += len(c.Watchers)
		}
	}
	return n
}

// watching reports whether the client with this user agent has a watch
// open.
func (v debugView) watching(userAgent string) bool {
	for _, c := range v.Caches {
		for _, w := range c.Watchers {
			if w.Description == userAgent {
				return true
			}
		}
	}
	return false
}

// queued is how many frames the server holds for the watches of the
// client with this user agent.
func (v debugView) queued(userAgent string) int {
	n := 0
	for _, c := range v.Caches {
		for _, w := range c.Watchers {
			if w.Description == userAgent {
				n += w.Buffered
			}
		}
	}
	return n
}

// cache returns the debug view's stats of resource.
func (v debugView) cache(resource string) (revision, tooOld, tooSlow, killed, relists int64) {
	for _, c := range v.Caches {
		if c.Resource == resource {
			return c.Revision, c.TooOldErrors, c.ClosedTooSlow, c.Killed, c.Relists
		}
	}
	return 0, 0, 0, 0, 0
}

// ballastString is the filler of a ballast object.
func ballastString() string { return strings.Repeat("b", ballastBytes) }

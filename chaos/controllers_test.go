package chaos

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/leaderelection"
	"listwatch/controllers/manager"
	"listwatch/controllers/website"
	"listwatch/internal/leakcheck"
	"listwatch/narrate"
	"listwatch/workqueue"
)

func deployment(name string, replicas int) *api.Object {
	d := &api.Object{APIVersion: "apps/v1", Kind: "Deployment", Metadata: api.ObjectMeta{Namespace: "default", Name: name}}
	_ = d.Set("spec", json.RawMessage(fmt.Sprintf(`{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}`, replicas, name, name)))
	return d
}

// TestControllersConvergeUnderFaults runs the controller manager while
// Deployments are created, scaled and deleted and the server kills and
// stalls watches, compacts, refuses requests with 429 and delays them.
// Websites are created, changed and deleted beside them, reconciled by the
// operator of package controllers/website. Once the faults stop, every
// Deployment must have exactly its replicas of Running Pods with a status
// that says so, no Pod may be orphaned, every Website must have exactly its
// ConfigMap and Deployment with the right content and a Ready condition,
// and nothing owned by a deleted Website may remain.
func TestControllersConvergeUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos run skipped in -short mode")
	}
	t.Cleanup(leakcheck.Check(t))
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test -race -run TestControllersConvergeUnderFaults -count=1 ./chaos/ -chaos.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 18))

	// A safety bound only: it turns a hang into a failure. A healthy run
	// takes well under a minute on two busy cores under -race.
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0", EnableFaults: true, BookmarkInterval: 500 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		assert.NoError(t, srv.Stop(sctx))
	})
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(transport.CloseIdleConnections)
	newClient := func(idle time.Duration) *client.Client {
		c, err := client.New(client.Config{Host: srv.URL(), HTTPClient: &http.Client{Transport: transport}, IdleWatchTimeout: idle})
		require.NoError(t, err)
		return c
	}
	writer := newClient(0)
	tracer := controllerTracer(t)

	// The Website kind, served before anything watches it.
	crd := &api.Object{}
	require.NoError(t, crd.UnmarshalJSON([]byte(website.CRD)))
	_, err = writer.Resource(website.CRDs).Create(ctx, crd)
	require.NoError(t, err)
	waitServed(ctx, t, writer.Resource(website.Websites).Namespace("default"))

	// The controller manager, whose garbage collector also watches
	// websites, and the operator. Their retries back off to at most
	// maxRetryDelay instead of Kubernetes' 1000 s (see
	// controllers.RateLimiter): once the faults stop, every failed key is
	// tried again within that, so the queues drain in seconds and the wait
	// below can be for idle queues instead of for a guessed time.
	const maxRetryDelay = 2 * time.Second
	// Two controller managers with leader election, as in a highly
	// available control plane (leaders_test.go); the leader is killed
	// half-way through the writes.
	mctx, mstop := context.WithCancel(ctx)
	ms := &managers{t: t, ctx: mctx, cfg: func() manager.Config {
		return manager.Config{Client: newClient(2 * time.Second), KubeletStartDelay: 10 * time.Millisecond,
			GCKinds:       append(slices.Clone(manager.DefaultGCKinds), manager.Kind{GVR: website.Websites, Kind: website.Kind, Namespaced: true}),
			MaxRetryDelay: maxRetryDelay, Tracer: tracer}
	}}
	ms.start()
	ms.start()
	t.Cleanup(func() { mstop(); ms.stop() })
	op, err := website.New(website.Options{Client: newClient(2 * time.Second), Namespace: "default",
		Settings: controllers.Settings{MaxRetryDelay: maxRetryDelay, Tracer: tracer}})
	require.NoError(t, err)
	opDone := make(chan struct{})
	go func() { op.Run(mctx); close(opDone) }()
	t.Cleanup(func() { mstop(); <-opDone })
	queues := func() []workqueue.Metrics { return append(ms.queues(), op.Queue()) }

	// Faults, until the writes are done.
	faults := srv.Faults()
	faults.SetWatchTimeout(time.Second)
	fctx, fstop := context.WithCancel(ctx)
	fdone := make(chan map[string]int, 1)
	go func() {
		fired := map[string]int{}
		frng := rand.New(rand.NewPCG(seed, 19))
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-fctx.Done():
				faults.SetRequestDelay(0)
				fdone <- fired
				return
			case <-tick.C:
			}
			switch frng.IntN(7) {
			case 0:
				faults.KillWatchConnections()
				fired["kill"]++
			case 1:
				faults.CompactNow()
				fired["compact"]++
			case 2:
				faults.StallWatches()
				fired["stall"]++
			case 3:
				_ = faults.FailResource(api.GroupResource{Resource: "pods"}, http.StatusTooManyRequests, 200*time.Millisecond)
				fired["429 pods"]++
			case 4:
				_ = faults.FailResource(api.GroupResource{Group: "apps", Resource: "deployments"}, http.StatusTooManyRequests, 200*time.Millisecond)
				fired["429 deployments"]++
			case 5:
				faults.SetRequestDelay(time.Duration(frng.IntN(50)) * time.Millisecond)
				fired["delay"]++
			case 6:
				_ = faults.FailResource(website.Websites.GroupResource(), http.StatusTooManyRequests, 200*time.Millisecond)
				fired["429 websites"]++
			}
		}
	}()

	// Writes: create, scale and delete Deployments, and create, change and
	// delete Websites. A write refused by a fault is simply retried later:
	// the checker reads the final state.
	deps := writer.Resource(deploymentsGVR).Namespace("default")
	sites := writer.Resource(website.Websites).Namespace("default")
	live, liveSites := map[string]bool{}, map[string]bool{}
	killed := ""
	for i := range 60 {
		if i == 30 {
			killed = ms.killLeader()
			t.Logf("killed the leading controller manager %q", killed)
		}
		name := fmt.Sprintf("d%d", rng.IntN(8))
		err := retry429(func() error { return write(ctx, deps, live, name, rng) })
		if err != nil {
			t.Logf("write %d (%s): %v", i, name, err)
		}
		if rng.IntN(2) == 0 {
			name := fmt.Sprintf("w%d", rng.IntN(4))
			if err := retry429(func() error { return writeWebsite(ctx, sites, liveSites, name, rng) }); err != nil {
				t.Logf("write %d (website %s): %v", i, name, err)
			}
		}
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond) // spread the writes over the faults
	}
	fstop()
	fired := <-fdone
	t.Logf("faults fired: %v", fired)

	// Converged: every controller's queue idle (nothing queued, nothing
	// being worked on, no retry scheduled) and the state right, both at
	// once. Idle queues with the state still wrong is either an event
	// still on its way or lost work: a controller that believes it is done
	// when it is not. An event can take a while: the controllers'
	// informers keep client-go's reflector backoff (reflector.DefaultBackoff,
	// up to [30 s, 60 s) after repeated failures), so one refused often
	// enough during the faults may be away for most of a minute after they
	// stop, its cache stale, until it lists again. That passes once the
	// events are handled; lost work never does, and the bound turns it
	// into a failure whose message says the queues were idle.
	problems, idle := waitConverged(ctx, t, queues, writer)
	assert.Empty(t, problems, "seed %d; queues when the wait gave up: %s", seed, describeQueues(idle))
	l, err := writer.Resource(podsGVR).List(ctx, api.ListOptions{})
	require.NoError(t, err)
	ws, err := sites.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	t.Logf("converged: %d pods, %d websites", len(l.Items), len(ws.Items))
	lease, err := writer.Resource(leaderelection.Leases).Namespace(manager.DefaultLeaseNamespace).Get(ctx, manager.DefaultLeaseName)
	require.NoError(t, err)
	t.Logf("the lease after the run: %s", lease.Get("spec"))
	if killed != "" {
		assert.NotContains(t, string(lease.Get("spec")), `"holderIdentity":"`+killed+`"`, "the killed leader's lease was taken over")
	}
	for _, k := range []string{"kill", "compact", "stall", "429 pods"} {
		assert.Positive(t, fired[k], "fault %s never fired (seed %d)", k, seed)
	}
}

// waitServed waits until the apiserver serves a custom resource whose
// definition was just created. It serves it once its definitions
// controller has seen the definition, asynchronously, as kube-apiserver
// does (its crdHandler finds definitions through an informer's lister:
// apiextensions-apiserver pkg/apiserver/customresource_handler.go,
// ServeHTTP). The definition's Established condition announces it, but
// the faults injected here can refuse or cut a watch of the definition,
// so the state is polled, a LIST until one answers, bounded only by ctx.
func waitServed(ctx context.Context, t *testing.T, rc *client.ResourceClient) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := rc.List(ctx, api.ListOptions{})
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			require.FailNow(t, "the custom resource was never served", "last answer: %v", err)
		case <-tick.C:
		}
	}
}

// retry429 retries a write refused by a 429 burst a few times.
func retry429(f func() error) error {
	for range 10 {
		err := f()
		if !client.IsTooManyRequests(err) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return f()
}

// write makes one random change to Deployment name, keeping live (which
// Deployments exist) up to date.
func write(ctx context.Context, deps *client.ResourceClient, live map[string]bool, name string, rng *rand.Rand) error {
	var err error
	switch {
	case !live[name]:
		_, err = deps.Create(ctx, deployment(name, rng.IntN(4)))
		if err == nil || client.IsAlreadyExists(err) {
			live[name] = true
		}
	case rng.IntN(4) == 0:
		err = deps.Delete(ctx, name, client.DeleteOptions{PropagationPolicy: "Background"})
		if err == nil || client.IsNotFound(err) {
			live[name] = false
		}
	default:
		_, err = deps.Patch(ctx, name, client.PatchTypeMerge, []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, rng.IntN(5))))
	}
	return err
}

// writeWebsite makes one random change to Website name, keeping live up
// to date: create it, delete it, or change its message and replicas.
func writeWebsite(ctx context.Context, sites *client.ResourceClient, live map[string]bool, name string, rng *rand.Rand) error {
	var err error
	switch {
	case !live[name]:
		w := &api.Object{APIVersion: website.APIVersion, Kind: website.Kind, Metadata: api.ObjectMeta{Namespace: "default", Name: name}}
		_ = w.Set("spec", json.RawMessage(fmt.Sprintf(`{"message":"m%d","replicas":%d}`, rng.IntN(100), rng.IntN(3))))
		_, err = sites.Create(ctx, w)
		if err == nil || client.IsAlreadyExists(err) {
			live[name] = true
		}
	case rng.IntN(4) == 0:
		err = sites.Delete(ctx, name, client.DeleteOptions{PropagationPolicy: "Background"})
		if err == nil || client.IsNotFound(err) {
			live[name] = false
		}
	default:
		_, err = sites.Patch(ctx, name, client.PatchTypeMerge, []byte(fmt.Sprintf(`{"spec":{"message":"m%d","replicas":%d,"image":"httpd"}}`, rng.IntN(100), rng.IntN(3))))
	}
	return err
}

var chaosTrace = flag.String("chaos.trace", "", "file TestControllersConvergeUnderFaults narrates its controllers and workqueues to")

// controllerTracer narrates the controllers and their workqueues to the
// file named by -chaos.trace, or is nil (silent).
func controllerTracer(t *testing.T) *narrate.Tracer {
	if *chaosTrace == "" {
		return nil
	}
	f, err := os.Create(*chaosTrace)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, f.Close()) })
	return narrate.New(f)
}

// convergenceBound is the longest waitConverged waits once the faults
// stop. It is a safety bound, not a guess at how long convergence takes:
// the controllers' retries are capped at a few seconds and a healthy run
// converges in seconds even under -race on two busy cores; what outlasts
// it is lost work, or something stuck.
const convergenceBound = 3 * time.Minute

// checkTimeout bounds one round of state checks (see checkState).
const checkTimeout = 30 * time.Second

// waitConverged polls until every queue is idle and CheckControllers and
// CheckWebsites find nothing, and returns what they last found (nothing
// once converged) with the queues as they were then.
func waitConverged(ctx context.Context, t *testing.T, queues func() []workqueue.Metrics, c *client.Client) ([]string, []workqueue.Metrics) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, convergenceBound)
	defer cancel()
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	problems := []string{"the queues never went idle"}
	for {
		qs := queues()
		if allIdle(qs) {
			got := checkState(ctx, c)
			if ctx.Err() != nil {
				return problems, qs // the bound ended during the check: report the last complete one
			}
			problems = got
			// The state is read after the queues were seen idle: if one
			// took work meanwhile, look again.
			if len(problems) == 0 && allIdle(queues()) {
				t.Logf("converged %v after the faults stopped", time.Since(start).Round(time.Millisecond))
				return nil, qs
			}
		}
		select {
		case <-ctx.Done():
			return problems, qs
		case <-tick.C:
		}
	}
}

// checkState runs CheckControllers and CheckWebsites. Each round of
// checks has checkTimeout, so that one request stuck on a dead pooled
// connection is given up (and its connection closed) and the next poll
// asks again, instead of spending the whole convergence bound on it.
func checkState(ctx context.Context, c *client.Client) []string {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	var problems []string
	for _, check := range []func(context.Context, *client.Client) ([]string, error){CheckControllers, CheckWebsites} {
		got, err := check(ctx, c)
		if err != nil {
			got = []string{err.Error()}
		}
		problems = append(problems, got...)
	}
	return problems
}

func allIdle(qs []workqueue.Metrics) bool {
	for _, q := range qs {
		if !q.Idle() {
			return false
		}
	}
	return true
}

// describeQueues says, per queue, whether it was idle and what it held.
func describeQueues(qs []workqueue.Metrics) string {
	var b strings.Builder
	for _, q := range qs {
		fmt.Fprintf(&b, "%s: idle=%v depth=%d in-progress=%d waiting=%d retries=%d; ", q.Name, q.Idle(), q.Depth, q.InProgress, q.Waiting, q.Retries)
	}
	return b.String()
}

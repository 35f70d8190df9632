package manager

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/deployment"
	"listwatch/controllers/leaderelection"
	"listwatch/controllers/replicaset"
	"listwatch/controllers/website"
	"listwatch/informer"
	"listwatch/internal/clock"
	"listwatch/narrate"
	"listwatch/reflector"
	"listwatch/workqueue"
)

// The controllers a Manager can run.
const (
	Deployment     = "deployment"
	ReplicaSet     = "replicaset"
	Kubelet        = "kubelet"
	GC             = "gc"
	Namespace      = "namespace"
	ServiceAccount = "serviceaccount"
	// Website is the workshop's operator (controllers/website), run only
	// when named: it reconciles every namespace's Websites.
	Website = "website"
)

// All is every built-in controller, the default.
var All = []string{Deployment, ReplicaSet, Kubelet, GC, Namespace, ServiceAccount}

// Known is every controller a Manager can run: All and the operator.
var Known = []string{Deployment, ReplicaSet, Kubelet, GC, Namespace, ServiceAccount, Website}

// WebsiteGCKind is the Website custom resource as an owner the garbage
// collector watches, so that deleting a Website removes what it owns.
// Its CustomResourceDefinition must exist before the collector starts.
var WebsiteGCKind = Kind{GVR: website.Websites, Kind: website.Kind, Namespaced: true}

// Kind names a resource the garbage collector watches.
type Kind struct {
	GVR        api.GroupVersionResource
	Kind       string
	Namespaced bool
}

// DefaultGCKinds are the resources the garbage collector watches unless
// told otherwise: the kinds our apiserver serves that controllers create.
var DefaultGCKinds = []Kind{
	{GVR: deployment.Deployments, Kind: "Deployment", Namespaced: true},
	{GVR: replicaset.ReplicaSets, Kind: "ReplicaSet", Namespaced: true},
	{GVR: replicaset.Pods, Kind: "Pod", Namespaced: true},
	{GVR: api.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true},
	{GVR: api.GroupVersionResource{Version: "v1", Resource: "services"}, Kind: "Service", Namespaced: true},
}

// Config configures a Manager.
type Config struct {
	// Client talks to the apiserver (ours or a real one).
	Client *client.Client
	// Controllers to run; nil runs All.
	Controllers []string
	// Workers per controller (default 2).
	Workers int
	// KubeletStartDelay is how long a Pod takes to become Ready.
	KubeletStartDelay time.Duration
	// NodeName is the kubelet's node.
	NodeName string
	// GCKinds are the resources the garbage collector watches; nil is
	// DefaultGCKinds. Add your custom resources to collect what they own.
	GCKinds []Kind
	// GCWatchAll makes the garbage collector watch every resource the
	// server serves besides GCKinds, and look again every 30 s, as
	// kube-controller-manager's does (gc.Discovery). Off, an object of a
	// kind outside GCKinds deleted with propagationPolicy Orphan or
	// Foreground keeps its finalizer, for nothing removes it.
	GCWatchAll bool
	// MaxRetryDelay caps how long a failing key waits before its next try
	// (0: 1000 s, Kubernetes' cap; see controllers.Settings).
	MaxRetryDelay time.Duration
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Tracer narrates the controllers and workqueues (not the informers:
	// that would be every layer, every event). nil is silent.
	Tracer *narrate.Tracer
	// LeaderElection, if set, makes the Manager compete for a Lease and
	// run its controllers only while it holds it, so that several can run
	// side by side; nil runs them at once (kube-controller-manager
	// --leader-elect=false).
	LeaderElection *LeaderElection
}

// LeaderElection configures the Manager's election (package
// leaderelection); zero values are kube-controller-manager's defaults.
type LeaderElection struct {
	// Namespace and Name locate the Lease: DefaultLeaseNamespace and
	// DefaultLeaseName unless set.
	Namespace, Name string
	// Identity is this Manager's name in the Lease; unique among the
	// candidates. Default: the hostname, "_" and a random suffix, as
	// kube-controller-manager makes it.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod: see
	// leaderelection.Config (15 s, 10 s and 2 s by default).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// ReleaseOnCancel releases the Lease when Run's context ends, so the
	// next candidate need not wait LeaseDuration.
	ReleaseOnCancel bool
}

// The Lease the Managers compete for unless told otherwise: in
// kube-system, as kube-controller-manager's (named kube-controller-manager)
// is, under a name of our own, so that ours and the real one can run
// against the same server without taking turns.
const (
	DefaultLeaseNamespace = "kube-system"
	DefaultLeaseName      = "listwatch-controller-manager"
)

// Manager is the configured controllers, built on shared informers and
// ready to run.
type Manager struct {
	cfg     Config
	names   []string
	factory *informer.Factory
	ctrls   []controller
	events  *controllers.Broadcaster
	elector *leaderelection.Elector // nil without leader election
	leading atomic.Bool             // the controllers are running as the leader's
}

// controller is one built controller: how to run it and how to read its
// workqueue.
type controller struct {
	run   func(context.Context)
	queue func() workqueue.Metrics
}

// Run runs the configured controllers against cfg.Client until ctx ends,
// sharing one informer per resource among them, as kube-controller-manager
// does. It returns once every controller and informer has stopped.
func Run(ctx context.Context, cfg Config) error {
	m, err := New(cfg)
	if err != nil {
		return err
	}
	return m.Run(ctx)
}

// New builds the configured controllers and registers their handlers on
// shared informers. The Manager must then be Run (with a cancelled
// context, if it is not wanted after all): its queues' timer goroutines
// stop when Run returns.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil {
		return nil, errors.New("manager: Config needs a Client")
	}
	names := cfg.Controllers
	if names == nil {
		names = All
	}
	for _, n := range names {
		if !slices.Contains(Known, n) {
			return nil, fmt.Errorf("manager: unknown controller %q (have %v)", n, Known)
		}
	}
	gcKinds := cfg.GCKinds
	if gcKinds == nil {
		gcKinds = DefaultGCKinds
	}
	if slices.Contains(names, Website) && !slices.Contains(gcKinds, WebsiteGCKind) {
		gcKinds = append(slices.Clone(gcKinds), WebsiteGCKind)
	}
	c := cfg.Client
	factory := informer.NewFactory(func(gvr api.GroupVersionResource, ns string) reflector.ListerWatcher {
		return c.Resource(gvr).Namespace(ns)
	}, 0, informer.Options{Clock: cfg.Clock})
	settings := controllers.Settings{Workers: cfg.Workers, Clock: cfg.Clock, Tracer: cfg.Tracer, MaxRetryDelay: cfg.MaxRetryDelay}
	events := controllers.NewBroadcaster(c, settings)
	b := builder{cfg: cfg, client: c, gcKinds: gcKinds, settings: settings, events: events,
		inf: func(gvr api.GroupVersionResource) (*informer.SharedIndexInformer, error) {
			return factory.InformerFor(gvr, "")
		}}
	ctrls, err := build(b, names)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, names: names, factory: factory, ctrls: ctrls, events: events}
	if cfg.LeaderElection != nil {
		if m.elector, err = newElector(cfg, m.lead); err != nil {
			stopUnstarted(ctrls)
			return nil, err
		}
	}
	return m, nil
}

// Run runs the controllers until ctx ends, or, with leader election, while
// this Manager holds the Lease. It returns once every controller and
// informer has stopped: nil when ctx ended, leaderelection.ErrLeadershipLost
// when the Lease was lost (kube-controller-manager exits then; start a new
// Manager to compete again).
func (m *Manager) Run(ctx context.Context) error {
	if m.elector == nil {
		m.runControllers(ctx)
		return nil
	}
	m.cfg.Tracer.Printf(narrate.Controller, "manager: waiting to lead before starting %v", m.names)
	err := m.elector.Run(ctx)
	if !m.elector.Led() {
		m.runControllers(cancelled()) // never led: stop their queues
	}
	return err
}

// IsLeader reports whether this Manager's controllers are running as the
// leader's (always true without leader election).
func (m *Manager) IsLeader() bool { return m.elector == nil || m.leading.Load() }

// lead runs the controllers while this Manager leads.
func (m *Manager) lead(ctx context.Context) {
	m.leading.Store(true)
	defer m.leading.Store(false)
	m.runControllers(ctx)
}

// runControllers starts the informers and every controller and returns
// once ctx has ended and they have all stopped.
func (m *Manager) runControllers(ctx context.Context) {
	m.cfg.Tracer.Printf(narrate.Controller, "manager: starting %v", m.names)
	m.factory.Start(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { m.events.Run(ctx) })
	for _, c := range m.ctrls {
		wg.Go(func() { c.run(ctx) })
	}
	<-ctx.Done()
	wg.Wait()
	m.factory.Shutdown()
}

// Queues returns a snapshot of every controller's workqueue, in the order
// of Config.Controllers: a test waits for them all to be Idle before it
// checks that the controllers converged.
func (m *Manager) Queues() []workqueue.Metrics {
	qs := make([]workqueue.Metrics, 0, len(m.ctrls))
	for _, c := range m.ctrls {
		qs = append(qs, c.queue())
	}
	return qs
}

// build creates the named controllers, registering their handlers on the
// shared informers. On an error the controllers already built are run
// with a cancelled context, which stops their queues.
func build(b builder, names []string) (runs []controller, err error) {
	defer func() {
		if err != nil {
			stopUnstarted(runs)
			runs = nil
		}
	}()
	for _, n := range names {
		ctrl, err := builders[n](b)
		if err != nil {
			return runs, err
		}
		runs = append(runs, ctrl)
	}
	return runs, nil
}

// stopUnstarted runs controllers that will never run with a cancelled
// context, which stops their queues.
func stopUnstarted(runs []controller) {
	for _, r := range runs {
		r.run(cancelled())
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

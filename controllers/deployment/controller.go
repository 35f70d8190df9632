package deployment

import (
	"context"
	"errors"
	"fmt"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// The resources this controller reads and writes.
var (
	Deployments = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ReplicaSets = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

// The owner reference a ReplicaSet of a Deployment carries. (Objects in a
// list carry no apiVersion or kind, so they are not read from the cache.)
const (
	apiVersion = "apps/v1"
	kind       = "Deployment"
)

// Options configures a Controller.
type Options struct {
	// Client writes ReplicaSets and Deployment status.
	Client *client.Client
	// Deployments and ReplicaSets are the informers the controller reads;
	// they must watch every namespace (or the same one).
	Deployments, ReplicaSets *informer.SharedIndexInformer
	// Events records what it does (nil: nothing).
	Events controllers.EventRecorder
	controllers.Settings
}

// Controller rolls each Deployment out through ReplicaSets, one per
// template, and reports the rollout in the Deployment's status.
type Controller struct {
	opts   Options
	queue  *workqueue.RateLimitingQueue[string]
	status controllers.StatusWriter
	regs   []informer.ResourceEventHandlerRegistration
}

// New builds a controller and registers its event handlers. Run it with
// Run once the informers are started.
func New(opts Options) (*Controller, error) {
	if opts.Client == nil || opts.Deployments == nil || opts.ReplicaSets == nil {
		return nil, errors.New("deployment: Options needs Client, Deployments and ReplicaSets")
	}
	if opts.Events == nil {
		opts.Events = controllers.NopRecorder{}
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Controller{opts: opts, queue: controllers.NewQueue[string]("deployment", opts.Settings)}
	dreg, err := opts.Deployments.AddEventHandlerWithOptions(controllers.EnqueueHandler(c.queue), informer.HandlerOptions{Name: "deployment-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("deployment: %w", err)
	}
	// A ReplicaSet's every change (its status as its Pods come and go, a
	// scale) brings its Deployment back: addReplicaSet, updateReplicaSet,
	// deleteReplicaSet in deployment_controller.go.
	rreg, err := opts.ReplicaSets.AddEventHandlerWithOptions(controllers.EnqueueOwnerHandler(c.queue, apiVersion, kind), informer.HandlerOptions{Name: "deployment-controller"})
	if err != nil {
		c.queue.ShutDown()
		return nil, fmt.Errorf("deployment: %w", err)
	}
	c.regs = []informer.ResourceEventHandlerRegistration{dreg, rreg}
	return c, nil
}

// Run waits for the caches, then reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, c.opts.Deployments, c.opts.ReplicaSets, c.regs[0], c.regs[1]) {
		c.queue.ShutDown()
		return
	}
	c.opts.Tracer.Printf(narrate.Controller, "deployment: caches synced, %d workers", c.opts.Workers)
	controllers.RunWorkers(ctx, "deployment", c.queue, c.opts.Workers, c.reconcile, c.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (c *Controller) Queue() workqueue.Metrics { return c.queue.Metrics() }

// reconcile takes the Deployment under key one step further in its
// rollout and writes its status (syncDeployment). Everything it decides
// comes from the informers' caches; a write made on a stale view fails
// with 409 Conflict (ReplicaSets are updated at the resourceVersion they
// were read at) or 409 AlreadyExists, and the key is tried again.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	d, ok := c.opts.Deployments.GetIndexer().GetByKey(key)
	if !ok || d.Metadata.DeletionTimestamp != nil {
		return nil // gone or going: its ReplicaSets are the garbage collector's
	}
	s, err := readSpec(d)
	if err != nil {
		// Retrying cannot fix a bad spec; the next edit queues it again.
		c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: %v", key, err)
		return nil
	}
	all, err := c.replicaSetsOf(d)
	if err != nil {
		return err
	}
	newRS, old, rolloutErr := c.rollout(ctx, d, s, all)
	st := calculateStatus(d, s, readStatus(d), newRS, old, c.opts.Clock.Now())
	var errs []error
	if rolloutErr == nil && complete(d, s, st) {
		errs = append(errs, c.cleanup(ctx, d, s, old))
	}
	errs = append(errs, rolloutErr, c.syncRevision(ctx, d, newRS), c.updateStatus(ctx, d, st))
	return errors.Join(errs...)
}

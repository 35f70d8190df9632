package replicaset

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
	ReplicaSets = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	Pods        = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// The owner reference a Pod of a ReplicaSet carries.
const (
	APIVersion = "apps/v1"
	Kind       = "ReplicaSet"
)

// burstReplicas caps the Pods one reconcile creates or deletes
// (replica_set.go BurstReplicas); the rest wait for the next.
const burstReplicas = 500

// Options configures a Controller.
type Options struct {
	// Client writes Pods and ReplicaSet status.
	Client *client.Client
	// ReplicaSets and Pods are the informers the controller reads; they
	// must watch every namespace (or the same one).
	ReplicaSets, Pods *informer.SharedIndexInformer
	// Events records what it does (nil: nothing).
	Events controllers.EventRecorder
	controllers.Settings
}

// Controller keeps each ReplicaSet's number of Pods at spec.replicas.
type Controller struct {
	opts   Options
	queue  *workqueue.RateLimitingQueue[string]
	expect *controllers.Expectations
	status controllers.StatusWriter
	regs   []informer.ResourceEventHandlerRegistration
}

// New builds a controller and registers its event handlers.
func New(opts Options) (*Controller, error) {
	if opts.Client == nil || opts.ReplicaSets == nil || opts.Pods == nil {
		return nil, errors.New("replicaset: Options needs Client, ReplicaSets and Pods")
	}
	if opts.Events == nil {
		opts.Events = controllers.NopRecorder{}
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Controller{
		opts:   opts,
		queue:  controllers.NewQueue[string]("replicaset", opts.Settings),
		expect: controllers.NewExpectations(opts.Clock),
	}
	rreg, err := opts.ReplicaSets.AddEventHandlerWithOptions(controllers.EnqueueHandler(c.queue), informer.HandlerOptions{Name: "replicaset-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	preg, err := opts.Pods.AddEventHandlerWithOptions(c.podHandler(), informer.HandlerOptions{Name: "replicaset-controller"})
	if err != nil {
		c.queue.ShutDown()
		return nil, fmt.Errorf("replicaset: %w", err)
	}
	c.regs = []informer.ResourceEventHandlerRegistration{rreg, preg}
	return c, nil
}

// podHandler queues a Pod's owning ReplicaSet, and lowers its
// expectations when the event is one of its own creations or deletions
// (addPod, updatePod, deletePod in replica_set.go).
func (c *Controller) podHandler() informer.ResourceEventHandler {
	return informer.ResourceEventHandlerFuncs{
		AddFunc: func(p *api.Object, _ bool) {
			if key, ok := controllers.OwnerKey(p, APIVersion, Kind); ok {
				c.expect.CreationObserved(key)
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(old, p *api.Object) {
			// A Pod that became ready changes its owner's status; one whose
			// owner changed concerns both owners.
			for _, o := range []*api.Object{old, p} {
				if key, ok := controllers.OwnerKey(o, APIVersion, Kind); ok {
					c.queue.Add(key)
				}
			}
		},
		DeleteFunc: func(obj any) {
			if p := informer.ObjectOf(obj); p != nil {
				if key, ok := controllers.OwnerKey(p, APIVersion, Kind); ok {
					c.expect.DeletionObserved(key)
					c.queue.Add(key)
				}
			}
		},
	}
}

// Run waits for the caches, then reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, c.opts.ReplicaSets, c.opts.Pods, c.regs[0], c.regs[1]) {
		c.queue.ShutDown()
		return
	}
	c.opts.Tracer.Printf(narrate.Controller, "replicaset: caches synced, %d workers", c.opts.Workers)
	controllers.RunWorkers(ctx, "replicaset", c.queue, c.opts.Workers, c.reconcile, c.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (c *Controller) Queue() workqueue.Metrics { return c.queue.Metrics() }

// reconcile makes the Pods of the ReplicaSet under key match its spec
// (syncReplicaSet). Everything it decides comes from the caches.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	rs, ok := c.opts.ReplicaSets.GetIndexer().GetByKey(key)
	if !ok {
		c.expect.Forget(key) // gone: its Pods are the garbage collector's
		return nil
	}
	s, err := readSpec(rs)
	if err != nil {
		c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s: %v", key, err)
		return nil // retrying cannot fix a bad spec; the next edit queues it
	}
	active, err := c.podsOf(rs)
	if err != nil {
		return err
	}
	var manageErr error
	if c.expect.Satisfied(key) && rs.Metadata.DeletionTimestamp == nil {
		manageErr = c.manageReplicas(ctx, key, rs, s, active)
	} else if !c.expect.Satisfied(key) {
		c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s: waiting for the cache to see earlier creations/deletions", key)
	}
	statusErr := c.updateStatus(ctx, rs, s, active)
	return errors.Join(manageErr, statusErr)
}

package namespace

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// Namespaces is the resource the controller watches and finalizes.
var Namespaces = api.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// finalizerKubernetes is the entry of spec.finalizers this controller
// owns (core/v1 FinalizerKubernetes).
const finalizerKubernetes = "kubernetes"

// Options configures a Controller.
type Options struct {
	// Client discovers resources, deletes what a namespace holds and
	// finalizes it.
	Client *client.Client
	// Namespaces is the Namespace informer.
	Namespaces *informer.SharedIndexInformer
	controllers.Settings
}

// Controller empties and finalizes namespaces being deleted.
type Controller struct {
	opts  Options
	queue *workqueue.RateLimitingQueue[string]
	reg   informer.ResourceEventHandlerRegistration
}

// New builds a controller and registers its event handler.
func New(opts Options) (*Controller, error) {
	if opts.Client == nil || opts.Namespaces == nil {
		return nil, errors.New("namespace: Options needs Client and Namespaces")
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Controller{opts: opts, queue: controllers.NewQueue[string]("namespace", opts.Settings)}
	// Every event queues the name; the reconcile skips namespaces that are
	// not being deleted (the real controller's handler filters the same).
	reg, err := opts.Namespaces.AddEventHandlerWithOptions(controllers.EnqueueHandler(c.queue), informer.HandlerOptions{Name: "namespace-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("namespace: %w", err)
	}
	c.reg = reg
	return c, nil
}

// Run waits for the cache, then reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, c.opts.Namespaces, c.reg) {
		c.queue.ShutDown()
		return
	}
	controllers.RunWorkers(ctx, "namespace", c.queue, c.opts.Workers, c.reconcile, c.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (c *Controller) Queue() workqueue.Metrics { return c.queue.Metrics() }

// errContentRemains retries a namespace whose objects are not all gone yet.
var errContentRemains = errors.New("content remains: looking again")

// reconcile deletes everything in the namespace and, when nothing is left,
// finalizes it (syncNamespaceFromKey, then the deleter's Delete).
func (c *Controller) reconcile(ctx context.Context, name string) error {
	ns, ok := c.opts.Namespaces.GetIndexer().GetByKey(name)
	if !ok || ns.Metadata.DeletionTimestamp == nil || !slices.Contains(specFinalizers(ns), finalizerKubernetes) {
		return nil // not being deleted, or finalized already
	}
	remaining, err := c.deleteAllContent(ctx, name)
	if err != nil {
		return err
	}
	if remaining > 0 {
		c.opts.Tracer.Printf(narrate.Controller, "namespace: %s: %d objects still being deleted", name, remaining)
		return fmt.Errorf("namespace %s: %d objects: %w", name, remaining, errContentRemains)
	}
	return c.finalize(ctx, ns)
}

// deleteAllContent deletes the namespace's objects of every namespaced
// resource that can be listed and deleted, and returns how many are still
// there afterwards (being deleted gracefully, or held by finalizers).
func (c *Controller) deleteAllContent(ctx context.Context, ns string) (int, error) {
	resources, err := c.opts.Client.ServerPreferredResources(ctx)
	if err != nil {
		return 0, fmt.Errorf("namespace %s: discovery: %w", ns, err)
	}
	remaining := 0
	var errs []error
	for _, r := range resources {
		if !r.Namespaced || !r.Allows("list") || !(r.Allows("delete") || r.Allows("deletecollection")) {
			continue
		}
		n, err := c.deleteCollection(ctx, r, ns)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		remaining += n
	}
	return remaining, errors.Join(errs...)
}

// deleteCollection deletes r's objects in ns (one DELETE of the collection
// if r allows it, else one per object) and lists what is left.
func (c *Controller) deleteCollection(ctx context.Context, r client.APIResource, ns string) (int, error) {
	rc := c.opts.Client.Resource(r.GVR).Namespace(ns)
	bg := client.DeleteOptions{PropagationPolicy: "Background"}
	if r.Allows("deletecollection") {
		if err := rc.DeleteCollection(ctx, bg, api.ListOptions{}); err != nil && !client.IsNotFound(err) && !client.IsMethodNotSupported(err) {
			return 0, fmt.Errorf("namespace %s: deleting %s: %w", ns, r.GVR.Resource, err)
		}
	}
	left, err := rc.List(ctx, api.ListOptions{})
	if client.IsNotFound(err) || client.IsMethodNotSupported(err) {
		return 0, nil // served no longer (a CRD deleted meanwhile)
	}
	if err != nil {
		return 0, fmt.Errorf("namespace %s: listing %s: %w", ns, r.GVR.Resource, err)
	}
	for _, o := range left.Items {
		if o.Metadata.DeletionTimestamp != nil {
			continue // being deleted already
		}
		err := rc.Delete(ctx, o.Metadata.Name, client.DeleteOptions{PropagationPolicy: "Background",
			Preconditions: &client.Preconditions{UID: o.Metadata.UID}})
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
			return 0, fmt.Errorf("namespace %s: deleting %s %s: %w", ns, r.GVR.Resource, o.Metadata.Name, err)
		}
	}
	if len(left.Items) > 0 {
		c.opts.Tracer.Printf(narrate.Controller, "namespace: %s: %d %s left", ns, len(left.Items), r.GVR.Resource)
	}
	return len(left.Items), nil
}

// finalize removes "kubernetes" from spec.finalizers through the finalize
// subresource; with nothing else left there, the server deletes the
// namespace.
func (c *Controller) finalize(ctx context.Context, ns *api.Object) error {
	next := ns.DeepCopy()
	next.APIVersion, next.Kind = "v1", "Namespace"
	var rest []string
	for _, f := range specFinalizers(ns) {
		if f != finalizerKubernetes {
			rest = append(rest, f)
		}
	}
	if err := setSpecFinalizers(next, rest); err != nil {
		return err
	}
	_, err := c.opts.Client.Resource(Namespaces).Finalize(ctx, next)
	switch {
	case client.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("namespace %s: finalize: %w", ns.Metadata.Name, err)
	}
	c.opts.Tracer.Printf(narrate.Controller, "namespace: %s is empty: finalized", ns.Metadata.Name)
	return nil
}

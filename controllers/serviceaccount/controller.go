package serviceaccount

import (
	"context"
	"encoding/json"
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
	Namespaces      = api.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	ServiceAccounts = api.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
)

// ToEnsure are the ServiceAccounts every namespace gets
// (DefaultServiceAccountsControllerOptions).
var ToEnsure = []string{"default"}

// Options configures a Controller.
type Options struct {
	// Client creates ServiceAccounts.
	Client *client.Client
	// Namespaces and ServiceAccounts are the informers it reads, every
	// namespace's.
	Namespaces, ServiceAccounts *informer.SharedIndexInformer
	controllers.Settings
}

// Controller creates every namespace's default ServiceAccount.
type Controller struct {
	opts  Options
	queue *workqueue.RateLimitingQueue[string]
	regs  []informer.ResourceEventHandlerRegistration
}

// New builds a controller and registers its event handlers.
func New(opts Options) (*Controller, error) {
	if opts.Client == nil || opts.Namespaces == nil || opts.ServiceAccounts == nil {
		return nil, errors.New("serviceaccount: Options needs Client, Namespaces and ServiceAccounts")
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Controller{opts: opts, queue: controllers.NewQueue[string]("serviceaccount", opts.Settings)}
	nreg, err := opts.Namespaces.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
		AddFunc:    func(ns *api.Object, _ bool) { c.queue.Add(ns.Metadata.Name) },
		UpdateFunc: func(_, ns *api.Object) { c.queue.Add(ns.Metadata.Name) },
	}, informer.HandlerOptions{Name: "serviceaccount-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("serviceaccount: %w", err)
	}
	sreg, err := opts.ServiceAccounts.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if sa := informer.ObjectOf(obj); sa != nil {
				c.queue.Add(sa.Metadata.Namespace)
			}
		},
	}, informer.HandlerOptions{Name: "serviceaccount-controller"})
	if err != nil {
		c.queue.ShutDown()
		return nil, fmt.Errorf("serviceaccount: %w", err)
	}
	c.regs = []informer.ResourceEventHandlerRegistration{nreg, sreg}
	return c, nil
}

// Run waits for the caches, then reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, c.opts.Namespaces, c.opts.ServiceAccounts, c.regs[0], c.regs[1]) {
		c.queue.ShutDown()
		return
	}
	controllers.RunWorkers(ctx, "serviceaccount", c.queue, c.opts.Workers, c.reconcile, c.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (c *Controller) Queue() workqueue.Metrics { return c.queue.Metrics() }

// reconcile creates the namespace's missing ServiceAccounts
// (syncNamespace).
func (c *Controller) reconcile(ctx context.Context, ns string) error {
	nsObj, ok := c.opts.Namespaces.GetIndexer().GetByKey(ns)
	if !ok || phase(nsObj) != "Active" {
		return nil // gone, or being deleted: nothing may be created in it
	}
	var errs []error
	for _, name := range ToEnsure {
		if _, ok := c.opts.ServiceAccounts.GetIndexer().GetByKey(ns + "/" + name); ok {
			continue
		}
		sa := &api.Object{APIVersion: "v1", Kind: "ServiceAccount", Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
		_, err := c.opts.Client.Resource(ServiceAccounts).Namespace(ns).Create(ctx, sa)
		switch {
		case err == nil:
			c.opts.Tracer.Printf(narrate.Controller, "serviceaccount: created %s/%s", ns, name)
		case client.IsAlreadyExists(err), namespaceTerminating(err):
			// the cache was behind, or the namespace began terminating
		default:
			errs = append(errs, fmt.Errorf("serviceaccount: creating %s/%s: %w", ns, name, err))
		}
	}
	return errors.Join(errs...)
}

// phase is a namespace's status.phase.
func phase(ns *api.Object) string {
	var st struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(ns.Get("status"), &st)
	return st.Phase
}

// namespaceTerminating reports whether err refused a create because the
// namespace is being deleted (apierrors.HasStatusCause with
// NamespaceTerminatingCause): harmless, nothing more will be created there.
func namespaceTerminating(err error) bool {
	var st *api.Status
	if !errors.As(err, &st) || st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == "NamespaceTerminating" {
			return true
		}
	}
	return false
}

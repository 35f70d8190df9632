package deployment

import (
	"cmp"
	"context"
	"encoding/json"
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

// The resources this controller reads and writes.
var (
	Deployments = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	Pods        = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// The owner reference a Pod of a Deployment carries. (Objects in a list
// carry no apiVersion or kind, so they are not read from the cache.)
const (
	apiVersion = "apps/v1"
	kind       = "Deployment"
)

// Options configures a Controller.
type Options struct {
	// Client writes Pods and Deployment status.
	Client *client.Client
	// Deployments and Pods are the informers the controller reads; they
	// must watch every namespace (or the same one).
	Deployments, Pods *informer.SharedIndexInformer
	controllers.Settings
}

// Controller keeps each Deployment's number of Pods at spec.replicas and
// reports what it sees in the Deployment's status.
type Controller struct {
	opts   Options
	queue  *workqueue.RateLimitingQueue[string]
	expect *controllers.Expectations
	status controllers.StatusWriter
	regs   []informer.ResourceEventHandlerRegistration
}

// New builds a controller and registers its event handlers. Run it with
// Run once the informers are started.
func New(opts Options) (*Controller, error) {
	if opts.Client == nil || opts.Deployments == nil || opts.Pods == nil {
		return nil, errors.New("deployment: Options needs Client, Deployments and Pods")
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := &Controller{
		opts:   opts,
		queue:  controllers.NewQueue[string]("deployment", opts.Settings),
		expect: controllers.NewExpectations(opts.Clock),
	}
	dreg, err := opts.Deployments.AddEventHandlerWithOptions(controllers.EnqueueHandler(c.queue), informer.HandlerOptions{Name: "deployment-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("deployment: %w", err)
	}
	preg, err := opts.Pods.AddEventHandlerWithOptions(informer.ResourceEventHandlerFuncs{
		AddFunc: func(p *api.Object, _ bool) {
			if key, ok := controllers.OwnerKey(p, apiVersion, kind); ok {
				c.expect.CreationObserved(key)
				c.queue.Add(key)
			}
		},
		UpdateFunc: func(old, p *api.Object) {
			// A Pod that became ready changes its Deployment's status;
			// one whose owner changed concerns both owners.
			for _, o := range []*api.Object{old, p} {
				if key, ok := controllers.OwnerKey(o, apiVersion, kind); ok {
					c.queue.Add(key)
				}
			}
		},
		DeleteFunc: func(obj any) {
			if p := informer.ObjectOf(obj); p != nil {
				if key, ok := controllers.OwnerKey(p, apiVersion, kind); ok {
					c.expect.DeletionObserved(key)
					c.queue.Add(key)
				}
			}
		},
	}, informer.HandlerOptions{Name: "deployment-controller"})
	if err != nil {
		c.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("deployment: %w", err)
	}
	c.regs = []informer.ResourceEventHandlerRegistration{dreg, preg}
	return c, nil
}

// Run waits for the caches, then reconciles until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, c.opts.Deployments, c.opts.Pods, c.regs[0], c.regs[1]) {
		c.queue.ShutDown()
		return
	}
	c.opts.Tracer.Printf(narrate.Controller, "deployment: caches synced, %d workers", c.opts.Workers)
	controllers.RunWorkers(ctx, "deployment", c.queue, c.opts.Workers, c.reconcile, c.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (c *Controller) Queue() workqueue.Metrics { return c.queue.Metrics() }

// reconcile makes the Pods of the Deployment under key match its spec.
// Everything it decides comes from the informers' caches, not from the
// event that queued the key.
func (c *Controller) reconcile(ctx context.Context, key string) error {
	d, ok := c.opts.Deployments.GetIndexer().GetByKey(key)
	if !ok {
		// Gone: its Pods are the garbage collector's business.
		c.expect.Forget(key)
		return nil
	}
	if d.Metadata.DeletionTimestamp != nil {
		return nil
	}
	s, err := readSpec(d)
	if err != nil {
		// Retrying cannot fix a bad spec; the next edit queues it again.
		c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: %v", key, err)
		return nil
	}
	hash := templateHash(d)
	current, old, err := c.podsOf(d, hash)
	if err != nil {
		return err
	}
	want := int(*s.Replicas)
	readyCurrent := countReady(current)

	var errs []error
	if !c.expect.Satisfied(key) {
		c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: waiting for the cache to see earlier creations/deletions", key)
	} else {
		switch diff := want - len(current); {
		case diff > 0:
			c.opts.Tracer.Printf(narrate.Controller, "deployment: %s has %d of %d pods: creating %d", key, len(current), want, diff)
			c.expect.Expect(key, diff, 0)
			for range diff {
				if err := c.createPod(ctx, d, s, hash); err != nil {
					c.expect.CreationObserved(key) // no ADDED event will come
					errs = append(errs, err)
				}
			}
		case diff < 0:
			victims := pickVictims(current, -diff)
			c.opts.Tracer.Printf(narrate.Controller, "deployment: %s has %d of %d pods: deleting %d", key, len(current), want, len(victims))
			errs = append(errs, c.deletePods(ctx, key, victims)...)
		case len(old) > 0 && readyCurrent >= want:
			// The new template's Pods are all ready: retire the old ones
			// (a rolling update reduced to its last step).
			c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: %d new pods ready, deleting %d of the old template", key, readyCurrent, len(old))
			errs = append(errs, c.deletePods(ctx, key, old)...)
		}
	}
	if err := c.updateStatus(ctx, d, current, old); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// podsOf returns the live Pods d controls, split into those of its current
// template and the rest.
func (c *Controller) podsOf(d *api.Object, hash string) (current, old []*api.Object, err error) {
	pods, err := c.opts.Pods.GetIndexer().ByIndex(informer.NamespaceIndex, d.Metadata.Namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("deployment %s: listing pods from the cache: %w", d.Key(), err)
	}
	for _, p := range pods {
		ref, ok := controllers.ControllerOf(p)
		if !ok || ref.UID != d.Metadata.UID || readPod(p).terminating {
			continue
		}
		if p.Metadata.Labels[templateHashLabel] == hash {
			current = append(current, p)
		} else {
			old = append(old, p)
		}
	}
	return current, old, nil
}

func (c *Controller) createPod(ctx context.Context, d *api.Object, s spec, hash string) error {
	pod := &api.Object{APIVersion: "v1", Kind: "Pod", Metadata: api.ObjectMeta{
		GenerateName: d.Metadata.Name + "-" + hash + "-",
		Namespace:    d.Metadata.Namespace,
		Labels:       podLabels(s, hash),
		Annotations:  s.Template.Metadata.Annotations,
	}}
	owner := d.DeepCopy()
	owner.APIVersion, owner.Kind = apiVersion, kind
	if err := controllers.SetOwnerReferences(pod, []controllers.OwnerReference{controllers.ControllerRef(owner)}); err != nil {
		return err
	}
	if err := pod.Set("spec", s.Template.Spec); err != nil {
		return fmt.Errorf("deployment %s: template spec: %w", d.Key(), err)
	}
	created, err := c.opts.Client.Resource(Pods).Namespace(d.Metadata.Namespace).Create(ctx, pod)
	if err != nil {
		return fmt.Errorf("deployment %s: creating a pod: %w", d.Key(), err)
	}
	c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: created pod %s", d.Key(), created.Metadata.Name)
	return nil
}

func (c *Controller) deletePods(ctx context.Context, key string, pods []*api.Object) []error {
	c.expect.Expect(key, 0, len(pods))
	var errs []error
	for _, p := range pods {
		err := c.opts.Client.Resource(Pods).Namespace(p.Metadata.Namespace).Delete(ctx, p.Metadata.Name,
			client.DeleteOptions{Preconditions: &client.Preconditions{UID: p.Metadata.UID}})
		switch {
		case err == nil:
			c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: deleted pod %s", key, p.Metadata.Name)
		case client.IsNotFound(err):
			c.expect.DeletionObserved(key) // already gone: its DELETED event may have passed
		default:
			c.expect.DeletionObserved(key)
			errs = append(errs, fmt.Errorf("deployment %s: deleting pod %s: %w", key, p.Metadata.Name, err))
		}
	}
	return errs
}

// pickVictims chooses n Pods to delete: not-ready ones first, then the
// newest (they have done the least work), then by name for a stable order.
func pickVictims(pods []*api.Object, n int) []*api.Object {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *api.Object) int {
		ra, rb := readPod(a).ready, readPod(b).ready
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		if c := b.Metadata.CreationTimestamp.Compare(a.Metadata.CreationTimestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Metadata.Name, b.Metadata.Name)
	})
	return pods[:min(n, len(pods))]
}

func countReady(pods []*api.Object) int {
	n := 0
	for _, p := range pods {
		if readPod(p).ready {
			n++
		}
	}
	return n
}

// updateStatus writes what the cache shows, if it differs from what the
// Deployment's status says.
func (c *Controller) updateStatus(ctx context.Context, d *api.Object, current, old []*api.Object) error {
	s, _ := readSpec(d)
	ready := countReady(current) + countReady(old)
	next := status{
		ObservedGeneration:  d.Metadata.Generation,
		Replicas:            int32(len(current) + len(old)),
		UpdatedReplicas:     int32(len(current)),
		ReadyReplicas:       int32(ready),
		AvailableReplicas:   int32(ready), // minReadySeconds is 0: ready is available
		UnavailableReplicas: max(*s.Replicas-int32(ready), 0),
	}
	var prev status
	if raw := d.Get("status"); raw != nil {
		_ = json.Unmarshal(raw, &prev) // unreadable: overwritten below
	}
	if prev == next {
		return nil
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return err
	}
	upd := d.DeepCopy()
	upd.APIVersion, upd.Kind = apiVersion, kind
	if err := upd.Set("status", raw); err != nil {
		return err
	}
	if _, err := c.status.Update(ctx, c.opts.Client.Resource(Deployments).Namespace(d.Metadata.Namespace), upd); err != nil {
		if client.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("deployment %s: status: %w", d.Key(), err)
	}
	c.opts.Tracer.Printf(narrate.Controller, "deployment: %s status: %d replicas, %d updated, %d ready, %d available (generation %d)",
		d.Key(), next.Replicas, next.UpdatedReplicas, next.ReadyReplicas, next.AvailableReplicas, next.ObservedGeneration)
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/website"
	"listwatch/informer"
	"listwatch/internal/target"
	"listwatch/narrate"
	"listwatch/reflector"
	"listwatch/workqueue"
)

func main() {
	var tf target.Flags
	tf.Register(flag.CommandLine)
	trace := flag.Bool("trace", false, "narrate the workqueue and the reconciles")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var tr *narrate.Tracer
	if *trace {
		tr = narrate.New(os.Stdout)
	}
	if err := run(ctx, tf, tr); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

// operator holds step 2's informers and queue.
type operator struct {
	c                *client.Client
	sites, deps, cms *informer.SharedIndexInformer
	queue            workqueue.RateLimitingInterface[string]
	//lint:ignore U1000 step 4 writes the Website's status through it
	status controllers.StatusWriter
}

func run(ctx context.Context, tf target.Flags, tr *narrate.Tracer) error {
	t, err := target.Open(ctx, tf, apiserver.Config{}, client.Config{})
	if err != nil {
		return err
	}
	defer t.Close()
	// Step 1: the CustomResourceDefinition, applied with kubectl.
	if _, err := t.Resource(website.Websites).List(ctx, api.ListOptions{}); err != nil {
		return fmt.Errorf("step 1: websites are not served (kubectl apply -f workshop/manifests/website-crd.yaml): %w", err)
	}

	// Step 2: informers on websites and on what they own; every event
	// queues the key of the Website concerned, nothing more.
	op := &operator{c: t.Client, queue: controllers.NewQueue[string]("websites", controllers.Settings{Tracer: tr})}
	factory := informer.NewFactory(func(gvr api.GroupVersionResource, ns string) reflector.ListerWatcher {
		return t.Client.Resource(gvr).Namespace(ns)
	}, 0, informer.Options{})
	for gvr, dst := range map[api.GroupVersionResource]**informer.SharedIndexInformer{
		website.Websites: &op.sites, website.Deployments: &op.deps, website.ConfigMaps: &op.cms} {
		if *dst, err = factory.InformerFor(gvr, t.Namespace); err != nil {
			return err
		}
	}
	if _, err := op.sites.AddEventHandler(controllers.EnqueueHandler(op.queue)); err != nil {
		return err
	}
	for _, inf := range []*informer.SharedIndexInformer{op.deps, op.cms} {
		if _, err := inf.AddEventHandler(controllers.EnqueueOwnerHandler(op.queue, website.APIVersion, website.Kind)); err != nil {
			return err
		}
	}
	factory.Start(ctx)
	defer factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, op.sites, op.deps, op.cms) {
		op.queue.ShutDown()
		return ctx.Err()
	}
	fmt.Printf("operator: watching websites, deployments and configmaps in %s\n", t.Namespace)
	controllers.RunWorkers(ctx, "websites", op.queue, 2, op.reconcile, tr)
	return nil
}

// reconcile is called with the key ("namespace/name") of a Website that
// may need work. It must read the caches only, and be safe to repeat.
func (op *operator) reconcile(ctx context.Context, key string) error {
	site, ok := op.sites.GetIndexer().GetByKey(key)
	if !ok {
		fmt.Printf("reconcile %s: gone (the garbage collector removes what it owned)\n", key)
		return nil
	}
	fmt.Printf("reconcile %s: nothing to do yet\n", site.Key())
	// TODO(step 3): read the Website's spec (website.Spec) and work out its
	// children with website.Want: a ConfigMap website.ContentName(name)
	// whose data is the page, and a Deployment name with that spec. Create
	// each one missing from the caches (op.cms, op.deps) with an owner
	// reference to the Website (controllers.ControllerRef,
	// controllers.SetOwnerReferences), and update each one that differs.
	// Remember a cached object carries no apiVersion and kind.
	//
	// TODO(step 4): write the Website's status (website.Status) through
	// op.status: observedGeneration, readyReplicas from the Deployment's
	// status, and a Ready condition, True when every replica is ready.
	// Write only when it changed: every write is an event, and a queued key.
	return nil
}

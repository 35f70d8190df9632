package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"reflect"
	"time"

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
	status           controllers.StatusWriter
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

// reconcile makes the Website's children match it (step 3), then writes
// its status (step 4). It reads the caches only, and is safe to repeat.
func (op *operator) reconcile(ctx context.Context, key string) error {
	site, ok := op.sites.GetIndexer().GetByKey(key)
	if !ok {
		fmt.Printf("reconcile %s: gone (the garbage collector removes what it owned)\n", key)
		return nil
	}
	site = site.DeepCopy()
	site.APIVersion, site.Kind = website.APIVersion, website.Kind
	var spec website.Spec
	if err := json.Unmarshal(site.Get("spec"), &spec); err != nil {
		return nil // the schema makes this impossible; retrying would not help
	}
	ns, name := site.Metadata.Namespace, site.Metadata.Name
	data, depSpec, replicas := website.Want(name, spec)
	owner := controllers.ControllerRef(site)
	// Step 3: the children, each with an owner reference to the Website.
	if err := op.ensure(ctx, op.cms, website.ConfigMaps, "v1", "ConfigMap", ns, website.ContentName(name), "data", data, owner); err != nil {
		return err
	}
	if err := op.ensure(ctx, op.deps, website.Deployments, "apps/v1", "Deployment", ns, name, "spec", depSpec, owner); err != nil {
		return err
	}
	return op.updateStatus(ctx, site, replicas) // step 4
}

// ensure creates the child, or updates it when its field or its owner
// differs from what the Website wants.
func (op *operator) ensure(ctx context.Context, inf *informer.SharedIndexInformer, gvr api.GroupVersionResource,
	apiVersion, kind, ns, name, field string, want json.RawMessage, owner controllers.OwnerReference) error {
	rc := op.c.Resource(gvr).Namespace(ns)
	obj := &api.Object{APIVersion: apiVersion, Kind: kind, Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
	cur, exists := inf.GetIndexer().GetByKey(ns + "/" + name)
	if exists {
		if ref, _ := controllers.ControllerOf(cur); ref.UID == owner.UID && website.Covers(cur.Get(field), want) {
			return nil
		}
		obj = cur.DeepCopy()
		obj.APIVersion, obj.Kind = apiVersion, kind
	}
	_ = obj.Set(field, want)
	if err := controllers.SetOwnerReferences(obj, []controllers.OwnerReference{owner}); err != nil {
		return err
	}
	var err error
	if exists {
		_, err = rc.Update(ctx, obj) // a 409 is retried, from a fresher cache
	} else if _, err = rc.Create(ctx, obj); client.IsAlreadyExists(err) {
		err = nil // the cache had not seen it yet
	}
	if err == nil {
		fmt.Printf("reconcile %s/%s: wrote %s %s\n", ns, owner.Name, kind, name)
	}
	return err
}

// updateStatus writes the Ready condition: True once the Deployment has
// as many ready replicas as the Website asks for.
func (op *operator) updateStatus(ctx context.Context, site *api.Object, replicas int) error {
	var prev website.Status
	_ = json.Unmarshal(site.Get("status"), &prev)
	ready := 0
	if dep, ok := op.deps.GetIndexer().GetByKey(site.Key()); ok {
		var ds struct {
			ReadyReplicas int `json:"readyReplicas"`
		}
		_ = json.Unmarshal(dep.Get("status"), &ds)
		ready = ds.ReadyReplicas
	}
	cond := website.Condition{Type: "Ready", Status: "False", Reason: "Progressing",
		Message: fmt.Sprintf("%d of %d replicas ready", ready, replicas)}
	if ready == replicas {
		cond.Status, cond.Reason = "True", "AllReplicasReady"
	}
	next := website.Status{ObservedGeneration: site.Metadata.Generation, ReadyReplicas: ready, Ready: cond.Status,
		Conditions: []website.Condition{cond}}
	// The time moves only when the condition's status does.
	next.Conditions[0].LastTransitionTime = time.Now().UTC().Format(time.RFC3339)
	if len(prev.Conditions) > 0 && prev.Conditions[0].Status == cond.Status {
		next.Conditions[0].LastTransitionTime = prev.Conditions[0].LastTransitionTime
	}
	if reflect.DeepEqual(prev, next) {
		return nil
	}
	raw, _ := json.Marshal(next)
	_ = site.Set("status", raw)
	_, err := op.status.Update(ctx, op.c.Resource(website.Websites).Namespace(site.Metadata.Namespace), site)
	if client.IsNotFound(err) {
		return nil
	}
	if err == nil {
		fmt.Printf("reconcile %s: status Ready=%s (%s)\n", site.Key(), cond.Status, cond.Message)
	}
	return err
}

// Command 14-operator is an operator, built in four steps a workshop can
// follow: a CustomResourceDefinition for a kind of our own (Website), an
// informer on it (our informers work on any resource), a reconcile that
// turns each Website into built-in objects (a ConfigMap with its page, a
// Deployment serving it) owned by the Website, and status with a Ready
// condition. It runs our apiserver and controller manager in-process, so
// the Deployment gets Pods, the Pods get Ready, and deleting the Website
// lets the garbage collector remove what it owned.
//
//	go run ./examples/14-operator
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/manager"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
	"listwatch/workqueue"
)

// Step 1: the kind. A CustomResourceDefinition makes the apiserver serve
// websites.workshop.example.com with this schema; the status subresource
// keeps status for the operator.
const websiteCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"websites.workshop.example.com"},
"spec":{"group":"workshop.example.com","scope":"Namespaced",
 "names":{"plural":"websites","singular":"website","kind":"Website","shortNames":["ws"]},
 "versions":[{"name":"v1","served":true,"storage":true,
  "subresources":{"status":{}},
  "additionalPrinterColumns":[{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"},
   {"name":"Ready","type":"string","jsonPath":".status.ready"}],
  "schema":{"openAPIV3Schema":{"type":"object","properties":{
   "spec":{"type":"object","required":["message"],"properties":{
    "message":{"type":"string"},"replicas":{"type":"integer"},"image":{"type":"string"}}},
   "status":{"type":"object","properties":{
    "observedGeneration":{"type":"integer"},"readyReplicas":{"type":"integer"},"ready":{"type":"string"},
    "conditions":{"type":"array","items":{"type":"object","properties":{
     "type":{"type":"string"},"status":{"type":"string"},"reason":{"type":"string"},
     "message":{"type":"string"},"lastTransitionTime":{"type":"string"}}}}}}}}}}]}}`

var (
	crds        = api.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	websites    = api.GroupVersionResource{Group: "workshop.example.com", Version: "v1", Resource: "websites"}
	deployments = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configMaps  = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

const (
	websiteAPIVersion = "workshop.example.com/v1"
	websiteKind       = "Website"
)

func main() {
	trace := flag.Bool("trace", false, "narrate the operator's workqueue and reconciles")
	flag.Parse()
	if err := run(demo.NewPrinter(os.Stdout), demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, _, stop, err := demo.Start(ctx, apiserver.Config{}, client.Config{})
	if err != nil {
		return err
	}
	defer stop()
	c, err := client.New(client.Config{Host: srv.URL()})
	if err != nil {
		return err
	}

	p.Section("step 1: the CustomResourceDefinition")
	crd := &api.Object{}
	if err := crd.UnmarshalJSON([]byte(websiteCRD)); err != nil {
		return err
	}
	if _, err := c.Resource(crds).Create(ctx, crd); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		_, err := c.Resource(websites).Namespace("default").List(ctx, api.ListOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("websites never served: %w", err)
	}
	p.Say("crd", "websites.workshop.example.com created: the apiserver now serves websites")

	// The built-in controllers, so the Deployment gets running Pods; the
	// garbage collector also watches websites, to collect what they own.
	mgrDone := make(chan error, 1)
	go func() {
		mgrDone <- manager.Run(ctx, manager.Config{Client: c, KubeletStartDelay: 50 * time.Millisecond,
			GCKinds: append(manager.DefaultGCKinds, manager.Kind{GVR: websites, Kind: websiteKind, Namespaced: true})})
	}()
	defer func() { cancel(); <-mgrDone }()

	p.Section("step 2: informers on websites (a custom resource) and on what they own")
	op, err := newOperator(c, tr, p)
	if err != nil {
		return err
	}
	opDone := make(chan struct{})
	go func() { op.run(ctx); close(opDone) }()
	defer func() { cancel(); <-opDone }()

	p.Section("step 3: a Website becomes a ConfigMap and a Deployment it owns")
	ws := c.Resource(websites).Namespace("default")
	site := &api.Object{}
	_ = site.UnmarshalJSON([]byte(`{"apiVersion":"workshop.example.com/v1","kind":"Website","metadata":{"name":"hello"},"spec":{"message":"hello, operators","replicas":2,"image":"nginx"}}`))
	if _, err := ws.Create(ctx, site); err != nil {
		return err
	}
	p.Say("create", "website hello: message %q, replicas 2", "hello, operators")

	p.Section("step 4: status: Ready once the Deployment's Pods are")
	if err := waitReady(ctx, ws, "hello", 2, p); err != nil {
		return err
	}

	p.Section("the operator is level-triggered: changes and damage are repaired")
	if _, err := ws.Patch(ctx, "hello", client.PatchTypeMerge, []byte(`{"spec":{"replicas":1,"message":"hello again"}}`)); err != nil {
		return err
	}
	p.Say("change", "website hello: replicas 1, message %q", "hello again")
	if err := waitFor(ctx, func() (bool, error) {
		cm, err := c.Resource(configMaps).Namespace("default").Get(ctx, "hello-content")
		return err == nil && demo.Data(cm, "index.html") == "hello again", nil
	}); err != nil {
		return err
	}
	if err := waitReady(ctx, ws, "hello", 1, p); err != nil {
		return err
	}
	if err := c.Resource(configMaps).Namespace("default").Delete(ctx, "hello-content", client.DeleteOptions{}); err != nil {
		return err
	}
	p.Say("damage", "configmap hello-content deleted by hand")
	if err := waitFor(ctx, func() (bool, error) {
		cm, err := c.Resource(configMaps).Namespace("default").Get(ctx, "hello-content")
		return err == nil && demo.Data(cm, "index.html") == "hello again", nil
	}); err != nil {
		return err
	}
	p.Say("repaired", "configmap hello-content is back")

	p.Section("deleting the Website: the garbage collector removes what it owned")
	if err := ws.Delete(ctx, "hello", client.DeleteOptions{PropagationPolicy: "Background"}); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		_, e1 := c.Resource(configMaps).Namespace("default").Get(ctx, "hello-content")
		_, e2 := c.Resource(deployments).Namespace("default").Get(ctx, "hello")
		pods, e3 := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace("default").List(ctx, api.ListOptions{})
		return client.IsNotFound(e1) && client.IsNotFound(e2) && e3 == nil && len(pods.Items) == 0, nil
	}); err != nil {
		return fmt.Errorf("the website's objects were not collected: %w", err)
	}
	p.Say("result", "website hello deleted: its configmap, deployment and pods are gone")
	return nil
}

// waitReady waits until the Website reports Ready with replicas ready.
func waitReady(ctx context.Context, ws *client.ResourceClient, name string, replicas int, p *demo.Printer) error {
	var st websiteStatus
	err := waitFor(ctx, func() (bool, error) {
		o, err := ws.Get(ctx, name)
		if err != nil {
			return false, nil
		}
		st = websiteStatus{}
		_ = json.Unmarshal(o.Get("status"), &st)
		return st.Ready == "True" && st.ReadyReplicas == replicas && st.ObservedGeneration == o.Metadata.Generation, nil
	})
	if err != nil {
		return fmt.Errorf("website %s never became ready with %d replicas (last status %+v): %w", name, replicas, st, err)
	}
	c := st.Conditions[0]
	p.Say("status", "website %s: condition %s=%s (%s: %s), readyReplicas %d", name, c.Type, c.Status, c.Reason, c.Message, st.ReadyReplicas)
	return nil
}

// waitFor polls cond until it holds, bounded: an example must not hang.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("timed out")
}

// ---- the operator ----

type websiteSpec struct {
	Message  string `json:"message"`
	Replicas *int   `json:"replicas"`
	Image    string `json:"image"`
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

type websiteStatus struct {
	ObservedGeneration int64       `json:"observedGeneration"`
	ReadyReplicas      int         `json:"readyReplicas"`
	Ready              string      `json:"ready"`
	Conditions         []condition `json:"conditions"`
}

type operator struct {
	c                *client.Client
	p                *demo.Printer
	tr               *narrate.Tracer
	factory          *informer.Factory
	sites, deps, cms *informer.SharedIndexInformer
	queue            *workqueue.RateLimitingQueue[string]
	status           controllers.StatusWriter
}

// newOperator wires step 2: one informer per resource (websites is just
// another resource to our informers), and handlers that only queue the
// key of the Website concerned.
func newOperator(c *client.Client, tr *narrate.Tracer, p *demo.Printer) (*operator, error) {
	op := &operator{c: c, p: p, tr: tr, queue: workqueue.NewRateLimiting[string](workqueue.Config{Name: "websites", Tracer: tr}, nil)}
	op.factory = informer.NewFactory(func(gvr api.GroupVersionResource, ns string) reflector.ListerWatcher {
		return c.Resource(gvr).Namespace(ns)
	}, 0, informer.Options{})
	var err error
	for _, x := range []struct {
		gvr api.GroupVersionResource
		dst **informer.SharedIndexInformer
	}{{websites, &op.sites}, {deployments, &op.deps}, {configMaps, &op.cms}} {
		if *x.dst, err = op.factory.InformerFor(x.gvr, "default"); err != nil {
			op.queue.ShutDown()
			return nil, err
		}
	}
	if _, err := op.sites.AddEventHandler(controllers.EnqueueHandler(op.queue)); err != nil {
		op.queue.ShutDown()
		return nil, err
	}
	owned := func(obj *api.Object) {
		if key, ok := controllers.OwnerKey(obj, websiteAPIVersion, websiteKind); ok {
			op.queue.Add(key)
		}
	}
	for _, inf := range []*informer.SharedIndexInformer{op.deps, op.cms} {
		if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
			AddFunc:    func(o *api.Object, _ bool) { owned(o) },
			UpdateFunc: func(_, o *api.Object) { owned(o) },
			DeleteFunc: func(o any) {
				if obj := informer.ObjectOf(o); obj != nil {
					owned(obj)
				}
			},
		}); err != nil {
			op.queue.ShutDown()
			return nil, err
		}
	}
	p.Say("informers", "websites, deployments and configmaps in default; events queue the owning website's key")
	return op, nil
}

func (op *operator) run(ctx context.Context) {
	op.factory.Start(ctx)
	defer op.factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, op.sites, op.deps, op.cms) {
		op.queue.ShutDown()
		return
	}
	controllers.RunWorkers(ctx, "websites", op.queue, 2, op.reconcile, op.tr)
}

// reconcile is step 3 and step 4: make the children match the Website,
// then say how it went in the Website's status. Everything is read from
// the caches; nothing is taken from the event that queued the key.
func (op *operator) reconcile(ctx context.Context, key string) error {
	site, ok := op.sites.GetIndexer().GetByKey(key)
	if !ok {
		return nil // deleted: the garbage collector removes its children
	}
	site = site.DeepCopy()
	site.APIVersion, site.Kind = websiteAPIVersion, websiteKind
	var spec websiteSpec
	if err := json.Unmarshal(site.Get("spec"), &spec); err != nil {
		return nil // the schema makes this impossible; retrying would not help
	}
	replicas := 1
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	if spec.Image == "" {
		spec.Image = "nginx"
	}
	ns, name := site.Metadata.Namespace, site.Metadata.Name
	owner := []controllers.OwnerReference{controllers.ControllerRef(site)}

	// The ConfigMap with the page.
	page, _ := json.Marshal(map[string]string{"index.html": spec.Message})
	if err := op.ensure(ctx, op.cms, configMaps, ns, name+"-content", "ConfigMap", "v1", "data", page, owner); err != nil {
		return err
	}
	// The Deployment serving it.
	depSpec, _ := json.Marshal(map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]string{"website": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]string{"website": name}},
			"spec":     map[string]any{"containers": []map[string]any{{"name": "web", "image": spec.Image}}},
		},
	})
	if err := op.ensure(ctx, op.deps, deployments, ns, name, "Deployment", "apps/v1", "spec", depSpec, owner); err != nil {
		return err
	}
	return op.updateStatus(ctx, site, replicas)
}

// ensure creates the named child, or updates its field if it differs.
func (op *operator) ensure(ctx context.Context, inf *informer.SharedIndexInformer, gvr api.GroupVersionResource,
	ns, name, kind, apiVersion, field string, want json.RawMessage, owner []controllers.OwnerReference) error {
	rc := op.c.Resource(gvr).Namespace(ns)
	cur, ok := inf.GetIndexer().GetByKey(ns + "/" + name)
	if !ok {
		obj := &api.Object{APIVersion: apiVersion, Kind: kind, Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
		_ = obj.Set(field, want)
		if err := controllers.SetOwnerReferences(obj, owner); err != nil {
			return err
		}
		if _, err := rc.Create(ctx, obj); err != nil && !client.IsAlreadyExists(err) {
			return err
		}
		op.p.Say("reconcile", "created %s %s", kind, name)
		return nil
	}
	if sameJSON(cur.Get(field), want) {
		return nil
	}
	upd := cur.DeepCopy()
	upd.APIVersion, upd.Kind = apiVersion, kind
	_ = upd.Set(field, want)
	if _, err := rc.Update(ctx, upd); err != nil {
		return err // a 409 is retried with backoff, from a fresher cache
	}
	op.p.Say("reconcile", "updated %s %s", kind, name)
	return nil
}

// updateStatus is step 4: observedGeneration, readyReplicas and a Ready
// condition whose lastTransitionTime moves only when its status does.
func (op *operator) updateStatus(ctx context.Context, site *api.Object, replicas int) error {
	var prev websiteStatus
	_ = json.Unmarshal(site.Get("status"), &prev)
	ready := 0
	if dep, ok := op.deps.GetIndexer().GetByKey(site.Key()); ok {
		var ds struct {
			ReadyReplicas int `json:"readyReplicas"`
		}
		_ = json.Unmarshal(dep.Get("status"), &ds)
		ready = ds.ReadyReplicas
	}
	cond := condition{Type: "Ready", Status: "False", Reason: "Progressing", Message: fmt.Sprintf("%d of %d replicas ready", ready, replicas)}
	if ready == replicas {
		cond.Status, cond.Reason, cond.Message = "True", "AllReplicasReady", fmt.Sprintf("%d of %d replicas ready", ready, replicas)
	}
	cond.LastTransitionTime = time.Now().UTC().Format(time.RFC3339)
	if len(prev.Conditions) > 0 && prev.Conditions[0].Status == cond.Status {
		cond.LastTransitionTime = prev.Conditions[0].LastTransitionTime
	}
	next := websiteStatus{ObservedGeneration: site.Metadata.Generation, ReadyReplicas: ready, Ready: cond.Status, Conditions: []condition{cond}}
	if reflect.DeepEqual(prev, next) {
		return nil
	}
	raw, _ := json.Marshal(next)
	_ = site.Set("status", raw)
	_, err := op.status.Update(ctx, op.c.Resource(websites).Namespace(site.Metadata.Namespace), site)
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

package website

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/reflector"
	"listwatch/workqueue"
)

// CRD is the CustomResourceDefinition that makes an apiserver serve
// websites.workshop.example.com with this schema; the status subresource
// keeps status for the operator.
const CRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
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

// The resources the operator reads and writes.
var (
	CRDs        = api.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	Websites    = api.GroupVersionResource{Group: "workshop.example.com", Version: "v1", Resource: "websites"}
	Deployments = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	ConfigMaps  = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// The owner reference a Website's children carry. (Objects in a list
// carry no apiVersion or kind, so they are not read from the cache.)
const (
	APIVersion = "workshop.example.com/v1"
	Kind       = "Website"
)

// DefaultImage serves the page when a Website names no image.
const DefaultImage = "nginx"

// Spec is a Website's spec.
type Spec struct {
	Message  string `json:"message"`
	Replicas *int   `json:"replicas"`
	Image    string `json:"image"`
}

// Condition is one entry of a Website's status.conditions.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

// Status is a Website's status.
type Status struct {
	ObservedGeneration int64       `json:"observedGeneration"`
	ReadyReplicas      int         `json:"readyReplicas"`
	Ready              string      `json:"ready"`
	Conditions         []Condition `json:"conditions"`
}

// ContentName is the name of the ConfigMap holding Website name's page.
func ContentName(name string) string { return name + "-content" }

// Want returns what the children of a Website with spec should hold: the
// ConfigMap's data and the Deployment's spec, and the replicas asked for.
func Want(name string, spec Spec) (data, depSpec json.RawMessage, replicas int) {
	replicas = 1
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	image := spec.Image
	if image == "" {
		image = DefaultImage
	}
	data, _ = json.Marshal(map[string]string{"index.html": spec.Message})
	depSpec, _ = json.Marshal(map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": map[string]string{"website": name}},
		"template": map[string]any{
			"metadata": map[string]any{"labels": map[string]string{"website": name}},
			"spec":     map[string]any{"containers": []map[string]any{{"name": "web", "image": image}}},
		},
	})
	return data, depSpec, replicas
}

// Options configures an Operator.
type Options struct {
	// Client reads and writes Websites, ConfigMaps and Deployments.
	Client *client.Client
	// Namespace to watch; "" is every namespace.
	Namespace string
	// OnChange, if set, is told of every child created or updated (the
	// example prints it); it must not block.
	OnChange func(action, kind, name string)
	controllers.Settings
}

// Operator reconciles Websites into the ConfigMap and Deployment they own.
type Operator struct {
	opts             Options
	factory          *informer.Factory
	sites, deps, cms *informer.SharedIndexInformer
	queue            *workqueue.RateLimitingQueue[string]
	status           controllers.StatusWriter
}

// New builds an operator with its own informers (websites is just another
// resource to them) and handlers that only queue the key of the Website
// concerned. Run it with Run.
func New(opts Options) (*Operator, error) {
	if opts.Client == nil {
		return nil, errors.New("website: Options needs a Client")
	}
	opts.Settings = opts.Settings.WithDefaults()
	c := opts.Client
	op := &Operator{opts: opts, queue: controllers.NewQueue[string]("websites", opts.Settings)}
	op.factory = informer.NewFactory(func(gvr api.GroupVersionResource, ns string) reflector.ListerWatcher {
		return c.Resource(gvr).Namespace(ns)
	}, 0, informer.Options{Clock: opts.Clock})
	fail := func(err error) (*Operator, error) {
		op.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("website: %w", err)
	}
	var err error
	for _, x := range []struct {
		gvr api.GroupVersionResource
		dst **informer.SharedIndexInformer
	}{{Websites, &op.sites}, {Deployments, &op.deps}, {ConfigMaps, &op.cms}} {
		if *x.dst, err = op.factory.InformerFor(x.gvr, opts.Namespace); err != nil {
			return fail(err)
		}
	}
	if _, err := op.sites.AddEventHandler(controllers.EnqueueHandler(op.queue)); err != nil {
		return fail(err)
	}
	for _, inf := range []*informer.SharedIndexInformer{op.deps, op.cms} {
		if _, err := inf.AddEventHandler(controllers.EnqueueOwnerHandler(op.queue, APIVersion, Kind)); err != nil {
			return fail(err)
		}
	}
	return op, nil
}

// Run starts the informers and reconciles until ctx ends; it returns once
// the workers and informers have stopped.
func (op *Operator) Run(ctx context.Context) {
	op.factory.Start(ctx)
	defer op.factory.Shutdown()
	if !informer.WaitForCacheSync(ctx, op.sites, op.deps, op.cms) {
		op.queue.ShutDown()
		return
	}
	controllers.RunWorkers(ctx, "websites", op.queue, op.opts.Workers, op.reconcile, op.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (op *Operator) Queue() workqueue.Metrics { return op.queue.Metrics() }

// reconcile makes the children match the Website, then says how it went in
// the Website's status. Everything is read from the caches; nothing is
// taken from the event that queued the key.
func (op *Operator) reconcile(ctx context.Context, key string) error {
	site, ok := op.sites.GetIndexer().GetByKey(key)
	if !ok {
		return nil // deleted: the garbage collector removes its children
	}
	site = site.DeepCopy()
	site.APIVersion, site.Kind = APIVersion, Kind
	var spec Spec
	if err := json.Unmarshal(site.Get("spec"), &spec); err != nil {
		return nil // the schema makes this impossible; retrying would not help
	}
	ns, name := site.Metadata.Namespace, site.Metadata.Name
	owner := controllers.ControllerRef(site)
	data, depSpec, replicas := Want(name, spec)
	if err := op.ensure(ctx, op.cms, ConfigMaps, ns, ContentName(name), "ConfigMap", "v1", "data", data, owner); err != nil {
		return err
	}
	if err := op.ensure(ctx, op.deps, Deployments, ns, name, "Deployment", "apps/v1", "spec", depSpec, owner); err != nil {
		return err
	}
	return op.updateStatus(ctx, site, replicas)
}

// ensure creates the named child, or updates it if its field differs or
// it is controlled by another owner (a Website of the same name deleted
// and created again, whose old children the collector has not yet
// removed).
func (op *Operator) ensure(ctx context.Context, inf *informer.SharedIndexInformer, gvr api.GroupVersionResource,
	ns, name, kind, apiVersion, field string, want json.RawMessage, owner controllers.OwnerReference) error {
	rc := op.opts.Client.Resource(gvr).Namespace(ns)
	cur, ok := inf.GetIndexer().GetByKey(ns + "/" + name)
	if !ok {
		obj := &api.Object{APIVersion: apiVersion, Kind: kind, Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
		_ = obj.Set(field, want)
		if err := controllers.SetOwnerReferences(obj, []controllers.OwnerReference{owner}); err != nil {
			return err
		}
		if _, err := rc.Create(ctx, obj); err != nil {
			if client.IsAlreadyExists(err) {
				// The server has a child of this name and the cache does
				// not, yet. Often it is the child of an earlier Website of
				// the same name, about to be collected. It is a failure,
				// retried with backoff until the cache shows what to
				// update (or the child is gone and can be created): if
				// the cache never sees it (a re-list after it was deleted
				// shows nothing), no event would ever queue this Website
				// again. Kubernetes' Deployment controller does the same
				// when a ReplicaSet it creates already exists and its
				// lister does not have it (getNewReplicaSet in
				// pkg/controller/deployment/sync.go returns the lister's
				// error).
				op.opts.Tracer.Printf(narrate.Controller, "websites: %s %s/%s already exists but is not in the cache: retrying", kind, ns, name)
			}
			return fmt.Errorf("website: creating %s %s/%s: %w", kind, ns, name, err)
		}
		op.opts.Tracer.Printf(narrate.Controller, "websites: %s %s/%s created", kind, ns, name)
		op.changed("created", kind, name)
		return nil
	}
	ref, _ := controllers.ControllerOf(cur)
	if Covers(cur.Get(field), want) && ref.UID == owner.UID {
		return nil
	}
	upd := cur.DeepCopy()
	upd.APIVersion, upd.Kind = apiVersion, kind
	_ = upd.Set(field, want)
	if err := controllers.SetOwnerReferences(upd, []controllers.OwnerReference{owner}); err != nil {
		return err
	}
	if _, err := rc.Update(ctx, upd); err != nil {
		return err // a 409 is retried with backoff, from a fresher cache
	}
	op.changed("updated", kind, name)
	return nil
}

func (op *Operator) changed(action, kind, name string) {
	if op.opts.OnChange != nil {
		op.opts.OnChange(action, kind, name)
	}
}

// updateStatus writes observedGeneration, readyReplicas and a Ready
// condition whose lastTransitionTime moves only when its status does.
func (op *Operator) updateStatus(ctx context.Context, site *api.Object, replicas int) error {
	var prev Status
	_ = json.Unmarshal(site.Get("status"), &prev)
	ready := 0
	if dep, ok := op.deps.GetIndexer().GetByKey(site.Key()); ok {
		var ds struct {
			ReadyReplicas int `json:"readyReplicas"`
		}
		_ = json.Unmarshal(dep.Get("status"), &ds)
		ready = ds.ReadyReplicas
	}
	cond := Condition{Type: "Ready", Status: "False", Reason: "Progressing", Message: fmt.Sprintf("%d of %d replicas ready", ready, replicas)}
	if ready == replicas {
		cond.Status, cond.Reason = "True", "AllReplicasReady"
	}
	cond.LastTransitionTime = op.opts.Clock.Now().UTC().Format(time.RFC3339)
	if len(prev.Conditions) > 0 && prev.Conditions[0].Status == cond.Status {
		cond.LastTransitionTime = prev.Conditions[0].LastTransitionTime
	}
	next := Status{ObservedGeneration: site.Metadata.Generation, ReadyReplicas: ready, Ready: cond.Status, Conditions: []Condition{cond}}
	if reflect.DeepEqual(prev, next) {
		return nil
	}
	raw, _ := json.Marshal(next)
	_ = site.Set("status", raw)
	_, err := op.status.Update(ctx, op.opts.Client.Resource(Websites).Namespace(site.Metadata.Namespace), site)
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

// Covers reports whether have holds every field of want with want's
// value: objects key by key (have may hold more keys), arrays element by
// element (same length), anything else equal. The apiserver fills in what
// a writer left out (a Deployment's strategy, revisionHistoryLimit and
// progressDeadlineSeconds, from k8s.io/kubernetes
// pkg/apis/apps/v1/defaults.go SetDefaults_Deployment), so a child read
// back never equals what the operator wrote; compared whole, it would be
// rewritten at every reconcile. Kubernetes' own controllers likewise
// compare only what they set (the Deployment controller a ReplicaSet's
// pod template, ignoring its hash label: EqualIgnoreHash in
// pkg/controller/deployment/util/deployment_util.go).
func Covers(have, want json.RawMessage) bool {
	var h, w any
	if json.Unmarshal(have, &h) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return covers(h, w)
}

func covers(have, want any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !covers(hv, wv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !covers(h[i], w[i]) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(have, want)
	}
}

// SameJSON reports whether a and b hold the same JSON value, whatever
// their key order or spacing: what the apiserver returns is compared with
// what the operator would write.
func SameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

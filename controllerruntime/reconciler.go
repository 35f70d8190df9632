package controllerruntime

import (
	"context"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"listwatch/controllers/website"
)

// Finalizer holds a Website back from deletion until the reconciler has
// finalized it.
const Finalizer = "workshop.example.com/cleanup"

// FieldManager is the reconciler's name in managedFields for what it
// applies.
const FieldManager = "website-operator"

// Reconciler turns a Website into the ConfigMap "<name>-content" holding
// its page and the Deployment "<name>" serving it, both controlled by the
// Website (owner references), keeps a finalizer on it, and reports readyReplicas and a Ready
// condition in its status. It is the reconciler `kubebuilder create api`
// scaffolds, filled in: everything is read through the manager's cache,
// children are written with controllerutil.CreateOrUpdate, and deleting a
// Website is left to the garbage collector, which follows the owner
// references.
type Reconciler struct {
	Client client.Client
	Scheme *runtime.Scheme
	// Recorder records an Event on the Website when a child is created
	// and when the Website is finalized (events.k8s.io/v1, through the
	// manager's GetEventRecorder).
	Recorder recorder.EventRecorder

	reconciles atomic.Int64
}

// Reconciles is how many times Reconcile ran: the test tells the
// leader's reconciler from the one waiting for the Lease by it.
func (r *Reconciler) Reconciles() int64 { return r.reconciles.Load() }

// SetupWithManager registers the controller: Websites queue themselves,
// and a ConfigMap's or Deployment's events queue the Website controlling
// it (Owns maps an object to its controller owner reference). ConfigMaps
// are watched for their metadata only (PartialObjectMetadata): the
// reconciler never reads them, it applies them.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&Website{}).
		Owns(&corev1.ConfigMap{}, builder.OnlyMetadata).
		Owns(&appsv1.Deployment{}).
		Complete(r)
}

// Reconcile makes the Website's children match its spec, then writes its
// status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.reconciles.Add(1)
	site := &Website{}
	if err := r.Client.Get(ctx, req.NamespacedName, site); err != nil {
		// Gone: the garbage collector removes what it owned.
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !site.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, site)
	}
	if controllerutil.AddFinalizer(site, Finalizer) {
		if err := r.Client.Update(ctx, site); err != nil {
			return ctrl.Result{}, fmt.Errorf("website %s/%s: adding the finalizer: %w", site.Namespace, site.Name, err)
		}
	}
	if err := r.ensureContent(ctx, site); err != nil {
		return ctrl.Result{}, err
	}
	dep, err := r.ensureDeployment(ctx, site)
	if err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.updateStatus(ctx, site, dep)
}

// ensureContent applies the ConfigMap holding the page with server-side
// apply: the reconciler sends only the fields it owns (data and its
// controller reference) as field manager FieldManager, and the apiserver
// merges them, so nothing needs reading first. Its events reach the
// controller through a metadata-only watch (SetupWithManager), which is
// all Owns needs to find the owner.
func (r *Reconciler) ensureContent(ctx context.Context, site *Website) error {
	name := website.ContentName(site.Name)
	cm := corev1ac.ConfigMap(name, site.Namespace).
		WithData(map[string]string{"index.html": site.Spec.Message}).
		WithOwnerReferences(metav1ac.OwnerReference().
			WithAPIVersion(GroupVersion.String()).WithKind("Website").
			WithName(site.Name).WithUID(site.UID).
			WithController(true).WithBlockOwnerDeletion(true))
	if err := r.Client.Apply(ctx, cm, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("website %s/%s: applying ConfigMap %s: %w", site.Namespace, site.Name, name, err)
	}
	return nil
}

// ensureDeployment creates or updates the Deployment serving the page. The
// mutate function sets only the fields the reconciler owns and leaves the
// apiserver's defaults alone: replacing the whole pod template would undo
// the defaults at every pass and write the Deployment again, forever.
func (r *Reconciler) ensureDeployment(ctx context.Context, site *Website) (*appsv1.Deployment, error) {
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: site.Namespace, Name: site.Name}}
	replicas, image := wanted(site.Spec)
	op, err := controllerutil.CreateOrUpdate(ctx, r.Client, dep, func() error {
		labels := map[string]string{"website": site.Name}
		dep.Spec.Replicas = &replicas
		if dep.CreationTimestamp.IsZero() { // a selector is immutable
			dep.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
		}
		if dep.Spec.Template.Labels == nil {
			dep.Spec.Template.Labels = map[string]string{}
		}
		dep.Spec.Template.Labels["website"] = site.Name
		setContainer(&dep.Spec.Template.Spec, corev1.Container{Name: "web", Image: image})
		return controllerutil.SetControllerReference(site, dep, r.Scheme)
	})
	if err != nil {
		return nil, fmt.Errorf("website %s/%s: Deployment: %w", site.Namespace, site.Name, err)
	}
	r.created(site, op, "Deployment", dep.Name)
	return dep, nil
}

// finalize does what must happen before a Website goes, then removes the
// finalizer so the apiserver can delete it. Here it only records an
// Event; a real operator would clean up what owner references cannot
// reach (a DNS record, a bucket outside the cluster). The children are
// the garbage collector's, once the Website is gone.
//
// The Event is recorded once the apiserver has accepted the finalizer's
// removal, not before. The manager's cache is eventually consistent: a
// child's event (the garbage collector deleting the ConfigMap) can queue
// the Website again before the cache has seen it go, and that Reconcile
// reads the Website as it was, finalizer and all, and finalizes it
// again. Its Update then fails (the object is gone: 404; changed: 409),
// so only the one removal the apiserver accepted is reported. Recorded
// before the Update, the repeat would reach the apiserver as a second
// occurrence: client-go's events broadcaster (v0.37.2,
// tools/events/event_broadcaster.go recordToSink) folds an Event equal
// to one it recorded, regarding the same resourceVersion, into a series
// and PATCHes series.count to 2.
func (r *Reconciler) finalize(ctx context.Context, site *Website) error {
	if !controllerutil.ContainsFinalizer(site, Finalizer) {
		return nil
	}
	controllerutil.RemoveFinalizer(site, Finalizer)
	if err := r.Client.Update(ctx, site); err != nil {
		if apierrors.IsNotFound(err) {
			return nil // finalized already; this read was stale
		}
		return fmt.Errorf("website %s/%s: removing the finalizer: %w", site.Namespace, site.Name, err)
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(site, nil, corev1.EventTypeNormal, "CleanedUp", "Finalize", "cleaned up before deletion")
	}
	return nil
}

// wanted is the replicas (1 unless set) and image (website.DefaultImage
// unless set) a spec asks for.
func wanted(spec WebsiteSpec) (int32, string) {
	replicas, image := int32(1), website.DefaultImage
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	if spec.Image != "" {
		image = spec.Image
	}
	return replicas, image
}

// setContainer sets the image of the container named c.Name, adding c if
// there is none, and leaves the other fields as the server defaulted them.
func setContainer(pod *corev1.PodSpec, c corev1.Container) {
	for i := range pod.Containers {
		if pod.Containers[i].Name == c.Name {
			pod.Containers[i].Image = c.Image
			return
		}
	}
	pod.Containers = append(pod.Containers, c)
}

// created records an Event on the Website when a child was created.
func (r *Reconciler) created(site *Website, op controllerutil.OperationResult, kind, name string) {
	if op != controllerutil.OperationResultCreated || r.Recorder == nil {
		return
	}
	r.Recorder.Eventf(site, nil, corev1.EventTypeNormal, "Created", "Create", "created %s %s", kind, name)
}

// updateStatus writes observedGeneration, readyReplicas and the Ready
// condition through the status subresource, only when they changed
// (meta.SetStatusCondition moves lastTransitionTime only when the
// condition's status changes).
func (r *Reconciler) updateStatus(ctx context.Context, site *Website, dep *appsv1.Deployment) error {
	replicas, _ := wanted(site.Spec)
	ready := dep.Status.ReadyReplicas
	next := site.Status
	next.Conditions = append([]metav1.Condition(nil), site.Status.Conditions...)
	next.ObservedGeneration = site.Generation
	next.ReadyReplicas = ready
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
		Message: fmt.Sprintf("%d of %d replicas ready", ready, replicas)}
	if ready == replicas {
		cond.Status, cond.Reason = metav1.ConditionTrue, "AllReplicasReady"
	}
	next.Ready = string(cond.Status)
	apimeta.SetStatusCondition(&next.Conditions, cond)
	if equality.Semantic.DeepEqual(site.Status, next) {
		return nil
	}
	site.Status = next
	err := r.Client.Status().Update(ctx, site)
	if err != nil && !apierrors.IsNotFound(err) {
		// A 409 (the Website changed since the cache saw it) is retried
		// with backoff, from a fresher cache.
		return fmt.Errorf("website %s/%s: status: %w", site.Namespace, site.Name, err)
	}
	return nil
}

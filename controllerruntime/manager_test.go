package controllerruntime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"listwatch/controllerruntime"
)

// ns is the namespace the test's Websites, their children and the Lease
// live in.
const ns = "operator"

// TestOperatorOnOurServer runs a kubebuilder-style operator, unmodified
// controller-runtime, against our apiserver: envtest installs its CRD,
// two managers elect a leader through a Lease, the leader's reconciler
// puts a finalizer on the Website, applies and updates its children from
// its cache and writes its status, the other takes over when the leader
// stops, and deleting the Website waits for the new leader to finalize it
// before the garbage collector deletes the children.
func TestOperatorOnOurServer(t *testing.T) {
	srv := startServer(t)
	cfg := restConfig(srv)

	// envtest, as a kubebuilder project's suite_test.go runs it, pointed at
	// our server instead of starting etcd and kube-apiserver: it waits for
	// the default namespace, installs the CRD and waits until discovery
	// serves it; Stop deletes the CRD. The wait for discovery is envtest's
	// own poll, bounded by default at 10 s (defaultMaxWait in
	// controller-runtime v0.25.2 pkg/envtest/crd.go), which -race on two
	// busy cores has exceeded; here it is the test's hang guard.
	crd, err := controllerruntime.CRD()
	require.NoError(t, err)
	env := &envtest.Environment{
		Config:             cfg,
		UseExistingCluster: ptr.To(true),
		CRDs:               []*apiextensionsv1.CustomResourceDefinition{crd},
		CRDInstallOptions:  envtest.CRDInstallOptions{CleanUpAfterUse: true, MaxTime: safetyTimeout},
	}
	startEnvtest(t, env)
	t.Cleanup(func() { assert.NoError(t, env.Stop(), "envtest.Environment.Stop") })

	scheme, err := controllerruntime.NewScheme()
	require.NoError(t, err)
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	runOurControllers(t, srv)

	logs := newTestLog(t)
	a := startOperator(t, cfg, scheme, "operator-a", logs)
	a.waitElected(t)
	b := startOperator(t, cfg, scheme, "operator-b", logs)

	site := &controllerruntime.Website{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "hello"},
		Spec:       controllerruntime.WebsiteSpec{Message: "hello", Replicas: ptr.To[int32](2)},
	}
	require.NoError(t, c.Create(ctx, site))
	site = checkReconciled(t, c, site.Name, "hello", 2)
	// The finalizer is metadata: adding it left the generation at 1, as
	// kube-apiserver's custom resource strategy does (PrepareForUpdate
	// counts only changes outside metadata and status).
	assert.Equal(t, int64(1), site.Generation, "generation")
	assert.Equal(t, []string{controllerruntime.Finalizer}, site.Finalizers, "finalizers")
	checkEvents(t, c, site, "Created", "operator-a", 1) // the Deployment
	checkLease(t, c)
	// b waits for the Lease: it has reconciled nothing, and cannot have
	// been elected while a renews the Lease (a losing it would have
	// stopped a's manager with "leader election lost").
	assert.False(t, b.elected(), "operator-b elected while operator-a leads")
	assert.Zero(t, b.rec.Reconciles(), "operator-b reconciled while operator-a leads")

	// a stops and gives the Lease up (LeaderElectionReleaseOnCancel); b
	// takes over and reconciles the next change.
	a.shutdown(t)
	aCount := a.rec.Reconciles()
	b.waitElected(t)
	patch := client.MergeFrom(site.DeepCopy())
	site.Spec.Message, site.Spec.Replicas = "hello again", ptr.To[int32](1)
	require.NoError(t, c.Patch(ctx, site, patch))
	site = checkReconciled(t, c, site.Name, "hello again", 1)
	assert.Equal(t, int64(2), site.Generation, "generation after a spec change")
	assert.Equal(t, aCount, a.rec.Reconciles(), "operator-a reconciled after it stopped")
	assert.NotZero(t, b.rec.Reconciles(), "operator-b never reconciled")

	// Deleting the Website: the apiserver only marks it (its finalizer),
	// the leader finalizes it and removes the finalizer, the apiserver
	// deletes it, and our garbage collector follows the owner references
	// to the ConfigMap and the Deployment (and the Deployment's
	// ReplicaSets and Pods after it).
	require.NoError(t, c.Delete(ctx, site))
	waitFor(t, c, &controllerruntime.WebsiteList{}, ns, "hello", func(w *controllerruntime.Website) bool { return w == nil })
	checkEvents(t, c, site, "CleanedUp", "operator-b", 1)
	waitFor(t, c, &corev1.ConfigMapList{}, ns, "hello-content", func(cm *corev1.ConfigMap) bool { return cm == nil })
	waitFor(t, c, &appsv1.DeploymentList{}, ns, "hello", func(d *appsv1.Deployment) bool { return d == nil })
	waitForAll(t, c, &corev1.PodList{}, ns, fields.Everything(), func(pods []*corev1.Pod) bool { return len(pods) == 0 })
}

// checkReconciled waits until the Website's children match its spec and
// its status says so, and checks they are controlled by it; it returns
// the Website as last seen.
func checkReconciled(t *testing.T, c client.WithWatch, name, message string, replicas int32) *controllerruntime.Website {
	t.Helper()
	site := waitFor(t, c, &controllerruntime.WebsiteList{}, ns, name, func(w *controllerruntime.Website) bool {
		return w != nil && w.Spec.Message == message && w.Status.ObservedGeneration == w.Generation &&
			w.Status.Ready == "True" && w.Status.ReadyReplicas == replicas
	})
	cond := apimeta.FindStatusCondition(site.Status.Conditions, "Ready")
	require.NotNil(t, cond, "the Ready condition")
	assert.Equal(t, metav1.ConditionTrue, cond.Status)
	assert.Equal(t, "AllReplicasReady", cond.Reason)
	assert.False(t, cond.LastTransitionTime.IsZero(), "lastTransitionTime")

	cm := waitFor(t, c, &corev1.ConfigMapList{}, ns, name+"-content", func(cm *corev1.ConfigMap) bool {
		return cm != nil && cm.Data["index.html"] == message
	})
	checkControlledBy(t, cm, site)
	checkApplied(t, cm)
	dep := waitFor(t, c, &appsv1.DeploymentList{}, ns, name, func(d *appsv1.Deployment) bool {
		return d != nil && d.Spec.Replicas != nil && *d.Spec.Replicas == replicas
	})
	checkControlledBy(t, dep, site)
	return site
}

// checkControlledBy checks that obj has exactly one owner reference, the
// controller reference controllerutil.SetControllerReference writes.
func checkControlledBy(t *testing.T, obj metav1.Object, site *controllerruntime.Website) {
	t.Helper()
	assert.Equal(t, []metav1.OwnerReference{{
		APIVersion: "workshop.example.com/v1", Kind: "Website", Name: site.Name, UID: site.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}, obj.GetOwnerReferences(), "%s's owner references", obj.GetName())
}

// checkApplied checks that the ConfigMap's fields are the reconciler's,
// by server-side apply: one managedFields entry, its manager's, with
// operation Apply and the fields it sent.
func checkApplied(t *testing.T, cm *corev1.ConfigMap) {
	t.Helper()
	require.Len(t, cm.ManagedFields, 1, "managedFields")
	mf := cm.ManagedFields[0]
	assert.Equal(t, controllerruntime.FieldManager, mf.Manager)
	assert.Equal(t, metav1.ManagedFieldsOperationApply, mf.Operation)
	require.NotNil(t, mf.FieldsV1)
	for _, f := range []string{`"f:data"`, `"f:index.html"`, `"f:ownerReferences"`} {
		assert.Contains(t, mf.FieldsV1.GetRawString(), f, "the fields applied")
	}
}

// checkEvents waits until the leader's Events about the Website with
// reason add up to want occurrences, then checks they are exactly want.
// client-go's events broadcaster (v0.37.2,
// tools/events/event_broadcaster.go) folds a repeat into one Event with a
// series (one key per regarding object, resourceVersion included, action,
// reason and reporter: getKey), so occurrences are counted, not Events.
// The count is the apiserver's, which lags the recorder's: the second
// occurrence is PATCHed at once, later ones only when the series is
// refreshed or finished (minutes on), so a repeat shows up as too many,
// not as a wait that never ends. The reconciler records each Event after
// the write it reports was accepted (a child created, the finalizer
// removed), which the apiserver accepts once; a stale cache repeating the
// work fails that write and records nothing.
func checkEvents(t *testing.T, c client.WithWatch, site *controllerruntime.Website, reason, leader string, want int32) {
	t.Helper()
	seen := int32(0)
	waitForAll(t, c, &eventsv1.EventList{}, site.Namespace, fields.Everything(), func(evs []*eventsv1.Event) bool {
		seen = 0
		for _, e := range evs {
			if e.Reason == reason && e.Regarding.Kind == "Website" && e.Regarding.Name == site.Name &&
				e.Regarding.UID == site.UID && e.ReportingController == leader {
				seen++
				if e.Series != nil {
					seen += e.Series.Count - 1
				}
			}
		}
		return seen >= want
	})
	assert.Equal(t, want, seen, "occurrences of %s recorded by %s", reason, leader)
}

// checkLease checks the Lease the managers elect with: held, and renewed
// by client-go's leader election as kube-controller-manager's is.
func checkLease(t *testing.T, c client.WithWatch) {
	t.Helper()
	lease := &coordinationv1.Lease{}
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: leaseName}, lease))
	assert.NotEmpty(t, ptr.Deref(lease.Spec.HolderIdentity, ""), "holderIdentity")
	assert.NotNil(t, lease.Spec.RenewTime, "renewTime")
	assert.Equal(t, int32(15), ptr.Deref(lease.Spec.LeaseDurationSeconds, 0), "leaseDurationSeconds (controller-runtime's default)")
}

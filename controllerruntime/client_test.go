package controllerruntime_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"listwatch/controllerruntime"
)

// TestClientOnOurServer uses controller-runtime's client the ways
// operators do besides reconciling: an optimistic-lock merge patch, a
// status patch, an unstructured read, a metadata-only read, paging, and
// DeleteAllOf. Each answer is the one kube-apiserver gives. (Not
// client.DryRunAll: our apiserver refuses ?dryRun with 400, as its
// doc.go says, where kube-apiserver validates and stores nothing.)
func TestClientOnOurServer(t *testing.T) {
	srv := startServer(t)
	cfg := restConfig(srv)
	crd, err := controllerruntime.CRD()
	require.NoError(t, err)
	env := &envtest.Environment{Config: cfg, UseExistingCluster: ptr.To(true),
		CRDs:              []*apiextensionsv1.CustomResourceDefinition{crd},
		CRDInstallOptions: envtest.CRDInstallOptions{MaxTime: safetyTimeout}} // as in TestOperatorOnOurServer
	startEnvtest(t, env)
	t.Cleanup(func() { assert.NoError(t, env.Stop()) })
	scheme, err := controllerruntime.NewScheme()
	require.NoError(t, err)
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	const ns = "default"

	site := &controllerruntime.Website{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "page"},
		Spec: controllerruntime.WebsiteSpec{Message: "one"}}
	require.NoError(t, c.Create(ctx, site))

	// A merge patch carrying the resourceVersion it was computed from is
	// refused once someone else has written (409 Conflict).
	stale := site.DeepCopy()
	lock := client.MergeFromWithOptions(stale.DeepCopy(), client.MergeFromWithOptimisticLock{})
	site.Spec.Message = "two"
	require.NoError(t, c.Update(ctx, site))
	stale.Spec.Message = "three"
	err = c.Patch(ctx, stale, lock)
	assert.True(t, apierrors.IsConflict(err), "a stale optimistic-lock patch: %v", err)

	// A status patch changes the status only, and not the generation.
	before := site.DeepCopy()
	site.Status.Ready = "True"
	require.NoError(t, c.Status().Patch(ctx, site, client.MergeFrom(before)))
	got := &controllerruntime.Website{}
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(site), got))
	assert.Equal(t, "True", got.Status.Ready)
	assert.Equal(t, "two", got.Spec.Message)
	assert.Equal(t, site.Generation, got.Generation, "a status patch moved the generation")

	// The same object read as unstructured, and as metadata only.
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("workshop.example.com/v1")
	u.SetKind("Website")
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(site), u))
	msg, _, _ := unstructured.NestedString(u.Object, "spec", "message")
	assert.Equal(t, "two", msg)
	pom := &metav1.PartialObjectMetadata{}
	pom.SetGroupVersionKind(controllerruntime.GroupVersion.WithKind("Website"))
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(site), pom))
	assert.Equal(t, site.UID, pom.UID)

	checkPagingAndDeleteAllOf(ctx, t, c, ns)
}

// checkPagingAndDeleteAllOf pages through labelled ConfigMaps two at a
// time, then deletes them with one DeleteAllOf (a deletecollection).
func checkPagingAndDeleteAllOf(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	labels := client.MatchingLabels{"batch": "b"}
	for i := range 5 {
		require.NoError(t, c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprintf("cm-%d", i), Labels: labels}}))
	}
	var names []string
	opts := []client.ListOption{client.InNamespace(ns), labels, client.Limit(2)}
	for pages := 0; ; pages++ {
		require.Less(t, pages, 5, "more pages than objects")
		l := &corev1.ConfigMapList{}
		require.NoError(t, c.List(ctx, l, opts...))
		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}
		if l.Continue == "" {
			break
		}
		opts = []client.ListOption{client.InNamespace(ns), labels, client.Limit(2), client.Continue(l.Continue)}
	}
	assert.Equal(t, []string{"cm-0", "cm-1", "cm-2", "cm-3", "cm-4"}, names)

	require.NoError(t, c.DeleteAllOf(ctx, &corev1.ConfigMap{}, client.InNamespace(ns), labels))
	l := &corev1.ConfigMapList{}
	require.NoError(t, c.List(ctx, l, client.InNamespace(ns), labels))
	assert.Empty(t, l.Items, "DeleteAllOf left ConfigMaps")
}

package interop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"listwatch/internal/leakcheck"
)

// TestTypedConfigMapCRUD drives the typed ConfigMap client through every
// verb and the three error kinds client-go users branch on.
func TestTypedConfigMapCRUD(t *testing.T) {
	t.Cleanup(leakcheck.Check(t)) // registered first, so it runs after the server stops
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	cms := w.CoreV1().ConfigMaps("default")

	created, err := cms.Create(ctx, configMap("default", "alpha", "v1", map[string]string{"app": "demo"}), metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "alpha", created.Name)
	assert.Equal(t, "default", created.Namespace)
	assert.NotEmpty(t, created.UID)
	assert.NotEmpty(t, created.ResourceVersion)
	assert.False(t, created.CreationTimestamp.IsZero())
	assert.Equal(t, map[string]string{"k": "v1"}, created.Data)

	got, err := r.CoreV1().ConfigMaps("default").Get(ctx, "alpha", metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion, got.ResourceVersion)
	assert.Equal(t, created.UID, got.UID)
	assert.Equal(t, map[string]string{"app": "demo"}, got.Labels)

	_, err = cms.Create(ctx, configMap("default", "alpha", "again", nil), metav1.CreateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsAlreadyExists(err), "duplicate create: %v", err)

	got.Data["k"] = "v2"
	updated, err := cms.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "v2", updated.Data["k"])
	assert.NotEqual(t, created.ResourceVersion, updated.ResourceVersion)

	// got still carries the old resourceVersion: a stale write.
	got.Data["k"] = "stale"
	_, err = cms.Update(ctx, got, metav1.UpdateOptions{})
	require.Error(t, err)
	assert.True(t, apierrors.IsConflict(err), "stale update: %v", err)

	require.NoError(t, cms.Delete(ctx, "alpha", metav1.DeleteOptions{}))
	_, err = r.CoreV1().ConfigMaps("default").Get(ctx, "alpha", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "get after delete: %v", err)
	err = cms.Delete(ctx, "alpha", metav1.DeleteOptions{})
	assert.True(t, apierrors.IsNotFound(err), "second delete: %v", err)
	_, err = cms.Update(ctx, updated, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsNotFound(err), "update of a deleted object: %v", err)

	_, err = w.CoreV1().ConfigMaps("no-such-namespace").Create(ctx, configMap("", "x", "v", nil), metav1.CreateOptions{})
	assert.True(t, apierrors.IsNotFound(err), "create in a missing namespace: %v", err)
}

// TestTypedDeploymentCRUD does the same for a resource outside the core
// group (apps/v1), whose paths start with /apis.
func TestTypedDeploymentCRUD(t *testing.T) {
	t.Cleanup(leakcheck.Check(t)) // registered first, so it runs after the server stops
	srv := startServer(t)
	w, r := srv.writeClient(t), srv.readClient(t)
	ctx := context.Background()
	createNamespace(t, w, "apps-test")
	deps := w.AppsV1().Deployments("apps-test")

	replicas := int32(2)
	labels := map[string]string{"app": "web"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	created, err := deps.Create(ctx, d, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Equal(t, "apps-test", created.Namespace)
	assert.Equal(t, int32(2), *created.Spec.Replicas)
	assert.Equal(t, "nginx:1.27", created.Spec.Template.Spec.Containers[0].Image)

	_, err = deps.Create(ctx, d, metav1.CreateOptions{})
	assert.True(t, apierrors.IsAlreadyExists(err), "duplicate create: %v", err)

	got, err := r.AppsV1().Deployments("apps-test").Get(ctx, "web", metav1.GetOptions{})
	require.NoError(t, err)
	replicas = 5
	got.Spec.Replicas = &replicas
	updated, err := deps.Update(ctx, got, metav1.UpdateOptions{})
	require.NoError(t, err)
	assert.Equal(t, int32(5), *updated.Spec.Replicas)

	_, err = deps.Update(ctx, got, metav1.UpdateOptions{})
	assert.True(t, apierrors.IsConflict(err), "stale update: %v", err)

	list, err := r.AppsV1().Deployments("apps-test").List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, list.Items, 1)
	assert.Equal(t, updated.ResourceVersion, list.Items[0].ResourceVersion)

	require.NoError(t, deps.Delete(ctx, "web", metav1.DeleteOptions{}))
	_, err = r.AppsV1().Deployments("apps-test").Get(ctx, "web", metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "get after delete: %v", err)
}

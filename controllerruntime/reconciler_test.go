package controllerruntime_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"listwatch/controllerruntime"
)

// staleCache is the manager's cached client as it is between the
// apiserver deleting the Website and the Website informer hearing of it:
// reads of the Website answer with the copy it last saw; writes go to the
// apiserver (here controller-runtime's fake client).
type staleCache struct {
	client.Client
	site *controllerruntime.Website
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if w, ok := obj.(*controllerruntime.Website); ok && key == client.ObjectKeyFromObject(c.site) {
		c.site.DeepCopyInto(w)
		return nil
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// TestFinalizeOnceFromAStaleCache reconciles a Website being deleted twice
// from the same read: the first Reconcile removes the finalizer and the
// apiserver deletes the Website; the second, queued by a child's event
// before the cache saw the Website go, finalizes the copy it still holds.
// Only the removal the apiserver accepted is reported: one CleanedUp
// Event, not two (which client-go's events broadcaster would fold into a
// series of count 2).
func TestFinalizeOnceFromAStaleCache(t *testing.T) {
	scheme, err := controllerruntime.NewScheme()
	require.NoError(t, err)
	now := metav1.Now()
	site := &controllerruntime.Website{ObjectMeta: metav1.ObjectMeta{
		Namespace: ns, Name: "hello", UID: types.UID("uid-1"),
		Finalizers: []string{controllerruntime.Finalizer}, DeletionTimestamp: &now,
	}, Spec: controllerruntime.WebsiteSpec{Message: "hello"}}
	apiserver := fake.NewClientBuilder().WithScheme(scheme).WithObjects(site).Build()
	read := &controllerruntime.Website{}
	require.NoError(t, apiserver.Get(context.Background(), client.ObjectKeyFromObject(site), read))

	recorder := events.NewFakeRecorder(10)
	r := &controllerruntime.Reconciler{Client: staleCache{Client: apiserver, site: read}, Scheme: scheme, Recorder: recorder}
	req := ctrl.Request{NamespacedName: client.ObjectKeyFromObject(site)}
	for i := range 2 {
		_, err := r.Reconcile(context.Background(), req)
		require.NoError(t, err, "Reconcile %d", i+1)
	}

	err = apiserver.Get(context.Background(), client.ObjectKeyFromObject(site), &controllerruntime.Website{})
	assert.True(t, apierrors.IsNotFound(err), "the Website after its finalizer went: %v", err)
	close(recorder.Events)
	var got []string
	for e := range recorder.Events {
		got = append(got, e)
	}
	assert.Equal(t, []string{"Normal CleanedUp cleaned up before deletion"}, got, "the Events recorded")
}

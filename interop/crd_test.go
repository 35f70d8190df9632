package interop_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"listwatch/internal/leakcheck"
)

// gadgetsCRD is a CustomResourceDefinition as a user writes it.
const gadgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.interop.example.com"},
"spec":{"group":"interop.example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","shortNames":["gd"]},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer"}}}}}},
"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}]}]}}`

var gadgets = schema.GroupVersionResource{Group: "interop.example.com", Version: "v1", Resource: "gadgets"}

func gadget(name string, size int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "interop.example.com/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"size": size},
	}}
}

// TestClientGoDynamicInformerOnACustomResource: a CRD created over the API,
// then client-go's dynamic client and dynamic informer on its resource,
// exactly as an operator built with client-go would use them. The informer
// syncs, sees a create, an update and a delete, and, when the definition
// is deleted, one delete per remaining object.
func TestClientGoDynamicInformerOnACustomResource(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t)
	code, _, body := rawDo(t, http.MethodPost, srv.url, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", nil, "application/json", []byte(gadgetsCRD))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	require.Eventually(t, func() bool {
		code, _, _ := rawGet(t, srv.url, "/apis/interop.example.com/v1", nil)
		return code == http.StatusOK
	}, safetyTimeout, 10*time.Millisecond, "the resource appears in discovery")

	cfg := srv.restConfig()
	dc, err := dynamic.NewForConfig(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := dc.Resource(gadgets).Namespace("default")
	_, err = res.Create(ctx, gadget("g1", 1), metav1.CreateOptions{})
	require.NoError(t, err)

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, "default", nil)
	inf := factory.ForResource(gadgets).Informer()
	var mu sync.Mutex
	var seen []string
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "add "+obj.(*unstructured.Unstructured).GetName())
		},
		UpdateFunc: func(_, obj any) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "update "+obj.(*unstructured.Unstructured).GetName())
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "delete "+obj.(*unstructured.Unstructured).GetName())
		},
	})
	require.NoError(t, err)
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer cancel()
	syncCtx, syncCancel := context.WithTimeout(ctx, safetyTimeout)
	defer syncCancel()
	for gvr, ok := range factory.WaitForCacheSync(syncCtx.Done()) {
		require.True(t, ok, "%v did not sync", gvr)
	}

	_, err = res.Create(ctx, gadget("g2", 2), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = res.Patch(ctx, "g1", "application/merge-patch+json", []byte(`{"spec":{"size":10}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	require.NoError(t, res.Delete(ctx, "g2", metav1.DeleteOptions{}))
	_, err = res.Create(ctx, gadget("g3", 3), metav1.CreateOptions{})
	require.NoError(t, err)
	want := []string{"add g1", "add g2", "update g1", "delete g2", "add g3"}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) >= len(want)
	}, safetyTimeout, 10*time.Millisecond)
	mu.Lock()
	assert.Equal(t, want, seen[:len(want)])
	mu.Unlock()
	cached, ok, err := inf.GetStore().GetByKey("default/g1")
	require.NoError(t, err)
	require.True(t, ok)
	size, _, _ := unstructured.NestedInt64(cached.(*unstructured.Unstructured).Object, "spec", "size")
	assert.Equal(t, int64(10), size)

	code, _, body = rawDo(t, http.MethodDelete, srv.url, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.interop.example.com", nil, "", nil)
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		s := strings.Join(seen, ",")
		return strings.Contains(s, "delete g1") && strings.Contains(s, "delete g3")
	}, safetyTimeout, 10*time.Millisecond, "deleting the definition deletes its objects")
}

// TestKubectlOnACustomResource: kubectl creates the CRD, waits for it to
// be established, lists it in api-resources, and creates, lists and deletes an object of it.
func TestKubectlOnACustomResource(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	bin := kubectlPath(t)
	srv := startServer(t)
	dir := t.TempDir()
	k := kubectl{bin: bin, kubeconfig: writeKubeconfig(t, srv.url), cacheDir: filepath.Join(dir, "cache")}
	crdFile := filepath.Join(dir, "crd.json")
	require.NoError(t, os.WriteFile(crdFile, []byte(gadgetsCRD), 0o600))
	k.run(t, "create", "-f", crdFile)
	// The definition is served asynchronously, as by kube-apiserver 1.37.2:
	// once it is Established, discovery lists its resource.
	assert.Equal(t, "customresourcedefinition.apiextensions.k8s.io/gadgets.interop.example.com condition met\n",
		k.run(t, "wait", "--for", "condition=established", "--timeout", safetyTimeout.String(), "crd/gadgets.interop.example.com"))
	resources := k.run(t, "api-resources", "--api-group", "interop.example.com")
	assert.Regexp(t, `gadgets\s+gd\s+interop.example.com/v1\s+true\s+Gadget`, resources)

	obj := filepath.Join(dir, "g1.json")
	require.NoError(t, os.WriteFile(obj, []byte(`{"apiVersion":"interop.example.com/v1","kind":"Gadget","metadata":{"name":"g1"},"spec":{"size":7}}`), 0o600))
	k.run(t, "create", "-f", obj)
	assert.Regexp(t, `(?m)^NAME\s+SIZE\ng1\s+7\s*$`, k.run(t, "get", "gadgets"))
	k.run(t, "delete", "gadget", "g1")
	assert.Empty(t, strings.TrimSpace(k.run(t, "get", "gd", "-o", "name")), "deleted")
	k.run(t, "delete", "crd", "gadgets.interop.example.com")
}

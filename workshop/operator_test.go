package workshop_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/manager"
	"listwatch/controllers/website"
)

// manifest reads a YAML file of manifests/ as an object.
func manifest(t *testing.T, name string) *api.Object {
	t.Helper()
	raw, err := os.ReadFile("manifests/" + name)
	require.NoError(t, err)
	var v any
	require.NoError(t, yaml.Unmarshal(raw, &v))
	j, err := json.Marshal(v)
	require.NoError(t, err)
	obj := &api.Object{}
	require.NoError(t, obj.UnmarshalJSON(j))
	return obj
}

// TestWebsiteCRDManifest keeps the CRD the workshop applies with kubectl
// equal to the one controllers/website and example 14 create.
func TestWebsiteCRDManifest(t *testing.T) {
	got, err := json.Marshal(manifest(t, "website-crd.yaml"))
	require.NoError(t, err)
	crd := &api.Object{}
	require.NoError(t, crd.UnmarshalJSON([]byte(website.CRD)))
	want, err := json.Marshal(crd)
	require.NoError(t, err)
	require.True(t, website.SameJSON(got, want), "manifests/website-crd.yaml differs from website.CRD:\n%s", got)
}

// TestOperatorSolution is exercise 7's check, played as the workshop
// says: the CRD applied, the room's controller manager running with
// --collect-websites, the solution in a namespace of its own, and
// manifests/website.yaml created. The Website gets its children, owned by
// it, and Ready; a child deleted by hand comes back; deleting the Website
// takes its children with it.
func TestOperatorSolution(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	srv := startServer(t, apiserverConfig())
	c, err := client.New(client.Config{Host: srv.URL()})
	require.NoError(t, err)
	_, err = c.Resource(website.CRDs).Create(ctx, manifest(t, "website-crd.yaml"))
	require.NoError(t, err)

	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() {
		mgrDone <- manager.Run(mgrCtx, manager.Config{Client: c,
			GCKinds: append(manager.DefaultGCKinds, manager.WebsiteGCKind)})
	}()
	defer func() { stopMgr(); require.NoError(t, <-mgrDone) }()

	const ns = "ex7"
	p := start(t, "07-operator/solution", "-server", srv.URL(), "-namespace", ns)
	p.waitFor(ctx, regexp.MustCompile(`^operator: watching`))
	ws := c.Resource(website.Websites).Namespace(ns)
	site, err := ws.Create(ctx, manifest(t, "website.yaml"))
	require.NoError(t, err)
	p.waitFor(ctx, regexp.MustCompile(`^reconcile ex7/hello: status Ready=True \(2 of 2 replicas ready\)$`))

	cms := c.Resource(website.ConfigMaps).Namespace(ns)
	cm, err := cms.Get(ctx, "hello-content")
	require.NoError(t, err)
	ref, ok := controllers.ControllerOf(cm)
	require.True(t, ok && ref.UID == site.Metadata.UID, "the ConfigMap is controlled by the Website: %+v", ref)

	require.NoError(t, cms.Delete(ctx, "hello-content", client.DeleteOptions{}))
	p.waitFor(ctx, regexp.MustCompile(`^reconcile ex7/hello: wrote ConfigMap hello-content$`))

	list, err := cms.List(ctx, api.ListOptions{})
	require.NoError(t, err)
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: list.Metadata.ResourceVersion, FieldSelector: "metadata.name=hello-content"})
	require.NoError(t, err)
	defer w.Stop()
	require.NoError(t, ws.Delete(ctx, "hello", client.DeleteOptions{PropagationPolicy: "Background"}))
	for ev := range w.ResultChan() {
		if ev.Type == api.Deleted {
			return // collected
		}
	}
	t.Fatal("the watch ended before the garbage collector deleted hello-content")
}

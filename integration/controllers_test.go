package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/manager"
	"listwatch/internal/leakcheck"
)

var (
	deploymentsGVR = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	replicaSetsGVR = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	eventsGVR      = api.GroupVersionResource{Version: "v1", Resource: "events"}
	podsGVR        = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// startManager runs the controller manager against srv until the test
// ends (or until the returned stop is called).
func startManager(t *testing.T, srv *apiserver.Server, cfg manager.Config) (stop func()) {
	t.Helper()
	cfg.Client = newClient(t, srv, client.Config{})
	if cfg.KubeletStartDelay == 0 {
		cfg.KubeletStartDelay = 20 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- manager.Run(ctx, cfg) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			assert.NoError(t, <-done, "manager.Run")
		})
	}
	t.Cleanup(stop)
	return stop
}

// deploymentObj is a Deployment as `kubectl create deployment NAME
// --image=nginx --replicas=N` sends it.
func deploymentObj(ns, name string, replicas int, image string) *api.Object {
	d := &api.Object{APIVersion: "apps/v1", Kind: "Deployment", Metadata: api.ObjectMeta{
		Namespace: ns, Name: name, Labels: map[string]string{"app": name},
	}}
	spec := fmt.Sprintf(`{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"nginx","image":%q}]}}}`,
		replicas, name, name, image)
	if err := d.Set("spec", json.RawMessage(spec)); err != nil {
		panic(err)
	}
	return d
}

// deploymentStatus is what `kubectl rollout status` reads.
type deploymentStatus struct {
	ObservedGeneration int64 `json:"observedGeneration"`
	Replicas           int32 `json:"replicas"`
	UpdatedReplicas    int32 `json:"updatedReplicas"`
	ReadyReplicas      int32 `json:"readyReplicas"`
	AvailableReplicas  int32 `json:"availableReplicas"`
}

// listPods lists a namespace's Pods.
func listPods(t *testing.T, c *client.Client, ns string) []*api.Object {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	l, err := c.Resource(podsGVR).Namespace(ns).List(ctx, api.ListOptions{})
	require.NoError(t, err)
	return l.Items
}

func podPhase(p *api.Object) string {
	var s struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(p.Get("status"), &s)
	return s.Phase
}

// rolledOut is `kubectl rollout status`'s test (deployment_util's
// DeploymentComplete plus the generation check): the controller saw the
// latest spec, every replica is of the latest template, and available.
func rolledOut(d *api.Object) (bool, deploymentStatus) {
	var spec struct {
		Replicas int32 `json:"replicas"`
	}
	var st deploymentStatus
	_ = json.Unmarshal(d.Get("spec"), &spec)
	_ = json.Unmarshal(d.Get("status"), &st)
	return st.ObservedGeneration >= d.Metadata.Generation &&
		st.UpdatedReplicas == spec.Replicas && st.Replicas == spec.Replicas &&
		st.AvailableReplicas == spec.Replicas, st
}

// waitRolledOut waits until the Deployment is rolled out with exactly
// replicas Running Pods, all owned by its ReplicaSets, and nothing else in
// the namespace.
func waitRolledOut(t *testing.T, c *client.Client, ns, name string, replicas int) []*api.Object {
	t.Helper()
	var pods []*api.Object
	var last string
	require.Eventually(t, func() bool {
		d, err := c.Resource(deploymentsGVR).Namespace(ns).Get(context.Background(), name)
		if err != nil {
			last = err.Error()
			return false
		}
		ok, st := rolledOut(d)
		pods = nil
		rss := replicaSetsOf(t, c, d)
		all := listPods(t, c, ns)
		for _, p := range all {
			if ref, has := controllers.ControllerOf(p); has && rss[ref.UID] != nil && podPhase(p) == "Running" {
				pods = append(pods, p)
			}
		}
		last = fmt.Sprintf("status %+v, %d running pods of its %d replicasets, %d in the namespace", st, len(pods), len(rss), len(all))
		return ok && len(pods) == replicas && len(all) == replicas
	}, waitLong, tick, "deployment %s/%s never rolled out to %d: %s", ns, name, replicas, &last)
	return pods
}

// replicaSetsOf returns the ReplicaSets d controls, by UID.
func replicaSetsOf(t *testing.T, c *client.Client, d *api.Object) map[string]*api.Object {
	t.Helper()
	l, err := c.Resource(replicaSetsGVR).Namespace(d.Metadata.Namespace).List(context.Background(), api.ListOptions{})
	require.NoError(t, err)
	out := map[string]*api.Object{}
	for _, rs := range l.Items {
		if ref, ok := controllers.ControllerOf(rs); ok && ref.UID == d.Metadata.UID {
			out[rs.Metadata.UID] = rs
		}
	}
	return out
}

func TestDeploymentControllerScalesRollsOutAndDeletes(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	startManager(t, srv, manager.Config{})
	ctx := testContext(t)
	deps := c.Resource(deploymentsGVR).Namespace("default")

	_, err := deps.Create(ctx, deploymentObj("default", "web", 3, "nginx"))
	require.NoError(t, err)
	pods := waitRolledOut(t, c, "default", "web", 3)
	for _, p := range pods {
		assert.Equal(t, "web", p.Metadata.Labels["app"], "the template's labels")
		assert.NotEmpty(t, p.Metadata.Labels["pod-template-hash"], "and the template's hash")
		ref, _ := controllers.ControllerOf(p)
		assert.Equal(t, "ReplicaSet", ref.Kind, "a Deployment's Pods belong to its ReplicaSet")
		assert.Equal(t, "apps/v1", ref.APIVersion)
		assert.Equal(t, "web-"+p.Metadata.Labels["pod-template-hash"], ref.Name)
	}

	// kubectl scale: a merge patch of the scale subresource, byte for
	// byte what kubectl sends (scale-patch-kubectl-200.json).
	req, err := http.NewRequest(http.MethodPatch, srv.URL()+"/apis/apps/v1/namespaces/default/deployments/web/scale", strings.NewReader(`{"spec":{"replicas":1}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	require.NoError(t, err)
	scaleBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", scaleBody)
	assert.Contains(t, string(scaleBody), `"spec":{"replicas":1},"status":{"replicas":3,"selector":"app=web"}`)
	assert.True(t, strings.HasPrefix(string(scaleBody), `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"web","namespace":"default","uid":`), "%s", scaleBody)
	waitRolledOut(t, c, "default", "web", 1)

	_, err = deps.Patch(ctx, "web", client.PatchTypeMerge, []byte(`{"spec":{"replicas":2}}`))
	require.NoError(t, err)
	before := waitRolledOut(t, c, "default", "web", 2)

	// A new image: a new template, rolled out and the old Pods retired.
	_, err = deps.Patch(ctx, "web", client.PatchTypeMerge,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`))
	require.NoError(t, err)
	after := waitRolledOut(t, c, "default", "web", 2)
	for _, p := range after {
		for _, b := range before {
			assert.NotEqual(t, b.Metadata.UID, p.Metadata.UID, "every Pod is of the new template")
		}
	}
	// The same template sent again bare, as kubectl apply sends a
	// manifest: the server's defaults make it the stored template, so
	// no new generation and no new pod-template-hash.
	cur, err := deps.Get(ctx, "web")
	require.NoError(t, err)
	_, err = deps.Patch(ctx, "web", client.PatchTypeMerge,
		[]byte(`{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.27"}]}}}}`))
	require.NoError(t, err)
	again, err := deps.Get(ctx, "web")
	require.NoError(t, err)
	assert.Equal(t, cur.Metadata.Generation, again.Metadata.Generation)
	assert.JSONEq(t, string(cur.Get("spec")), string(again.Get("spec")))

	// The old template's ReplicaSet stays, scaled to 0: it is revision 1,
	// the new one revision 2, as `kubectl rollout history` lists them.
	d, err := deps.Get(ctx, "web")
	require.NoError(t, err)
	revisions := map[string]int32{}
	for _, rs := range replicaSetsOf(t, c, d) {
		var spec struct {
			Replicas int32 `json:"replicas"`
		}
		require.NoError(t, json.Unmarshal(rs.Get("spec"), &spec))
		revisions[rs.Metadata.Annotations["deployment.kubernetes.io/revision"]] = spec.Replicas
	}
	assert.Equal(t, map[string]int32{"1": 0, "2": 2}, revisions)
	assert.Equal(t, "2", d.Metadata.Annotations["deployment.kubernetes.io/revision"])
	requireEvent(t, c, d, "ScalingReplicaSet")

	// Deleting the Deployment: the garbage collector removes its
	// ReplicaSets, then their Pods.
	require.NoError(t, deps.Delete(ctx, "web", client.DeleteOptions{PropagationPolicy: "Background"}))
	require.Eventually(t, func() bool { return len(listPods(t, c, "default")) == 0 }, waitLong, tick,
		"the Pods of a deleted Deployment must be collected")
}

// requireEvent waits for an Event about obj with reason, found as
// `kubectl describe` finds them: by a field selector on involvedObject.
func requireEvent(t *testing.T, c *client.Client, obj *api.Object, reason string) {
	t.Helper()
	sel := "involvedObject.name=" + obj.Metadata.Name + ",involvedObject.namespace=" + obj.Metadata.Namespace + ",involvedObject.uid=" + obj.Metadata.UID
	var seen []string
	require.Eventually(t, func() bool {
		l, err := c.Resource(eventsGVR).Namespace(obj.Metadata.Namespace).List(context.Background(), api.ListOptions{FieldSelector: sel})
		require.NoError(t, err)
		seen = seen[:0]
		for _, e := range l.Items {
			var ev struct {
				Reason  string `json:"reason"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(e.Get("reason"), &ev.Reason)
			_ = json.Unmarshal(e.Get("message"), &ev.Message)
			seen = append(seen, ev.Reason+": "+ev.Message)
			if ev.Reason == reason {
				return true
			}
		}
		return false
	}, waitLong, tick, "no %s Event about %s: %v", reason, obj.Key(), &seen)
}

func TestDeploymentControllerIsLevelTriggered(t *testing.T) {
	// The manager is down while things change: every event of that time
	// is lost to it. Reconciling from the cache, not from events, it
	// converges anyway once it is back.
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	deps := c.Resource(deploymentsGVR).Namespace("default")

	stop := startManager(t, srv, manager.Config{})
	_, err := deps.Create(ctx, deploymentObj("default", "api", 2, "nginx"))
	require.NoError(t, err)
	waitRolledOut(t, c, "default", "api", 2)
	stop()

	// While it is down: a Pod is deleted, another appears unasked, and
	// a second Deployment is created.
	pods := listPods(t, c, "default")
	require.NoError(t, c.Resource(podsGVR).Namespace("default").Delete(ctx, pods[0].Metadata.Name, client.DeleteOptions{}))
	extra := pods[1].DeepCopy()
	extra.Metadata = api.ObjectMeta{Namespace: "default", Name: "api-extra", Labels: pods[1].Metadata.Labels}
	owner, ok := controllers.ControllerOf(pods[1])
	require.True(t, ok)
	require.NoError(t, controllers.SetOwnerReferences(extra, []controllers.OwnerReference{owner}))
	extra.Remove("status")
	_, err = c.Resource(podsGVR).Namespace("default").Create(ctx, extra)
	require.NoError(t, err)
	_, err = deps.Create(ctx, deploymentObj("default", "worker", 1, "busybox"))
	require.NoError(t, err)

	startManager(t, srv, manager.Config{})
	require.Eventually(t, func() bool {
		n := map[string]int{}
		for _, p := range listPods(t, c, "default") {
			if ref, ok := controllers.ControllerOf(p); ok && podPhase(p) == "Running" {
				n[strings.TrimSuffix(ref.Name, "-"+p.Metadata.Labels["pod-template-hash"])]++ // the ReplicaSet's Deployment
			}
		}
		return n["api"] == 2 && n["worker"] == 1 && len(listPods(t, c, "default")) == 3
	}, waitLong, tick)
}

func TestGarbageCollectorDeletesOrphansOnly(t *testing.T) {
	t.Cleanup(leakcheck.Check(t))
	srv := startServer(t, apiserver.Config{})
	c := newClient(t, srv, client.Config{})
	ctx := testContext(t)
	cms := c.Resource(configMaps).Namespace("default")

	owner, err := cms.Create(ctx, configMap("default", "owner", "x"))
	require.NoError(t, err)
	owner.APIVersion, owner.Kind = "v1", "ConfigMap"
	ghost := owner.DeepCopy()
	ghost.Metadata.UID = "00000000-0000-0000-0000-000000000000" // same name, another object

	mk := func(name string, owners ...*api.Object) {
		o := configMap("default", name, "dep")
		var refs []controllers.OwnerReference
		for _, ow := range owners {
			refs = append(refs, controllers.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: ow.Metadata.Name, UID: ow.Metadata.UID})
		}
		require.NoError(t, controllers.SetOwnerReferences(o, refs))
		_, err := cms.Create(ctx, o)
		require.NoError(t, err)
	}
	mk("kept", owner)
	mk("orphan", ghost)
	mk("half", owner, ghost)

	startManager(t, srv, manager.Config{Controllers: []string{manager.GC}})
	require.Eventually(t, func() bool {
		_, err := cms.Get(ctx, "orphan")
		return client.IsNotFound(err)
	}, waitLong, tick, "an object whose only owner is gone is collected")
	require.Eventually(t, func() bool {
		half, err := cms.Get(ctx, "half")
		require.NoError(t, err, "an object with a live owner stays")
		refs, _ := controllers.OwnerReferences(half)
		return len(refs) == 1 && refs[0].UID == owner.Metadata.UID
	}, waitLong, tick, "the dangling reference is removed")
	_, err = cms.Get(ctx, "kept")
	require.NoError(t, err)

	require.NoError(t, cms.Delete(ctx, "owner", client.DeleteOptions{}))
	for _, name := range []string{"kept", "half"} {
		require.Eventually(t, func() bool {
			_, err := cms.Get(ctx, name)
			return client.IsNotFound(err)
		}, waitLong, tick, "%s goes with its owner", name)
	}
}

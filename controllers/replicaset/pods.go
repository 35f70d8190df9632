package replicaset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
)

// podsOf returns the active Pods rs controls: not being deleted, not
// finished (controller.FilterActivePods).
func (c *Controller) podsOf(rs *api.Object) (active []*api.Object, err error) {
	pods, err := c.opts.Pods.GetIndexer().ByIndex(informer.NamespaceIndex, rs.Metadata.Namespace)
	if err != nil {
		return nil, fmt.Errorf("replicaset %s: listing pods from the cache: %w", rs.Key(), err)
	}
	for _, p := range pods {
		ref, ok := controllers.ControllerOf(p)
		if !ok || ref.UID != rs.Metadata.UID {
			continue
		}
		if st := readPod(p); !st.terminating && st.phase != "Succeeded" && st.phase != "Failed" {
			active = append(active, p)
		}
	}
	return active, nil
}

// manageReplicas creates or deletes the difference between spec.replicas
// and the active Pods, at most burstReplicas at a time, recording the
// expected events first.
func (c *Controller) manageReplicas(ctx context.Context, key string, rs *api.Object, s spec, active []*api.Object) error {
	diff := int(*s.Replicas) - len(active)
	switch {
	case diff > 0:
		diff = min(diff, burstReplicas)
		c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s has %d of %d pods: creating %d", key, len(active), *s.Replicas, diff)
		c.expect.Expect(key, diff, 0)
		created, err := slowStartBatch(diff, func() error { return c.createPod(ctx, rs, s) })
		// The creations never attempted (a batch failed) produce no events.
		for range diff - created {
			c.expect.CreationObserved(key)
		}
		return err
	case diff < 0:
		victims := podsToDelete(active, min(-diff, burstReplicas))
		c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s has %d of %d pods: deleting %d", key, len(active), *s.Replicas, len(victims))
		return c.deletePods(ctx, key, rs, victims)
	}
	return nil
}

// slowStartBatchSize is the first batch (controller.SlowStartInitialBatchSize).
const slowStartBatchSize = 1

// slowStartBatch calls fn count times, in batches of 1, 2, 4, ... run
// concurrently, and stops after the first batch with an error: a create
// that fails for a reason every other would share (a quota, a namespace
// being deleted) is then tried a few times, not count times. It returns
// how many calls succeeded.
func slowStartBatch(count int, fn func() error) (int, error) {
	done := 0
	for batch := min(count, slowStartBatchSize); batch > 0; batch = min(2*batch, count-done) {
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			wg.Go(func() { errs[i] = fn() })
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			}
		}
		done += ok
		if err := errors.Join(errs...); err != nil {
			return done, err
		}
	}
	return done, nil
}

// createPod creates one Pod from rs's template, controlled by rs.
func (c *Controller) createPod(ctx context.Context, rs *api.Object, s spec) error {
	pod := &api.Object{APIVersion: "v1", Kind: "Pod", Metadata: api.ObjectMeta{
		GenerateName: rs.Metadata.Name + "-",
		Namespace:    rs.Metadata.Namespace,
		Labels:       s.Template.Metadata.Labels,
		Annotations:  s.Template.Metadata.Annotations,
	}}
	owner := rs.DeepCopy()
	owner.APIVersion, owner.Kind = APIVersion, Kind
	if err := controllers.SetOwnerReferences(pod, []controllers.OwnerReference{controllers.ControllerRef(owner)}); err != nil {
		return err
	}
	if err := pod.Set("spec", s.Template.Spec); err != nil {
		return fmt.Errorf("replicaset %s: template spec: %w", rs.Key(), err)
	}
	ref := controllers.RefOf(rs, APIVersion, Kind)
	created, err := c.opts.Client.Resource(Pods).Namespace(rs.Metadata.Namespace).Create(ctx, pod)
	if err != nil {
		c.opts.Events.Eventf(ref, controllers.EventTypeWarning, "FailedCreate", "Error creating: %v", err)
		return fmt.Errorf("replicaset %s: creating a pod: %w", rs.Key(), err)
	}
	c.opts.Events.Eventf(ref, controllers.EventTypeNormal, "SuccessfulCreate", "Created pod: %v", created.Metadata.Name)
	c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s: created pod %s", rs.Key(), created.Metadata.Name)
	return nil
}

// deletePods deletes pods, each at its UID, recording the deletions
// expected first.
func (c *Controller) deletePods(ctx context.Context, key string, rs *api.Object, pods []*api.Object) error {
	c.expect.Expect(key, 0, len(pods))
	ref := controllers.RefOf(rs, APIVersion, Kind)
	var errs []error
	for _, p := range pods {
		err := c.opts.Client.Resource(Pods).Namespace(p.Metadata.Namespace).Delete(ctx, p.Metadata.Name,
			client.DeleteOptions{Preconditions: &client.Preconditions{UID: p.Metadata.UID}})
		switch {
		case err == nil:
			c.opts.Events.Eventf(ref, controllers.EventTypeNormal, "SuccessfulDelete", "Deleted pod: %v", p.Metadata.Name)
			c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s: deleted pod %s", key, p.Metadata.Name)
		case client.IsNotFound(err):
			c.expect.DeletionObserved(key) // already gone: its DELETED event may have passed
		default:
			c.expect.DeletionObserved(key)
			c.opts.Events.Eventf(ref, controllers.EventTypeWarning, "FailedDelete", "Error deleting: %v", err)
			errs = append(errs, fmt.Errorf("replicaset %s: deleting pod %s: %w", key, p.Metadata.Name, err))
		}
	}
	return errors.Join(errs...)
}

// podsToDelete chooses n Pods to delete, those that have done the least
// work first, as getPodsToDelete ranks them (ActivePods' order, much
// reduced): not ready before ready, then the newest, then by name.
func podsToDelete(pods []*api.Object, n int) []*api.Object {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, func(a, b *api.Object) int {
		ra, rb := readPod(a).ready, readPod(b).ready
		if ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		if c := b.Metadata.CreationTimestamp.Compare(a.Metadata.CreationTimestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.Metadata.Name, b.Metadata.Name)
	})
	return pods[:min(n, len(pods))]
}

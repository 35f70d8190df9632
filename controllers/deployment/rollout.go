package deployment

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// rollout moves d one step towards its template and returns its new
// ReplicaSet (nil while Recreate waits for the old Pods to go) and the old
// ones. Each step is one write, or none; the ReplicaSets' events bring
// the Deployment back for the next.
func (c *Controller) rollout(ctx context.Context, d *api.Object, s spec, all []*replicaSet) (*replicaSet, []*replicaSet, error) {
	newRS, old := splitNewAndOld(s, all)
	revision := maxRevision(old) + 1
	var err error
	if newRS != nil {
		if newRS, err = c.syncNewReplicaSet(ctx, d, newRS, revision); err != nil {
			return nil, old, err
		}
	}
	switch {
	case s.Paused:
		// A paused Deployment is scaled but not rolled out (sync in
		// sync.go); ours only stops.
		return newRS, old, nil
	case s.Strategy.Type == recreate:
		newRS, err = c.rolloutRecreate(ctx, d, s, newRS, old, revision)
	default:
		newRS, err = c.rolloutRolling(ctx, d, s, newRS, old, revision)
	}
	return newRS, old, err
}

// rolloutRolling is the RollingUpdate strategy (rolling.go): scale the new
// ReplicaSet up as far as maxSurge allows, and the old ones down as far
// as maxUnavailable allows, until the new one has every replica.
func (c *Controller) rolloutRolling(ctx context.Context, d *api.Object, s spec, newRS *replicaSet, old []*replicaSet, revision int64) (*replicaSet, error) {
	want := *s.Replicas
	surge, _, _ := s.fenceposts()
	if newRS == nil {
		start := newReplicasRolling(want, surge, old, 0)
		rs, err := c.createNewReplicaSet(ctx, d, s, start, revision, nil)
		return rs, err
	}
	// reconcileNewReplicaSet
	switch {
	case newRS.replicas > want:
		_, err := c.scaleReplicaSet(ctx, d, s, newRS, want)
		return newRS, err
	case newRS.replicas < want:
		if n := newReplicasRolling(want, surge, old, newRS.replicas); n != newRS.replicas {
			_, err := c.scaleReplicaSet(ctx, d, s, newRS, n)
			return newRS, err
		}
	}
	_, err := c.reconcileOldReplicaSets(ctx, d, s, newRS, old)
	return newRS, err
}

// newReplicasRolling is how far the new ReplicaSet may grow
// (NewRSNewReplicas): up to want + surge Pods in all, never beyond want.
func newReplicasRolling(want, surge int32, old []*replicaSet, current int32) int32 {
	total := current + replicasOf(old)
	if total >= want+surge {
		return current
	}
	return current + min(want+surge-total, want-current)
}

func replicasOf(rss []*replicaSet) int32 {
	var n int32
	for _, rs := range rss {
		n += rs.replicas
	}
	return n
}

// reconcileOldReplicaSets scales the old ReplicaSets down while at least
// replicas - maxUnavailable Pods stay available: first the old Pods that
// are not available anyway (cleanupUnhealthyReplicas), then available
// ones (scaleDownOldReplicaSetsForRollingUpdate), oldest first.
func (c *Controller) reconcileOldReplicaSets(ctx context.Context, d *api.Object, s spec, newRS *replicaSet, old []*replicaSet) (bool, error) {
	if replicasOf(old) == 0 {
		return false, nil
	}
	_, unavailable, _ := s.fenceposts()
	minAvailable := *s.Replicas - unavailable
	maxScaledDown := replicasOf(old) + newRS.replicas - minAvailable - (newRS.replicas - newRS.status.AvailableReplicas)
	if maxScaledDown <= 0 {
		return false, nil
	}
	scaled := int32(0)
	for _, rs := range old { // unhealthy first: their Pods are not available anyway
		if scaled >= maxScaledDown || rs.replicas == 0 || rs.replicas == rs.status.AvailableReplicas {
			continue
		}
		n := min(maxScaledDown-scaled, rs.replicas-rs.status.AvailableReplicas)
		if _, err := c.scaleReplicaSet(ctx, d, s, rs, rs.replicas-n); err != nil {
			return scaled > 0, err
		}
		scaled += n
	}
	available := newRS.status.AvailableReplicas
	for _, rs := range old {
		available += min(rs.status.AvailableReplicas, rs.replicas)
	}
	for _, rs := range old {
		if available <= minAvailable {
			break
		}
		if rs.replicas == 0 {
			continue
		}
		n := min(rs.replicas, available-minAvailable)
		if _, err := c.scaleReplicaSet(ctx, d, s, rs, rs.replicas-n); err != nil {
			return true, err
		}
		available -= n
		scaled += n
	}
	return scaled > 0, nil
}

// rolloutRecreate is the Recreate strategy (recreate.go): scale every old
// ReplicaSet to 0, wait until their Pods are gone, then create (or scale
// up) the new one.
func (c *Controller) rolloutRecreate(ctx context.Context, d *api.Object, s spec, newRS *replicaSet, old []*replicaSet, revision int64) (*replicaSet, error) {
	for _, rs := range old {
		if rs.replicas > 0 {
			_, err := c.scaleReplicaSet(ctx, d, s, rs, 0)
			return newRS, err // one step; the rest at the next reconcile
		}
	}
	for _, rs := range old {
		if rs.status.Replicas > 0 {
			c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: waiting for %d old pods of %s to go", d.Key(), rs.status.Replicas, rs.obj.Metadata.Name)
			return newRS, nil
		}
	}
	if newRS == nil {
		return c.createNewReplicaSet(ctx, d, s, *s.Replicas, revision, nil)
	}
	if newRS.replicas != *s.Replicas {
		_, err := c.scaleReplicaSet(ctx, d, s, newRS, *s.Replicas)
		return newRS, err
	}
	return newRS, nil
}

// cleanup deletes the oldest old ReplicaSets beyond
// revisionHistoryLimit, once they have no Pods (cleanupDeployment): the
// revisions `kubectl rollout history` shows are the ones kept.
func (c *Controller) cleanup(ctx context.Context, d *api.Object, s spec, old []*replicaSet) error {
	alive := slices.DeleteFunc(slices.Clone(old), func(rs *replicaSet) bool { return rs.obj.Metadata.DeletionTimestamp != nil })
	diff := len(alive) - int(*s.RevisionHistoryLimit)
	if diff <= 0 {
		return nil
	}
	slices.SortFunc(alive, func(a, b *replicaSet) int { return cmp.Compare(a.revision, b.revision) })
	var errs []error
	for _, rs := range alive[:diff] {
		if rs.replicas != 0 || rs.status.Replicas != 0 {
			continue
		}
		err := c.opts.Client.Resource(ReplicaSets).Namespace(rs.obj.Metadata.Namespace).Delete(ctx, rs.obj.Metadata.Name,
			client.DeleteOptions{Preconditions: &client.Preconditions{UID: rs.obj.Metadata.UID}})
		if err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deployment %s: deleting old replicaset %s: %w", d.Key(), rs.obj.Metadata.Name, err))
			continue
		}
		c.opts.Tracer.Printf(narrate.Controller, "deployment: %s: deleted old replicaset %s (revision %d)", d.Key(), rs.obj.Metadata.Name, rs.revision)
	}
	return errors.Join(errs...)
}

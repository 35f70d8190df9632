package deployment

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// status is the Deployment status this controller writes: the counts
// `kubectl rollout status` compares (observedGeneration against
// generation, updatedReplicas and availableReplicas against spec.replicas,
// replicas against updatedReplicas) and the Available and Progressing
// conditions `kubectl describe` shows.
type status struct {
	ObservedGeneration  int64       `json:"observedGeneration,omitempty"`
	Replicas            int32       `json:"replicas,omitempty"`
	UpdatedReplicas     int32       `json:"updatedReplicas,omitempty"`
	ReadyReplicas       int32       `json:"readyReplicas,omitempty"`
	AvailableReplicas   int32       `json:"availableReplicas,omitempty"`
	UnavailableReplicas int32       `json:"unavailableReplicas,omitempty"`
	Conditions          []condition `json:"conditions,omitempty"`
	CollisionCount      *int32      `json:"collisionCount,omitempty"`
}

// condition is apps/v1 DeploymentCondition.
type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastUpdateTime     string `json:"lastUpdateTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// calculateStatus adds up the ReplicaSets' statuses (calculateStatus in
// sync.go) and decides the conditions (syncRolloutStatus in progress.go,
// without the progress deadline: ours never reports
// ProgressDeadlineExceeded).
func calculateStatus(d *api.Object, s spec, prev status, newRS *replicaSet, old []*replicaSet, now time.Time) status {
	st := status{ObservedGeneration: d.Metadata.Generation, CollisionCount: prev.CollisionCount}
	total := replicasOf(old)
	for _, rs := range append(old, newRS) {
		if rs == nil {
			continue
		}
		st.Replicas += rs.status.Replicas
		st.ReadyReplicas += rs.status.ReadyReplicas
		st.AvailableReplicas += rs.status.AvailableReplicas
	}
	if newRS != nil {
		st.UpdatedReplicas = newRS.status.Replicas
		total += newRS.replicas
	}
	st.UnavailableReplicas = max(total-st.AvailableReplicas, 0)

	_, unavailable, _ := s.fenceposts()
	available := condition{Type: "Available", Status: "False", Reason: "MinimumReplicasUnavailable", Message: "Deployment does not have minimum availability."}
	if st.AvailableReplicas >= *s.Replicas-unavailable {
		available = condition{Type: "Available", Status: "True", Reason: "MinimumReplicasAvailable", Message: "Deployment has minimum availability."}
	}
	progressing := condition{Type: "Progressing", Status: "True", Reason: "ReplicaSetUpdated"}
	switch {
	case newRS == nil:
		progressing.Message = fmt.Sprintf("Deployment %q is waiting for its old pods to go.", d.Metadata.Name)
	case complete(d, s, st):
		progressing.Reason, progressing.Message = "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", newRS.obj.Metadata.Name)
	default:
		progressing.Message = fmt.Sprintf("ReplicaSet %q is progressing.", newRS.obj.Metadata.Name)
	}
	st.Conditions = []condition{keepTimes(prev, available, now), keepTimes(prev, progressing, now)}
	return st
}

// complete is deploymentutil.DeploymentComplete: every replica is of the
// new template and available, and the controller has seen the latest spec.
func complete(d *api.Object, s spec, st status) bool {
	want := *s.Replicas
	return st.UpdatedReplicas == want && st.Replicas == want && st.AvailableReplicas == want &&
		st.ObservedGeneration >= d.Metadata.Generation
}

// keepTimes stamps c with now, unless prev has the same condition already
// (then its times stay, so an unchanged status is not written again), and
// keeps lastTransitionTime while the condition's status is the same.
func keepTimes(prev status, c condition, now time.Time) condition {
	stamp := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	c.LastUpdateTime, c.LastTransitionTime = stamp, stamp
	for _, p := range prev.Conditions {
		if p.Type != c.Type {
			continue
		}
		if p.Status == c.Status {
			c.LastTransitionTime = p.LastTransitionTime
			if p.Reason == c.Reason && p.Message == c.Message {
				c.LastUpdateTime = p.LastUpdateTime
			}
		}
	}
	return c
}

func readStatus(d *api.Object) status {
	var st status
	if raw := d.Get("status"); raw != nil {
		_ = json.Unmarshal(raw, &st) // unreadable: overwritten
	}
	return st
}

// updateStatus writes st through the status subresource if it differs
// from d's.
func (c *Controller) updateStatus(ctx context.Context, d *api.Object, st status) error {
	prev, _ := json.Marshal(readStatus(d))
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if string(prev) == string(raw) {
		return nil
	}
	upd := d.DeepCopy()
	upd.APIVersion, upd.Kind = apiVersion, kind
	if err := upd.Set("status", raw); err != nil {
		return err
	}
	if _, err := c.status.Update(ctx, c.opts.Client.Resource(Deployments).Namespace(d.Metadata.Namespace), upd); err != nil {
		if client.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("deployment %s: status: %w", d.Key(), err)
	}
	c.opts.Tracer.Printf(narrate.Controller, "deployment: %s status: %d replicas, %d updated, %d ready, %d available (generation %d)",
		d.Key(), st.Replicas, st.UpdatedReplicas, st.ReadyReplicas, st.AvailableReplicas, st.ObservedGeneration)
	return nil
}

// syncRevision puts the new ReplicaSet's revision on the Deployment
// (SetDeploymentRevision), where `kubectl describe` and `rollout history`
// read it. The real controller writes it with the status (a Deployment's
// status subresource keeps metadata changes); ours patches the
// annotation, which works on any server.
func (c *Controller) syncRevision(ctx context.Context, d *api.Object, newRS *replicaSet) error {
	if newRS == nil {
		return nil
	}
	rev := newRS.obj.Metadata.Annotations[revisionAnnotation]
	if rev == "" || d.Metadata.Annotations[revisionAnnotation] == rev {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{revisionAnnotation: rev}}})
	if err != nil {
		return err
	}
	if _, err := c.opts.Client.Resource(Deployments).Namespace(d.Metadata.Namespace).Patch(ctx, d.Metadata.Name, client.PatchTypeMerge, patch); err != nil && !client.IsNotFound(err) {
		return fmt.Errorf("deployment %s: revision annotation: %w", d.Key(), err)
	}
	return nil
}

package replicaset

import (
	"context"
	"encoding/json"
	"fmt"

	"listwatch/api"
	"listwatch/client"
	"listwatch/narrate"
)

// status is the ReplicaSet status this controller writes (apps/v1
// ReplicaSetStatus without conditions): what `kubectl get rs` shows as
// CURRENT and READY, and what the Deployment controller adds up.
type status struct {
	Replicas             int32 `json:"replicas"`
	FullyLabeledReplicas int32 `json:"fullyLabeledReplicas,omitempty"`
	ReadyReplicas        int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas    int32 `json:"availableReplicas,omitempty"`
	ObservedGeneration   int64 `json:"observedGeneration,omitempty"`
}

// calculateStatus counts the active Pods (calculateStatus in
// replica_set_utils.go): all of them, those whose labels carry the whole
// template's, the ready ones, and the available ones (ready, as
// minReadySeconds is taken as 0).
func calculateStatus(rs *api.Object, s spec, active []*api.Object) status {
	st := status{Replicas: int32(len(active)), ObservedGeneration: rs.Metadata.Generation}
	for _, p := range active {
		labelled := true
		for k, v := range s.Template.Metadata.Labels {
			if p.Metadata.Labels[k] != v {
				labelled = false
			}
		}
		if labelled {
			st.FullyLabeledReplicas++
		}
		if readPod(p).ready {
			st.ReadyReplicas++
			st.AvailableReplicas++
		}
	}
	return st
}

// updateStatus writes the status the cache shows, if it differs from the
// ReplicaSet's.
func (c *Controller) updateStatus(ctx context.Context, rs *api.Object, s spec, active []*api.Object) error {
	next := calculateStatus(rs, s, active)
	var prev status
	if raw := rs.Get("status"); raw != nil {
		_ = json.Unmarshal(raw, &prev) // unreadable: overwritten below
	}
	if prev == next {
		return nil
	}
	raw, err := json.Marshal(next)
	if err != nil {
		return err
	}
	upd := rs.DeepCopy()
	upd.APIVersion, upd.Kind = APIVersion, Kind
	if err := upd.Set("status", raw); err != nil {
		return err
	}
	if _, err := c.status.Update(ctx, c.opts.Client.Resource(ReplicaSets).Namespace(rs.Metadata.Namespace), upd); err != nil {
		if client.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return fmt.Errorf("replicaset %s: status: %w", rs.Key(), err)
	}
	c.opts.Tracer.Printf(narrate.Controller, "replicaset: %s status: %d replicas, %d ready, %d available (generation %d)",
		rs.Key(), next.Replicas, next.ReadyReplicas, next.AvailableReplicas, next.ObservedGeneration)
	return nil
}

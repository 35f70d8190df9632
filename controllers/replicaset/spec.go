package replicaset

import (
	"encoding/json"
	"fmt"

	"listwatch/api"
)

// spec is the part of a ReplicaSet's spec this controller reads.
type spec struct {
	Replicas *int32 `json:"replicas"`
	Selector *struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	Template struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
		Spec json.RawMessage `json:"spec"`
	} `json:"template"`
}

// readSpec parses a ReplicaSet's spec: replicas defaults to 1 (the
// apiserver's defaulting), and the selector must select the template's
// labels (the apiserver's validation insists; checked here too).
func readSpec(rs *api.Object) (spec, error) {
	var s spec
	raw := rs.Get("spec")
	if raw == nil {
		return s, fmt.Errorf("replicaset %s has no spec", rs.Key())
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("spec of replicaset %s: %w", rs.Key(), err)
	}
	if s.Replicas == nil {
		one := int32(1)
		s.Replicas = &one
	}
	if *s.Replicas < 0 {
		return s, fmt.Errorf("replicaset %s: spec.replicas %d is negative", rs.Key(), *s.Replicas)
	}
	if s.Selector == nil || len(s.Selector.MatchLabels) == 0 {
		return s, fmt.Errorf("replicaset %s: spec.selector.matchLabels is empty", rs.Key())
	}
	for k, v := range s.Selector.MatchLabels {
		if s.Template.Metadata.Labels[k] != v {
			return s, fmt.Errorf("replicaset %s: selector %s=%s does not match the template's labels", rs.Key(), k, v)
		}
	}
	if len(s.Template.Spec) == 0 {
		return s, fmt.Errorf("replicaset %s has no spec.template.spec", rs.Key())
	}
	return s, nil
}

// podState is what the controller needs to know about one Pod.
type podState struct {
	ready       bool
	terminating bool
	phase       string
}

// readPod reads a Pod's phase and readiness (its Ready condition is True:
// podutil.IsPodReady).
func readPod(p *api.Object) podState {
	st := podState{terminating: p.Metadata.DeletionTimestamp != nil}
	var s struct {
		Phase      string `json:"phase"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	}
	if raw := p.Get("status"); raw != nil && json.Unmarshal(raw, &s) == nil {
		st.phase = s.Phase
		for _, c := range s.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				st.ready = true
			}
		}
	}
	return st
}

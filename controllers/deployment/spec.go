package deployment

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"

	"listwatch/api"
)

// spec is the part of a Deployment's spec this controller reads.
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

// status is the Deployment status this controller writes: the fields
// `kubectl rollout status` compares (observedGeneration against
// generation, updatedReplicas and availableReplicas against spec.replicas,
// replicas against updatedReplicas).
type status struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	Replicas           int32 `json:"replicas,omitempty"`
	UpdatedReplicas    int32 `json:"updatedReplicas,omitempty"`
	ReadyReplicas      int32 `json:"readyReplicas,omitempty"`
	AvailableReplicas  int32 `json:"availableReplicas,omitempty"`
	// UnavailableReplicas is replicas minus availableReplicas.
	UnavailableReplicas int32 `json:"unavailableReplicas,omitempty"`
}

// readSpec parses a Deployment's spec. Replicas defaults to 1, as the
// apiserver's defaulting does; the selector must select the template's
// labels (the apiserver's validation insists, ours does not, so we check).
func readSpec(d *api.Object) (spec, error) {
	var s spec
	raw := d.Get("spec")
	if raw == nil {
		return s, fmt.Errorf("deployment %s has no spec", d.Key())
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("spec of deployment %s: %w", d.Key(), err)
	}
	if s.Replicas == nil {
		one := int32(1)
		s.Replicas = &one
	}
	if *s.Replicas < 0 {
		return s, fmt.Errorf("deployment %s: spec.replicas %d is negative", d.Key(), *s.Replicas)
	}
	if s.Selector == nil || len(s.Selector.MatchLabels) == 0 {
		return s, fmt.Errorf("deployment %s: spec.selector.matchLabels is empty", d.Key())
	}
	for k, v := range s.Selector.MatchLabels {
		if s.Template.Metadata.Labels[k] != v {
			return s, fmt.Errorf("deployment %s: selector %s=%s does not match the template's labels", d.Key(), k, v)
		}
	}
	if len(s.Template.Spec) == 0 {
		return s, fmt.Errorf("deployment %s has no spec.template.spec", d.Key())
	}
	return s, nil
}

// templateHashLabel marks each Pod with the template it was made from, so
// a changed template can be told apart from the Pods of the old one.
// Kubernetes puts it on ReplicaSets and their Pods.
const templateHashLabel = "pod-template-hash"

// templateHash is a short stable hash of the pod template.
func templateHash(d *api.Object) string {
	var tmpl struct {
		Template json.RawMessage `json:"template"`
	}
	_ = json.Unmarshal(d.Get("spec"), &tmpl) // readSpec already parsed it
	h := fnv.New32a()
	_, _ = h.Write(tmpl.Template)
	return fmt.Sprintf("%08x", h.Sum32())[:8]
}

// podLabels are the template's labels plus the template hash.
func podLabels(s spec, hash string) map[string]string {
	l := maps.Clone(s.Template.Metadata.Labels)
	if l == nil {
		l = map[string]string{}
	}
	l[templateHashLabel] = hash
	return l
}

// podState is what the controller needs to know about one Pod.
type podState struct {
	ready       bool
	terminating bool
}

// readPod reads a Pod's readiness: its Ready condition is True.
func readPod(p *api.Object) podState {
	st := podState{terminating: p.Metadata.DeletionTimestamp != nil}
	var s struct {
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	}
	if raw := p.Get("status"); raw != nil && json.Unmarshal(raw, &s) == nil {
		for _, c := range s.Conditions {
			if c.Type == "Ready" && c.Status == "True" {
				st.ready = true
			}
		}
	}
	return st
}

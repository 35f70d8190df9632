package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
)

// The controllers' convergence check: after the faults stop, what the
// controller manager (package controllers) built must match what was
// asked for, however many watches were cut and requests refused on the
// way. The controllers are level-triggered, so they must get there without
// any event being replayed to them.

var (
	deploymentsGVR = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	podsGVR        = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// CheckControllers compares the server's Deployments and Pods and returns
// every problem: a Deployment without exactly spec.replicas live Pods of
// its own, all Running; a Deployment whose status does not say so (or has
// not observed its generation); a Pod whose controlling owner is not a
// Deployment that exists (an orphan the garbage collector should have
// removed). No problems means converged.
func CheckControllers(ctx context.Context, c *client.Client) ([]string, error) {
	deps, err := c.Resource(deploymentsGVR).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing deployments: %w", err)
	}
	pods, err := c.Resource(podsGVR).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing pods: %w", err)
	}
	byUID := map[string]*api.Object{}
	for _, d := range deps.Items {
		byUID[d.Metadata.UID] = d
	}
	owned := map[string][]*api.Object{}
	var problems []string
	for _, p := range pods.Items {
		ref, ok := controllers.ControllerOf(p)
		if !ok || ref.Kind != "Deployment" || byUID[ref.UID] == nil {
			problems = append(problems, fmt.Sprintf("pod %s is orphaned (owner %s %s is gone)", p.Key(), ref.Kind, ref.Name))
			continue
		}
		if p.Metadata.DeletionTimestamp == nil {
			owned[ref.UID] = append(owned[ref.UID], p)
		}
	}
	for _, d := range deps.Items {
		var spec struct {
			Replicas *int `json:"replicas"`
		}
		var st struct {
			ObservedGeneration int64 `json:"observedGeneration"`
			Replicas           int   `json:"replicas"`
			ReadyReplicas      int   `json:"readyReplicas"`
		}
		_ = json.Unmarshal(d.Get("spec"), &spec)
		_ = json.Unmarshal(d.Get("status"), &st)
		want := 1
		if spec.Replicas != nil {
			want = *spec.Replicas
		}
		mine := owned[d.Metadata.UID]
		running := slices.DeleteFunc(slices.Clone(mine), func(p *api.Object) bool { return phase(p) != "Running" })
		if len(mine) != want || len(running) != want {
			problems = append(problems, fmt.Sprintf("deployment %s wants %d pods, has %d (%d running)", d.Key(), want, len(mine), len(running)))
		}
		if st.ObservedGeneration != d.Metadata.Generation || st.Replicas != want || st.ReadyReplicas != want {
			problems = append(problems, fmt.Sprintf("deployment %s status %+v does not report %d ready at generation %d", d.Key(), st, want, d.Metadata.Generation))
		}
	}
	return problems, nil
}

func phase(p *api.Object) string {
	var s struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(p.Get("status"), &s)
	return s.Phase
}

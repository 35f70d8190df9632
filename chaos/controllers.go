package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/website"
)

// The controllers' convergence check: after the faults stop, what the
// controller manager (package controllers) built must match what was
// asked for, however many watches were cut and requests refused on the
// way. The controllers are level-triggered, so they must get there without
// any event being replayed to them.

var (
	deploymentsGVR = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	replicaSetsGVR = api.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	podsGVR        = api.GroupVersionResource{Version: "v1", Resource: "pods"}
)

// CheckControllers compares the server's Deployments, ReplicaSets and
// Pods and returns every problem: a Deployment without exactly
// spec.replicas live Pods of its own (through its ReplicaSets), all
// Running; a Deployment whose status does not say so (or has not observed
// its generation); a ReplicaSet or Pod whose controlling owner does not
// exist (an orphan the garbage collector should have removed). No
// problems means converged.
func CheckControllers(ctx context.Context, c *client.Client) ([]string, error) {
	deps, err := c.Resource(deploymentsGVR).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing deployments: %w", err)
	}
	rss, err := c.Resource(replicaSetsGVR).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing replicasets: %w", err)
	}
	pods, err := c.Resource(podsGVR).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing pods: %w", err)
	}
	depByUID := byUID(deps.Items)
	var problems []string
	rsOwner := map[string]string{} // ReplicaSet UID → its Deployment's UID
	for _, rs := range rss.Items {
		ref, ok := controllers.ControllerOf(rs)
		if !ok || ref.Kind != "Deployment" || depByUID[ref.UID] == nil {
			problems = append(problems, fmt.Sprintf("replicaset %s is orphaned (owner %s %s is gone)", rs.Key(), ref.Kind, ref.Name))
			continue
		}
		rsOwner[rs.Metadata.UID] = ref.UID
	}
	owned := map[string][]*api.Object{}
	for _, p := range pods.Items {
		ref, ok := controllers.ControllerOf(p)
		if !ok || ref.Kind != "ReplicaSet" || rsOwner[ref.UID] == "" {
			problems = append(problems, fmt.Sprintf("pod %s is orphaned (owner %s %s is gone)", p.Key(), ref.Kind, ref.Name))
			continue
		}
		if p.Metadata.DeletionTimestamp == nil {
			owned[rsOwner[ref.UID]] = append(owned[rsOwner[ref.UID]], p)
		}
	}
	for _, d := range deps.Items {
		problems = append(problems, checkDeployment(d, owned[d.Metadata.UID])...)
	}
	return problems, nil
}

func byUID(objs []*api.Object) map[string]*api.Object {
	m := map[string]*api.Object{}
	for _, o := range objs {
		m[o.Metadata.UID] = o
	}
	return m
}

// checkDeployment compares one Deployment with the live Pods of its
// ReplicaSets.
func checkDeployment(d *api.Object, mine []*api.Object) []string {
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
	var problems []string
	running := slices.DeleteFunc(slices.Clone(mine), func(p *api.Object) bool { return phase(p) != "Running" })
	if len(mine) != want || len(running) != want {
		problems = append(problems, fmt.Sprintf("deployment %s wants %d pods, has %d (%d running)", d.Key(), want, len(mine), len(running)))
	}
	if st.ObservedGeneration != d.Metadata.Generation || st.Replicas != want || st.ReadyReplicas != want {
		problems = append(problems, fmt.Sprintf("deployment %s status %+v does not report %d ready at generation %d", d.Key(), st, want, d.Metadata.Generation))
	}
	return problems
}

func phase(p *api.Object) string {
	var s struct {
		Phase string `json:"phase"`
	}
	_ = json.Unmarshal(p.Get("status"), &s)
	return s.Phase
}

// CheckWebsites compares the server's Websites (package
// controllers/website) with what they own and returns every problem: a
// Website without its ConfigMap and Deployment, each controlled by it and
// holding what its spec asks for; a Website whose status is not Ready at
// its generation; a ConfigMap or Deployment controlled by a Website that
// no longer exists (the garbage collector should have removed it).
func CheckWebsites(ctx context.Context, c *client.Client) ([]string, error) {
	sites, err := c.Resource(website.Websites).List(ctx, api.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("chaos: listing websites: %w", err)
	}
	byUID := map[string]*api.Object{}
	for _, s := range sites.Items {
		byUID[s.Metadata.UID] = s
	}
	children := map[string]*api.Object{} // "ConfigMap ns/name" → object
	var problems []string
	for _, r := range []struct {
		gvr  api.GroupVersionResource
		kind string
	}{{website.ConfigMaps, "ConfigMap"}, {website.Deployments, "Deployment"}} {
		l, err := c.Resource(r.gvr).List(ctx, api.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("chaos: listing %s: %w", r.gvr.Resource, err)
		}
		for _, o := range l.Items {
			children[r.kind+" "+o.Key()] = o
			if ref, ok := controllers.ControllerOf(o); ok && ref.Kind == website.Kind && byUID[ref.UID] == nil {
				problems = append(problems, fmt.Sprintf("%s %s is orphaned (website %s %s is gone)", r.kind, o.Key(), ref.Name, ref.UID))
			}
		}
	}
	for _, s := range sites.Items {
		var spec website.Spec
		var st website.Status
		_ = json.Unmarshal(s.Get("spec"), &spec)
		_ = json.Unmarshal(s.Get("status"), &st)
		data, depSpec, replicas := website.Want(s.Metadata.Name, spec)
		ns := s.Metadata.Namespace
		for _, w := range []struct {
			kind, name, field string
			want              json.RawMessage
		}{{"ConfigMap", website.ContentName(s.Metadata.Name), "data", data}, {"Deployment", s.Metadata.Name, "spec", depSpec}} {
			o := children[w.kind+" "+ns+"/"+w.name]
			if o == nil {
				problems = append(problems, fmt.Sprintf("website %s has no %s %s", s.Key(), w.kind, w.name))
				continue
			}
			if ref, _ := controllers.ControllerOf(o); ref.UID != s.Metadata.UID {
				problems = append(problems, fmt.Sprintf("website %s: %s %s is controlled by %s %s, not by it", s.Key(), w.kind, w.name, ref.Kind, ref.UID))
			}
			if !website.Covers(o.Get(w.field), w.want) {
				problems = append(problems, fmt.Sprintf("website %s: %s %s has %s %s, want %s", s.Key(), w.kind, w.name, w.field, o.Get(w.field), w.want))
			}
		}
		ready := len(st.Conditions) == 1 && st.Conditions[0].Type == "Ready" && st.Conditions[0].Status == "True"
		if !ready || st.Ready != "True" || st.ReadyReplicas != replicas || st.ObservedGeneration != s.Metadata.Generation {
			problems = append(problems, fmt.Sprintf("website %s status %+v does not report Ready with %d replicas at generation %d", s.Key(), st, replicas, s.Metadata.Generation))
		}
	}
	return problems, nil
}

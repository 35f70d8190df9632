package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"listwatch/api"
)

// Pod defaulting: a Pod gets its PodSpec's defaults (podspecdefaults.go)
// and a few that pod templates do not, by the generated
// SetObjectDefaults_Pod (pkg/apis/core/v1/zz_generated.defaults.go),
// which runs SetDefaults_Pod, SetDefaults_PodSpec, every volume's and
// container's defaults, then SetDefaults_PodStatus. Then admission
// (podadmission.go) and the pod strategy's PrepareForCreate (below) add
// what is not a default of the type.

// defaultPod is SetObjectDefaults_Pod.
func defaultPod(obj *api.Object) error {
	if err := defaultSpec(obj, func(spec *members) error {
		defaultPodOnly(spec)
		defaultPodSpec(spec)
		return nil
	}); err != nil {
		return err
	}
	return defaultPodStatus(obj)
}

// defaultPodOnly is SetDefaults_Pod: what a Pod gets and a PodTemplate
// does not, "for historical reasons" its comment says. (Pod-level
// resources are defaulted by the strategy in 1.37, with the
// PodLevelResourcesFixDefaulting feature on; ours leaves spec.resources
// as sent. The H2CContainerProbe feature, alpha and off, would default
// probes' HTTP protocol.)
func defaultPodOnly(spec *members) {
	if n := bytes.TrimSpace(spec.get("terminationGracePeriodSeconds")); len(n) > 0 && n[0] == '-' {
		spec.set("terminationGracePeriodSeconds", json.RawMessage(`1`), podSpecOrder)
	}
	for _, list := range []string{"initContainers", "containers"} {
		spec.editEach(list, func(c *members) { c.edit("resources", requestsFromLimits) })
	}
	spec.setDefault("enableServiceLinks", `true`, podSpecOrder) // DefaultEnableServiceLinks
	if string(spec.get("hostNetwork")) == "true" {
		// With the host's network a container port is a host port.
		for _, list := range []string{"initContainers", "containers"} {
			spec.editEach(list, func(c *members) {
				c.editEach("ports", func(p *members) {
					if p.has("containerPort") {
						p.setIfZero("hostPort", string(p.get("containerPort")), containerPortOrder)
					}
				})
			})
		}
	}
}

// requestsFromLimits: a resource with a limit and no request is requested
// at its limit. The keys come out sorted, as Go writes a map.
func requestsFromLimits(r *members) {
	limits, err := r.object("limits")
	if err != nil || len(limits) == 0 {
		return
	}
	requests, err := r.object("requests")
	if err != nil {
		return
	}
	for _, l := range limits {
		if requests.get(l.name) == nil {
			requests = append(requests, l)
		}
	}
	slices.SortFunc(requests, func(a, b member) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	r.set("requests", requests.marshal(), resourcesOrder)
}

// defaultPodStatus is SetDefaults_PodStatus: podIP and podIPs say the
// same, podIP winning when they differ (older kubelets set only podIP).
func defaultPodStatus(obj *api.Object) error {
	return editField(obj, "status", func(status *members) error {
		ip := status.str("podIP")
		var ips []struct {
			IP string `json:"ip"`
		}
		_ = json.Unmarshal(status.get("podIPs"), &ips)
		switch {
		case ip != "" && (len(ips) == 0 || ips[0].IP != ip):
			status.set("podIPs", json.RawMessage(`[{"ip":`+quote(ip)+`}]`), podStatusOrder)
		case ip == "" && len(ips) > 0:
			status.set("podIP", json.RawMessage(quote(ips[0].IP)), podStatusOrder)
		}
		return nil
	})
}

// preparePodCreate is the pod strategy's PrepareForCreate
// (pkg/registry/core/pod/strategy.go): whatever status the client sent,
// a new Pod's is phase Pending and its QoS class, computed from the
// containers' requests and limits (qos.go).
func preparePodCreate(obj *api.Object) error {
	spec, err := parseMembers(obj.Get("spec"))
	if err != nil {
		spec = members{}
	}
	status := `{"phase":"Pending","qosClass":` + quote(podQOS(spec)) + `}`
	if err := obj.Set("status", json.RawMessage(status)); err != nil {
		return api.NewInternalError(fmt.Errorf("a new pod's status: %w", err))
	}
	return nil
}

// preparePodStatusUpdate defaults the status written through /status, as
// decoding the body does on the real server, and keeps the stored owner
// references: podStatusStrategy.PrepareForUpdate
// (pkg/registry/core/pod/strategy.go) does not let /status touch them,
// "since old kubelets corrupt them in a way that breaks garbage
// collection".
func preparePodStatusUpdate(obj, old *api.Object) error {
	keepStoredMetaExtra(obj, old, "ownerReferences")
	return defaultPodStatus(obj)
}

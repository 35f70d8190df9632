package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"listwatch/api"
)

// The printer columns of pods, deployments, services and secrets, as
// kube-apiserver prints them (pkg/printers/internalversion/printers.go:
// printPod, printDeployment, printService, printSecret). The column
// definitions, descriptions included, are the recorded ones
// (table-list-*-kubectl.json); the cells follow the same rules on the
// fields this server stores. Priority-1 columns are what kubectl shows
// with -o wide; the server always sends them.

// col is a column definition with its cell.
func col(name, description string, priority int32, cell func(*api.Object) any) Column {
	return Column{def: tableColumn{Name: name, Type: "string", Description: description, Priority: priority}, cell: cell}
}

// none is what the printers write for an empty value.
const none = "<none>"

func orNone(s string) string {
	if s == "" {
		return none
	}
	return s
}

// field decodes the value at a path of object members into v; false when
// any step is missing or of another type.
func field(o *api.Object, v any, path ...string) bool {
	raw := o.Get(path[0])
	for _, p := range path[1:] {
		var m map[string]json.RawMessage
		if raw == nil || json.Unmarshal(raw, &m) != nil {
			return false
		}
		raw = m[p]
	}
	return raw != nil && json.Unmarshal(raw, v) == nil
}

// Deployments: printDeployment.
var (
	deploymentColumns = []Column{
		col("Ready", "Number of the pod with ready state", 0, func(o *api.Object) any {
			replicas := int64(1) // the default of spec.replicas
			field(o, &replicas, "spec", "replicas")
			var ready int64
			field(o, &ready, "status", "readyReplicas")
			return fmt.Sprintf("%d/%d", ready, replicas)
		}),
		// Up-to-date and Available are JSON numbers although their
		// definitions say "string" (table-list-deployments-kubectl.json).
		col("Up-to-date", "Total number of non-terminating pods targeted by this deployment that have the desired template spec.", 0,
			func(o *api.Object) any { var n int64; field(o, &n, "status", "updatedReplicas"); return n }),
		col("Available", "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.", 0,
			func(o *api.Object) any { var n int64; field(o, &n, "status", "availableReplicas"); return n }),
	}
	deploymentWideColumns = templateWideColumns("Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.")
)

// templateWideColumns are the priority-1 columns of a kind with a pod
// template and a selector (Deployments, ReplicaSets): Containers, Images,
// and Selector with the kind's own description.
func templateWideColumns(selectorDescription string) []Column {
	return []Column{
		col("Containers", "Names of each container in the template.", 1, func(o *api.Object) any {
			return strings.Join(templateContainers(o, "name"), ",")
		}),
		col("Images", "Images referenced by each container in the template.", 1, func(o *api.Object) any {
			return strings.Join(templateContainers(o, "image"), ",")
		}),
		col("Selector", selectorDescription, 1, func(o *api.Object) any {
			var sel labelSelector
			if !field(o, &sel, "spec", "selector") {
				return none
			}
			return sel.String()
		}),
	}
}

// podTemplateColumns are printPodTemplate's (pkg/printers/internalversion,
// podTemplateColumnDefinitions): Containers, Images and Pod Labels of its
// template, and no Age.
var podTemplateColumns = []Column{
	col("Containers", "Names of each container in the template.", 0, func(o *api.Object) any {
		return strings.Join(containersOf(o, "name", "template", "spec", "containers"), ",")
	}),
	col("Images", "Images referenced by each container in the template.", 0, func(o *api.Object) any {
		return strings.Join(containersOf(o, "image", "template", "spec", "containers"), ",")
	}),
	col("Pod Labels", "The labels for the pod template.", 0, func(o *api.Object) any {
		var labels map[string]string
		field(o, &labels, "template", "metadata", "labels")
		return formatLabels(labels)
	}),
}

// formatLabels is labels.FormatLabels: k=v pairs sorted by key, joined by
// commas, or <none>.
func formatLabels(labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return orNone(strings.Join(parts, ","))
}

// templateContainers lists one string field of each container of a
// Deployment's pod template.
func templateContainers(o *api.Object, key string) []string {
	return containersOf(o, key, "spec", "template", "spec", "containers")
}

// containersOf lists one string field of each container at path.
func containersOf(o *api.Object, key string, path ...string) []string {
	var cs []map[string]any
	field(o, &cs, path...)
	out := make([]string, 0, len(cs))
	for _, c := range cs {
		s, _ := c[key].(string)
		out = append(out, s)
	}
	return out
}

// labelSelector is meta/v1 LabelSelector, printed as
// metav1.FormatLabelSelector prints it.
type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values"`
	} `json:"matchExpressions"`
}

func (s labelSelector) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.MatchLabels)) {
		parts = append(parts, k+"="+s.MatchLabels[k])
	}
	for _, e := range s.MatchExpressions {
		switch e.Operator {
		case "In", "NotIn":
			parts = append(parts, fmt.Sprintf("%s %s (%s)", e.Key, strings.ToLower(strings.Replace(e.Operator, "In", "in", 1)), strings.Join(e.Values, ",")))
		case "Exists":
			parts = append(parts, e.Key)
		case "DoesNotExist":
			parts = append(parts, "!"+e.Key)
		}
	}
	if len(parts) == 0 {
		return none
	}
	return strings.Join(parts, ",")
}

// Pods: printPod, for pods as this server holds them (nothing schedules
// or runs them, so most are Pending with 0/N ready).
type podStatus struct {
	Phase             string `json:"phase"`
	Reason            string `json:"reason"`
	PodIP             string `json:"podIP"`
	NominatedNodeName string `json:"nominatedNodeName"`
	ContainerStatuses []struct {
		Ready        bool  `json:"ready"`
		RestartCount int64 `json:"restartCount"`
		State        struct {
			Waiting    *struct{ Reason string } `json:"waiting"`
			Terminated *struct{ Reason string } `json:"terminated"`
		} `json:"state"`
	} `json:"containerStatuses"`
	Conditions []struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	} `json:"conditions"`
}

func podStatusOf(o *api.Object) podStatus {
	var st podStatus
	field(o, &st, "status")
	return st
}

var (
	podColumns = []Column{
		col("Ready", "The aggregate readiness state of this pod for accepting traffic.", 0, func(o *api.Object) any {
			var containers []json.RawMessage
			field(o, &containers, "spec", "containers")
			ready := 0
			for _, c := range podStatusOf(o).ContainerStatuses {
				if c.Ready {
					ready++
				}
			}
			return fmt.Sprintf("%d/%d", ready, len(containers))
		}),
		col("Status", "The aggregate status of the containers in this pod.", 0, func(o *api.Object) any {
			st := podStatusOf(o)
			reason := st.Phase
			if reason == "" {
				reason = "Pending"
			}
			if st.Reason != "" {
				reason = st.Reason
			}
			for _, c := range st.ContainerStatuses {
				switch {
				case c.State.Waiting != nil && c.State.Waiting.Reason != "":
					reason = c.State.Waiting.Reason
				case c.State.Terminated != nil && c.State.Terminated.Reason != "":
					reason = c.State.Terminated.Reason
				}
			}
			if o.Metadata.DeletionTimestamp != nil {
				reason = "Terminating"
			}
			return reason
		}),
		// Restarts is a STRING cell, unlike the deployment counts
		// (watch-table-pods.jsonl).
		col("Restarts", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0,
			func(o *api.Object) any {
				var n int64
				for _, c := range podStatusOf(o).ContainerStatuses {
					n += c.RestartCount
				}
				return strconv.FormatInt(n, 10)
			}),
	}
	podWideColumns = []Column{
		col("IP", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1,
			func(o *api.Object) any { return orNone(podStatusOf(o).PodIP) }),
		col("Node", "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename", 1,
			func(o *api.Object) any { var s string; field(o, &s, "spec", "nodeName"); return orNone(s) }),
		col("Nominated Node", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.", 1,
			func(o *api.Object) any { return orNone(podStatusOf(o).NominatedNodeName) }),
		col("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", 1,
			func(o *api.Object) any {
				var gates []struct {
					ConditionType string `json:"conditionType"`
				}
				field(o, &gates, "spec", "readinessGates")
				if len(gates) == 0 {
					return none
				}
				ready := 0
				for _, g := range gates {
					for _, c := range podStatusOf(o).Conditions {
						if c.Type == g.ConditionType && c.Status == "True" {
							ready++
						}
					}
				}
				return fmt.Sprintf("%d/%d", ready, len(gates))
			}),
	}
)

// Services: printService.
type serviceSpec struct {
	Type         string            `json:"type"`
	ClusterIP    string            `json:"clusterIP"`
	ExternalIPs  []string          `json:"externalIPs"`
	ExternalName string            `json:"externalName"`
	Selector     map[string]string `json:"selector"`
	Ports        []struct {
		Port     int64  `json:"port"`
		NodePort int64  `json:"nodePort"`
		Protocol string `json:"protocol"`
	} `json:"ports"`
}

func serviceSpecOf(o *api.Object) serviceSpec {
	var s serviceSpec
	field(o, &s, "spec")
	if s.Type == "" {
		s.Type = "ClusterIP" // the default of spec.type
	}
	return s
}

var (
	serviceColumns = []Column{
		col("Type", "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types", 0,
			func(o *api.Object) any { return serviceSpecOf(o).Type }),
		col("Cluster-IP", "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies", 0,
			func(o *api.Object) any { return orNone(serviceSpecOf(o).ClusterIP) }),
		col("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.", 0,
			func(o *api.Object) any {
				s := serviceSpecOf(o)
				switch s.Type {
				case "ExternalName":
					return s.ExternalName
				case "LoadBalancer":
					var ingress []struct{ IP, Hostname string }
					field(o, &ingress, "status", "loadBalancer", "ingress")
					ips := slices.Clone(s.ExternalIPs)
					for _, i := range ingress {
						ips = append(ips, i.IP+i.Hostname)
					}
					if len(ips) == 0 {
						return "<pending>"
					}
					return strings.Join(ips, ",")
				}
				return orNone(strings.Join(s.ExternalIPs, ","))
			}),
		col("Port(s)", "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies", 0,
			func(o *api.Object) any {
				var ports []string
				for _, p := range serviceSpecOf(o).Ports {
					proto := p.Protocol
					if proto == "" {
						proto = "TCP"
					}
					if p.NodePort != 0 {
						ports = append(ports, fmt.Sprintf("%d:%d/%s", p.Port, p.NodePort, proto))
					} else {
						ports = append(ports, fmt.Sprintf("%d/%s", p.Port, proto))
					}
				}
				return orNone(strings.Join(ports, ","))
			}),
	}
	serviceWideColumns = []Column{
		col("Selector", "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/", 1,
			func(o *api.Object) any { return labelSelector{MatchLabels: serviceSpecOf(o).Selector}.String() }),
	}
)

// Secrets: printSecret. A Secret without a type is an Opaque one: the
// real server writes the default into the object (defaultSecret), and so
// does prepareSecret.
var secretColumns = []Column{
	col("Type", "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types", 0,
		func(o *api.Object) any { return stringField(o, "type") }),
	col("Data", "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4", 0,
		func(o *api.Object) any { return countKeys(o, "data") + countKeys(o, "stringData") }),
}

// secretTypeOpaque is the default type of a Secret.
const secretTypeOpaque = "Opaque"

// prepareSecret defaults an empty type to Opaque, on create and update.
func prepareSecret(obj *api.Object) error {
	if stringField(obj, "type") == "" {
		return obj.Set("type", json.RawMessage(`"`+secretTypeOpaque+`"`))
	}
	return nil
}

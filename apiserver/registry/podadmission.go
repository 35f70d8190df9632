package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"listwatch/api"
)

// Pod admission: what the mutating admission plugins a kube-apiserver
// 1.37.2 runs by default (pkg/kubeapiserver/options/plugins.go,
// DefaultOffAdmissionPlugins names the few that are off) write into a
// Pod after defaulting and before validation. Three of them change every
// Pod:
//
//   - ServiceAccount (plugin/pkg/admission/serviceaccount/admission.go):
//     the default service account, and its token mounted into every
//     container as the projected volume kube-api-access-<random>;
//   - Priority (plugin/pkg/admission/priority/admission.go): priority 0
//     and preemptionPolicy PreemptLowerPriority when no PriorityClass is
//     the global default;
//   - DefaultTolerationSeconds (plugin/pkg/admission/
//     defaulttolerationseconds/admission.go): tolerate the node taints
//     not-ready and unreachable for 300 seconds.
//
// The others leave a Pod alone on a server like ours: LimitRanger (no
// LimitRanges), RuntimeClass (no runtimeClassName), PodSecurity and the
// webhook and policy plugins (nothing configured).

// Lookup reads an object another object's admission depends on (a
// Pod's ServiceAccount): nil, and no error, when there is none.
type Lookup func(ctx context.Context, gr api.GroupResource, namespace, name string) (*api.Object, error)

const (
	defaultServiceAccount = "default"
	tokenVolumePrefix     = "kube-api-access-"
	tokenMountPath        = "/var/run/secrets/kubernetes.io/serviceaccount"
	// mirrorPodAnnotation marks a kubelet's mirror of a static pod, whose
	// spec admission must not change.
	mirrorPodAnnotation = "kubernetes.io/config.mirror"
)

// admitPodCreate runs the three plugins on a new Pod, in the order the
// real server does (ServiceAccount, Priority, DefaultTolerationSeconds:
// AllOrderedPlugins in plugins.go).
func admitPodCreate(ctx context.Context, obj *api.Object, lookup Lookup) error {
	return editField(obj, "spec", func(spec *members) error {
		if _, mirror := obj.Metadata.Annotations[mirrorPodAnnotation]; !mirror {
			if err := admitServiceAccount(ctx, obj, spec, lookup); err != nil {
				return err
			}
		}
		if err := admitPriority(obj, spec); err != nil {
			return err
		}
		admitTolerations(spec)
		return nil
	})
}

// admitPodUpdate is what the plugins do to a Pod's replacement: Priority
// keeps the stored priority and preemptionPolicy when the new spec has
// none (validation forbids changing them); DefaultTolerationSeconds adds
// its tolerations again. ServiceAccount mutates on create only.
func admitPodUpdate(obj, old *api.Object) error {
	stored, err := parseMembers(old.Get("spec"))
	if err != nil {
		stored = members{}
	}
	return editField(obj, "spec", func(spec *members) error {
		for _, name := range []string{"priority", "preemptionPolicy"} {
			if !spec.has(name) && stored.has(name) {
				spec.set(name, stored.get(name), podSpecOrder)
			}
		}
		admitTolerations(spec)
		return nil
	})
}

// admitTolerations is DefaultTolerationSeconds: a Pod that does not
// tolerate the NoExecute taints node.kubernetes.io/not-ready and
// node.kubernetes.io/unreachable (a toleration with no key or no effect
// tolerates them too) gets one for each, 300 seconds long.
func admitTolerations(spec *members) {
	var tolerations []struct{ Key, Effect string }
	_ = json.Unmarshal(spec.get("tolerations"), &tolerations)
	items := spec.array("tolerations")
	for _, taint := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		tolerated := false
		for _, t := range tolerations {
			tolerated = tolerated || ((t.Key == taint || t.Key == "") && (t.Effect == "NoExecute" || t.Effect == ""))
		}
		if !tolerated {
			items = append(items, json.RawMessage(`{"key":`+quote(taint)+`,"operator":"Exists","effect":"NoExecute","tolerationSeconds":300}`))
		}
	}
	if len(items) > 0 {
		spec.set("tolerations", marshalArray(items), podSpecOrder)
	}
}

// systemPriorityClasses are the PriorityClasses every cluster has
// (pkg/apis/scheduling/v1/helpers.go, systemPriorityClasses), made at
// start-up; we serve no PriorityClasses, so these are the only ones.
var systemPriorityClasses = map[string]int64{
	"system-node-critical":    2000001000,
	"system-cluster-critical": 2000000000,
}

// admitPriority is the Priority plugin on create: the priority of the
// pod's class (0 with none, no class being the global default) and its
// preemption policy; a pod that names a class that does not exist, or
// asks for another priority or policy than its class gives, is refused.
func admitPriority(obj *api.Object, spec *members) error {
	forbid := func(format string, args ...any) error {
		return api.NewForbidden(api.GroupResource{Resource: "pods"}, obj.Metadata.Name, fmt.Sprintf(format, args...))
	}
	var priority int64
	if class := spec.str("priorityClassName"); class != "" {
		value, ok := systemPriorityClasses[class]
		if !ok {
			return forbid("no PriorityClass with name %s was found", class)
		}
		priority = value
	}
	if raw := spec.get("priority"); raw != nil && !isJSONNull(raw) {
		var asked int64
		if json.Unmarshal(raw, &asked) == nil && asked != priority {
			return forbid("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", asked, priority)
		}
	}
	spec.set("priority", json.RawMessage(fmt.Sprint(priority)), podSpecOrder)
	if policy := spec.str("preemptionPolicy"); policy != "" && policy != "PreemptLowerPriority" {
		return forbid("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name", policy)
	}
	spec.set("preemptionPolicy", json.RawMessage(`"PreemptLowerPriority"`), podSpecOrder)
	return nil
}

// admitServiceAccount is the ServiceAccount plugin's Admit: a Pod with no
// service account runs as default; unless the Pod or its ServiceAccount
// says not to, every container mounts a token for it; a Pod with no
// imagePullSecrets gets its ServiceAccount's.
//
// Where Kubernetes differs: the real plugin refuses (403) a Pod whose
// ServiceAccount does not exist, after retrying for one to two seconds when
// it is default, which the serviceaccount controller makes in every
// namespace. Ours admits it as if the ServiceAccount existed with nothing
// set, since our apiserver often runs without that controller (the tour,
// the tests, the examples).
func admitServiceAccount(ctx context.Context, obj *api.Object, spec *members, lookup Lookup) error {
	if spec.str("serviceAccountName") == "" {
		spec.set("serviceAccountName", json.RawMessage(quote(defaultServiceAccount)), podSpecOrder)
		spec.set("serviceAccount", json.RawMessage(quote(defaultServiceAccount)), podSpecOrder)
	}
	sa := members{}
	if lookup != nil {
		found, err := lookup(ctx, api.GroupResource{Resource: "serviceaccounts"}, obj.Metadata.Namespace, spec.str("serviceAccountName"))
		if err != nil {
			return err
		}
		if found != nil {
			sa = members{{name: "automountServiceAccountToken", raw: found.Get("automountServiceAccountToken")},
				{name: "imagePullSecrets", raw: found.Get("imagePullSecrets")}}
		}
	}
	automount := string(spec.get("automountServiceAccountToken"))
	if automount == "" || automount == "null" {
		automount = string(sa.get("automountServiceAccountToken"))
	}
	if automount != "false" {
		mountServiceAccountToken(spec)
	}
	if len(spec.array("imagePullSecrets")) == 0 {
		var secrets []struct{ Name string }
		_ = json.Unmarshal(sa.get("imagePullSecrets"), &secrets)
		var refs []json.RawMessage
		for _, s := range secrets {
			refs = append(refs, json.RawMessage(`{"name":`+quote(s.Name)+`}`))
		}
		if len(refs) > 0 {
			spec.set("imagePullSecrets", marshalArray(refs), podSpecOrder)
		}
	}
	return nil
}

// tokenVolume is the projected volume the plugin adds (TokenVolumeSource):
// a token for the service account that the kubelet refreshes (3607
// seconds: serviceaccount.WarnOnlyBoundTokenExpirationSeconds), the
// cluster's CA from the kube-root-ca.crt ConfigMap, and the namespace.
const tokenVolume = `{"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},` +
	`{"configMap":{"name":"kube-root-ca.crt","items":[{"key":"ca.crt","path":"ca.crt"}]}},` +
	`{"downwardAPI":{"items":[{"path":"namespace","fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"}}]}}],` +
	`"defaultMode":420}`

// mountServiceAccountToken is the plugin's mountServiceAccountToken: every
// container without a mount at the token's path mounts the token volume,
// which is added unless the pod has one already.
func mountServiceAccountToken(spec *members) {
	volume, hasVolume := "", false
	for _, raw := range spec.array("volumes") {
		var v struct{ Name string }
		if json.Unmarshal(raw, &v) == nil && strings.HasPrefix(v.Name, tokenVolumePrefix) {
			volume, hasVolume = v.Name, true
			break
		}
	}
	if volume == "" {
		volume = GenerateName(tokenVolumePrefix)
	}
	mount := json.RawMessage(`{"name":` + quote(volume) + `,"readOnly":true,"mountPath":` + quote(tokenMountPath) + `}`)
	needed := false
	for _, list := range []string{"initContainers", "containers"} {
		spec.editEach(list, func(c *members) {
			var mounts []struct{ MountPath string }
			_ = json.Unmarshal(c.get("volumeMounts"), &mounts)
			for _, m := range mounts {
				if m.MountPath == tokenMountPath {
					return
				}
			}
			c.set("volumeMounts", marshalArray(append(c.array("volumeMounts"), mount)), containerOrder)
			needed = true
		})
	}
	if needed && !hasVolume {
		v := json.RawMessage(`{"name":` + quote(volume) + `,"projected":` + tokenVolume + `}`)
		spec.set("volumes", marshalArray(append(spec.array("volumes"), v)), podSpecOrder)
	}
}

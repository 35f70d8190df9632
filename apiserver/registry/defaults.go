package registry

import (
	"encoding/json"
	"fmt"

	"listwatch/api"
)

// Defaulting: the fields a client may leave out and the server fills in,
// so that every reader (a controller above all) finds them set. Kubernetes
// runs the SetDefaults_<Kind> functions of pkg/apis/<group>/v1/defaults.go
// when it decodes a request body; we run a resource's Default before a
// create or update compares, validates or stores the object. A default is
// written at its place in the Go struct's field order, where the real
// server's JSON has it.
//
// kube-controller-manager depends on these: its deployment controller
// switches on spec.strategy.type and fails "unexpected deployment strategy
// type" on an empty one (pkg/controller/deployment/deployment_controller.go,
// syncDeployment), and both controllers dereference spec.replicas.

// Field orders of the apps/v1 structs (k8s.io/api/apps/v1/types.go).
var (
	deploymentSpecOrder = []string{"replicas", "selector", "template", "strategy", "minReadySeconds",
		"revisionHistoryLimit", "paused", "progressDeadlineSeconds"}
	deploymentStrategyOrder = []string{"type", "rollingUpdate"}
	rollingUpdateOrder      = []string{"maxUnavailable", "maxSurge"}
	replicaSetSpecOrder     = []string{"replicas", "minReadySeconds", "selector", "template"}
)

// defaultDeployment is SetDefaults_Deployment (pkg/apis/apps/v1/defaults.go):
// replicas 1; strategy RollingUpdate with maxUnavailable and maxSurge 25%;
// revisionHistoryLimit 10; progressDeadlineSeconds 600; and its pod
// template's defaults (podspecdefaults.go).
func defaultDeployment(obj *api.Object) error {
	return defaultSpec(obj, func(spec *members) error {
		spec.setDefault("replicas", `1`, deploymentSpecOrder)
		strategy, err := spec.object("strategy")
		if err != nil {
			return err
		}
		strategy.setDefault("type", `"RollingUpdate"`, deploymentStrategyOrder)
		if string(strategy.get("type")) == `"RollingUpdate"` {
			rolling, err := strategy.object("rollingUpdate")
			if err != nil {
				return err
			}
			rolling.setDefault("maxUnavailable", `"25%"`, rollingUpdateOrder)
			rolling.setDefault("maxSurge", `"25%"`, rollingUpdateOrder)
			strategy.set("rollingUpdate", rolling.marshal(), deploymentStrategyOrder)
		}
		spec.set("strategy", strategy.marshal(), deploymentSpecOrder)
		spec.setDefault("revisionHistoryLimit", `10`, deploymentSpecOrder)
		spec.setDefault("progressDeadlineSeconds", `600`, deploymentSpecOrder)
		spec.edit("template", defaultPodTemplateSpec)
		return nil
	})
}

// defaultReplicaSet is SetDefaults_ReplicaSet, replicas 1, and its pod
// template's defaults.
func defaultReplicaSet(obj *api.Object) error {
	return defaultSpec(obj, func(spec *members) error {
		spec.setDefault("replicas", `1`, replicaSetSpecOrder)
		spec.edit("template", defaultPodTemplateSpec)
		return nil
	})
}

// defaultPodTemplate is SetObjectDefaults_PodTemplate
// (pkg/apis/core/v1/zz_generated.defaults.go): its template's pod spec.
// (The generated functions of all three kinds default the template even
// when the client sent none, which validation then refuses; ours leaves
// an absent template absent.)
func defaultPodTemplate(obj *api.Object) error {
	return editField(obj, "template", func(t *members) error {
		defaultPodTemplateSpec(t)
		return nil
	})
}

// editField applies edit to the object's top-level member name and writes
// it back; one that is absent, null or not an object (the body's type
// check refuses those) is left alone. edit's error (a refusal) is
// returned.
func editField(obj *api.Object, name string, edit func(*members) error) error {
	raw := obj.Get(name)
	if raw == nil || isJSONNull(raw) {
		return nil
	}
	m, err := parseMembers(raw)
	if err != nil {
		return nil
	}
	if err := edit(&m); err != nil {
		return err
	}
	if err := obj.Set(name, m.marshal()); err != nil {
		return api.NewInternalError(fmt.Errorf("defaulting %s: %w", name, err))
	}
	return nil
}

// defaultSpec applies fill to the object's spec (an empty one if absent)
// and writes it back. A spec that is not an object is left for the body's
// type check to refuse.
func defaultSpec(obj *api.Object, fill func(*members) error) error {
	raw := obj.Get("spec")
	if raw == nil || isJSONNull(raw) {
		raw = json.RawMessage(`{}`)
	}
	spec, err := parseMembers(raw)
	if err != nil {
		return nil
	}
	if err := fill(&spec); err != nil {
		return nil
	}
	if err := obj.Set("spec", spec.marshal()); err != nil {
		return api.NewInternalError(fmt.Errorf("defaulting spec: %w", err))
	}
	return nil
}

// The status a new object starts with: whatever the client sent is
// dropped, as the strategies' PrepareForCreate do (pkg/registry/apps/
// deployment and replicaset: Status = DeploymentStatus{} and
// ReplicaSetStatus{}). A ReplicaSet's status.replicas is no omitempty
// field, so its empty status is {"replicas":0}
// (kinds-replicaset-create-201.json); a Deployment's is {}.
func resetStatus(empty string) func(obj *api.Object) error {
	return func(obj *api.Object) error {
		if err := obj.Set("status", json.RawMessage(empty)); err != nil {
			return api.NewInternalError(fmt.Errorf("resetting status: %w", err))
		}
		return nil
	}
}

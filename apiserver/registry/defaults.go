package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

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
// revisionHistoryLimit 10; progressDeadlineSeconds 600.
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
		return nil
	})
}

// defaultReplicaSet is SetDefaults_ReplicaSet: replicas 1.
func defaultReplicaSet(obj *api.Object) error {
	return defaultSpec(obj, func(spec *members) error {
		spec.setDefault("replicas", `1`, replicaSetSpecOrder)
		return nil
	})
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

// members is a JSON object as its members in order.
type members []member

type member struct {
	name string
	raw  json.RawMessage
}

// parseMembers reads a JSON object keeping its members' order.
func parseMembers(raw json.RawMessage) (members, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out members
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{name: name, raw: v})
	}
	return out, nil
}

func (m members) get(name string) json.RawMessage {
	for _, f := range m {
		if f.name == name {
			return f.raw
		}
	}
	return nil
}

// object reads a member that is an object (absent or null: an empty one).
func (m members) object(name string) (members, error) {
	raw := m.get(name)
	if raw == nil || isJSONNull(raw) {
		return members{}, nil
	}
	return parseMembers(raw)
}

// setDefault sets name to value when it is absent or null.
func (m *members) setDefault(name, value string, order []string) {
	if raw := m.get(name); raw == nil || isJSONNull(raw) {
		m.set(name, json.RawMessage(value), order)
	}
}

// set replaces a member, or inserts it before the first member that comes
// after it in order.
func (m *members) set(name string, value json.RawMessage, order []string) {
	for i := range *m {
		if (*m)[i].name == name {
			(*m)[i].raw = value
			return
		}
	}
	at := len(*m)
	if pos := slices.Index(order, name); pos >= 0 {
		for i, f := range *m {
			if p := slices.Index(order, f.name); p > pos {
				at = i
				break
			}
		}
	}
	*m = slices.Insert(*m, at, member{name: name, raw: value})
}

func (m members) marshal() json.RawMessage {
	b := []byte{'{'}
	for i, f := range m {
		if i > 0 {
			b = append(b, ',')
		}
		name, _ := json.Marshal(f.name)
		b = append(b, name...)
		b = append(b, ':')
		b = append(b, f.raw...)
	}
	return append(b, '}')
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

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

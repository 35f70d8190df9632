package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/store"
)

// A definition's conditions, as the Controller writes them. kube-apiserver
// 1.37.2 writes them from two controllers of its own, each with an
// UpdateStatus: the naming controller accepts the names (NamesAccepted
// True, and Established False with reason Installing) and the
// establishing controller, which the crdHandler queues once the names are
// accepted, sets Established True (apiextensions-apiserver
// pkg/controller/status/naming_controller.go, calculateNamesAndConditions;
// pkg/controller/establish/establishing_controller.go, sync). Its
// discovery lists a resource only once Established is True
// (pkg/apiserver/customresource_discovery_controller.go, sync), and kubectl
// users wait for that (kubectl wait --for condition=established). Its
// establishing controller waits for nothing to be installed: the
// crdHandler queues the definition when it sees the names accepted, to be
// established at once (5 s later if it is told there are several
// apiservers: customresource_handler.go, updateCustomResourceDefinition),
// and builds the resource's storage on the first request for it
// (getOrCreateServingInfoFor). Ours writes the same two status updates
// from the one Controller: names first, then, once Host.Install has
// returned (watch caches, routes and discovery all in place),
// Established. It never finds a names conflict (see
// Definition.Validate for what a definition must be), and it serves a
// valid definition whatever its conditions say, where the real crdHandler
// serves one only while NamesAccepted or Established is True
// (customresource_handler.go, ServeHTTP).

// The condition types the Controller writes.
const (
	condNamesAccepted = "NamesAccepted"
	condEstablished   = "Established"
)

// condition is one entry of status.conditions.
type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// definitionStatusFields is status as the Controller reads and writes it;
// fields it does not know are kept.
type definitionStatusFields map[string]json.RawMessage

// definitionConditions reads obj's status.conditions (none if it has
// none, or if they do not parse).
func definitionConditions(obj *api.Object) []condition {
	var st struct {
		Conditions []condition `json:"conditions"`
	}
	if raw := obj.Get("status"); raw != nil && json.Unmarshal(raw, &st) != nil {
		return nil
	}
	return st.Conditions
}

// conditionTrue reports whether obj's status has condition typ True.
func conditionTrue(obj *api.Object, typ string) bool {
	for _, c := range definitionConditions(obj) {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

// namesAccepted reports whether obj's accepted names are the names its
// spec asks for, when the naming controller has nothing to do (its sync
// compares spec.names and status.acceptedNames).
func namesAccepted(obj *api.Object, d *Definition) bool {
	var st struct {
		AcceptedNames Names `json:"acceptedNames"`
	}
	if raw := obj.Get("status"); raw == nil || json.Unmarshal(raw, &st) != nil {
		return false
	}
	// Compared as written, where an empty list and none are the same.
	accepted, err1 := json.Marshal(st.AcceptedNames)
	wanted, err2 := json.Marshal(d.Spec.Names.defaulted())
	return err1 == nil && err2 == nil && bytes.Equal(accepted, wanted)
}

// setConditions sets conditions in status, each replacing the one of its
// type, keeping its lastTransitionTime when its status is unchanged (as
// apiextensions-apiserver pkg/apihelpers, SetCRDCondition, does).
func setConditions(status definitionStatusFields, now time.Time, conds ...condition) error {
	var cur []condition
	if raw := status["conditions"]; raw != nil {
		if err := json.Unmarshal(raw, &cur); err != nil {
			return fmt.Errorf("status.conditions: %w", err)
		}
	}
	for _, c := range conds {
		c.LastTransitionTime = now.UTC().Format(time.RFC3339)
		i := 0
		for i < len(cur) && cur[i].Type != c.Type {
			i++
		}
		if i == len(cur) {
			cur = append(cur, c)
			continue
		}
		if cur[i].Status == c.Status {
			c.LastTransitionTime = cur[i].LastTransitionTime
		}
		cur[i] = c
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	status["conditions"] = raw
	return nil
}

// acceptNames writes the definition's accepted names and the conditions
// kube-apiserver's naming controller writes for names without conflict
// (NamesAccepted, and Established False unless it is True already), and
// returns the definition as written.
func (c *Controller) acceptNames(ctx context.Context, d *Definition) (*api.Object, error) {
	names, err := json.Marshal(d.Spec.Names.defaulted())
	if err != nil {
		return nil, err
	}
	return c.updateStatus(ctx, d, func(cur *api.Object, status definitionStatusFields) error {
		status["acceptedNames"] = names
		conds := []condition{{Type: condNamesAccepted, Status: "True", Reason: "NoConflicts", Message: "no conflicts found"}}
		if !conditionTrue(cur, condEstablished) {
			conds = append(conds, condition{Type: condEstablished, Status: "False", Reason: "Installing", Message: "the initial names have been accepted"})
		}
		return setConditions(status, time.Now(), conds...)
	})
}

// establish writes the condition kube-apiserver's establishing controller
// writes: the definition's resource is served. Like that controller, it
// asks the definition as it is now, not as the event that brought it here
// said it was (establishing_controller.go, sync, reads its lister): only
// names accepted and not yet established are established. A late event
// of the Controller's own earlier write would otherwise write Established
// again over conditions a client has written since.
func (c *Controller) establish(ctx context.Context, d *Definition) error {
	_, err := c.updateStatus(ctx, d, func(cur *api.Object, status definitionStatusFields) error {
		if !conditionTrue(cur, condNamesAccepted) || conditionTrue(cur, condEstablished) {
			return errUnchanged
		}
		return setConditions(status, time.Now(),
			condition{Type: condEstablished, Status: "True", Reason: "InitialNamesAccepted", Message: "the initial names have been accepted"})
	})
	return err
}

// errUnchanged is what a status change returns to write nothing.
var errUnchanged = errors.New("status unchanged")

// updateStatus changes the stored status of definition d (the same uid:
// a definition deleted and created again meanwhile is left alone, as an
// UpdateStatus with its resourceVersion would fail) and returns the
// definition as stored. A change that changes nothing writes nothing.
func (c *Controller) updateStatus(ctx context.Context, d *Definition, change func(*api.Object, definitionStatusFields) error) (*api.Object, error) {
	return c.store.GuaranteedUpdate(ctx, Prefix+d.Name, func(cur *api.Object) (*api.Object, error) {
		if cur.Metadata.UID != d.UID {
			return nil, fmt.Errorf("%w: customresourcedefinition %s was replaced", store.ErrConflict, d.Name)
		}
		status := definitionStatusFields{}
		if raw := cur.Get("status"); raw != nil {
			if err := json.Unmarshal(raw, &status); err != nil {
				return nil, fmt.Errorf("status of customresourcedefinition %s: %w", d.Name, err)
			}
		}
		if err := change(cur, status); errors.Is(err, errUnchanged) {
			return cur, nil // equal to the stored object: nothing is written
		} else if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(status)
		if err != nil {
			return nil, err
		}
		next := cur.DeepCopy()
		if err := next.Set("status", raw); err != nil {
			return nil, err
		}
		return next, nil
	})
}

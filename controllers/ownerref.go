package controllers

import (
	"encoding/json"
	"fmt"

	"listwatch/api"
)

// OwnerReference says "this object belongs to that one": the link the
// garbage collector follows and a controller uses to find what it made.
// It is meta/v1 OwnerReference.
type OwnerReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	UID        string `json:"uid"`
	// Controller marks the one owner that manages the object.
	Controller *bool `json:"controller,omitempty"`
	// BlockOwnerDeletion matters only to foreground deletion.
	BlockOwnerDeletion *bool `json:"blockOwnerDeletion,omitempty"`
}

// IsController reports whether the reference is the managing one.
func (r OwnerReference) IsController() bool { return r.Controller != nil && *r.Controller }

// ControllerRef is the reference a controller puts on what it creates for
// owner: controller and blockOwnerDeletion set, as in client-go's
// metav1.NewControllerRef.
func ControllerRef(owner *api.Object) OwnerReference {
	yes := true
	return OwnerReference{
		APIVersion: owner.APIVersion, Kind: owner.Kind, Name: owner.Metadata.Name, UID: owner.Metadata.UID,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// ownerReferencesField is where the references live in metadata; ObjectMeta
// keeps it among its Extra members.
const ownerReferencesField = "ownerReferences"

// OwnerReferences returns obj's owner references. A malformed list is an
// error, not a panic: the object came from a server we do not control.
func OwnerReferences(obj *api.Object) ([]OwnerReference, error) {
	for _, f := range obj.Metadata.Extra {
		if f.Name != ownerReferencesField {
			continue
		}
		var refs []OwnerReference
		if err := json.Unmarshal(f.Value, &refs); err != nil {
			return nil, fmt.Errorf("ownerReferences of %s: %w", obj.Key(), err)
		}
		return refs, nil
	}
	return nil, nil
}

// ControllerOf returns the controlling owner reference of obj, if any.
func ControllerOf(obj *api.Object) (OwnerReference, bool) {
	refs, err := OwnerReferences(obj)
	if err != nil {
		return OwnerReference{}, false
	}
	for _, r := range refs {
		if r.IsController() {
			return r, true
		}
	}
	return OwnerReference{}, false
}

// SetOwnerReferences replaces obj's owner references (none: removes them).
func SetOwnerReferences(obj *api.Object, refs []OwnerReference) error {
	extra := obj.Metadata.Extra[:0:0]
	for _, f := range obj.Metadata.Extra {
		if f.Name != ownerReferencesField {
			extra = append(extra, f)
		}
	}
	if len(refs) > 0 {
		raw, err := json.Marshal(refs)
		if err != nil {
			return fmt.Errorf("ownerReferences of %s: %w", obj.Key(), err)
		}
		extra = append(extra, api.Field{Name: ownerReferencesField, Value: raw})
	}
	obj.Metadata.Extra = extra
	return nil
}

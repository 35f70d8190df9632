package namespace

import (
	"encoding/json"
	"fmt"

	"listwatch/api"
)

// specFinalizers reads spec.finalizers (unreadable: none).
func specFinalizers(ns *api.Object) []string {
	var spec struct {
		Finalizers []string `json:"finalizers"`
	}
	_ = json.Unmarshal(ns.Get("spec"), &spec)
	return spec.Finalizers
}

// setSpecFinalizers replaces spec.finalizers, keeping the rest of spec.
func setSpecFinalizers(ns *api.Object, finalizers []string) error {
	spec := map[string]any{}
	if raw := ns.Get("spec"); raw != nil {
		if err := json.Unmarshal(raw, &spec); err != nil {
			return fmt.Errorf("namespace %s: spec: %w", ns.Metadata.Name, err)
		}
	}
	if finalizers == nil {
		finalizers = []string{}
	}
	spec["finalizers"] = finalizers
	raw, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return ns.Set("spec", raw)
}

package registry

import (
	"encoding/json"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"listwatch/api"
)

// SubresourceResize: GET, PUT and PATCH of pods/{name}/resize, kube-apiserver
// 1.37's in-place resize of a Pod's containers. A write through it keeps
// everything of the stored Pod but each container's resources and
// resizePolicy, which it takes from the written one; the Pod's generation
// goes up when that changed its spec. Discovery lists it as pods/resize,
// kind Pod, verbs get, patch and update.
//
// Kubernetes: podResizeStrategy.PrepareForUpdate and dropNonResizeUpdates
// in k8s.io/kubernetes v1.37.2 pkg/registry/core/pod/strategy.go. Left out
// here: pod-level resources and memory-backed volumes (each behind a
// feature gate) and ValidatePodResize's rules (the QoS class may not
// change, and so on). Containers added, removed, reordered or renamed are
// a 422 here, from kube-apiserver's validation there.
const SubresourceResize = "resize"

// ResizePod returns the stored Pod cur with the resources and resizePolicy
// of each container and init container taken from next, matched by
// position and name; the rest of cur, member order included, is kept.
func ResizePod(next, cur *api.Object) (*api.Object, error) {
	var ops []map[string]any
	for _, list := range []string{"containers", "initContainers"} {
		o, err := resizeOps(list, next, cur)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o...)
	}
	if len(ops) == 0 {
		return cur.DeepCopy(), nil
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	p, err := jsonpatch.DecodePatch(body)
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	patched, err := p.Apply(cur.AppendJSON(nil))
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	out := &api.Object{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, api.NewInternalError(err)
	}
	return out, nil
}

// resizeOps are the JSON patch operations that copy resources and
// resizePolicy of one list of containers from next to cur.
func resizeOps(list string, next, cur *api.Object) ([]map[string]any, error) {
	var spec struct{ Next, Cur []map[string]json.RawMessage }
	_ = decodeIfAny(fieldOf(cur.Get("spec"), list), &spec.Cur) // typed on the way in
	if err := decodeIfAny(fieldOf(next.Get("spec"), list), &spec.Next); err != nil || len(spec.Next) != len(spec.Cur) {
		return nil, resizeInvalid(cur, "spec."+list, "containers may not be added or removed by a resize")
	}
	var ops []map[string]any
	for i, c := range spec.Cur {
		if string(c["name"]) != string(spec.Next[i]["name"]) {
			return nil, resizeInvalid(cur, "spec."+list, "containers may not be renamed or reordered by a resize")
		}
		for _, field := range []string{"resources", "resizePolicy"} {
			path := fmt.Sprintf("/spec/%s/%d/%s", list, i, field)
			v, ok := spec.Next[i][field]
			switch _, had := c[field]; {
			case ok:
				ops = append(ops, map[string]any{"op": "add", "path": path, "value": v})
			case had:
				ops = append(ops, map[string]any{"op": "remove", "path": path})
			}
		}
	}
	return ops, nil
}

// decodeIfAny decodes raw into v unless raw is absent.
func decodeIfAny(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// fieldOf is one member of a JSON object, or nil.
func fieldOf(obj json.RawMessage, name string) json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(obj, &m)
	return m[name]
}

// resizeInvalid is the 422 of a resize that changes more than resources.
func resizeInvalid(pod *api.Object, field, why string) error {
	return api.NewInvalid(api.GroupKind{Kind: "Pod"}, pod.Metadata.Name, []api.StatusCause{api.FieldForbidden(field, why)})
}

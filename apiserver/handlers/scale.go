package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"

	"listwatch/api"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/patch"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
)

// The scale subresource (GET, PUT, PATCH .../deployments/{name}/scale): an
// autoscaling/v1 Scale whose spec.replicas is the object's, and the way
// `kubectl scale` changes it (a merge patch of {"spec":{"replicas":N}},
// fixture scale-patch-kubectl-200.json). The Scale's metadata is the
// object's name, namespace, uid, resourceVersion and creationTimestamp
// only; status.selector is the label selector as a string
// (scale-get-200.json). Kubernetes: registry/apps/deployment/storage
// (ScaleREST).

type scale struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Metadata   scaleMeta  `json:"metadata"`
	Spec       scaleSpec  `json:"spec"`
	Status     scaleState `json:"status"`
}

type scaleMeta struct {
	Name              string `json:"name"`
	Namespace         string `json:"namespace,omitempty"`
	UID               string `json:"uid,omitempty"`
	ResourceVersion   string `json:"resourceVersion,omitempty"`
	CreationTimestamp string `json:"creationTimestamp,omitempty"`
}

type scaleSpec struct {
	Replicas *int32 `json:"replicas,omitempty"`
}

type scaleState struct {
	Replicas int32  `json:"replicas"`
	Selector string `json:"selector,omitempty"`
}

// scaleOf builds the Scale of obj.
func scaleOf(obj *api.Object) scale {
	var spec struct {
		Replicas *int32 `json:"replicas"`
		Selector struct {
			MatchLabels map[string]string `json:"matchLabels"`
		} `json:"selector"`
	}
	var status struct {
		Replicas int32 `json:"replicas"`
	}
	_ = json.Unmarshal(obj.Get("spec"), &spec) // what does not parse is left zero
	_ = json.Unmarshal(obj.Get("status"), &status)
	replicas := int32(1)
	if spec.Replicas != nil {
		replicas = *spec.Replicas
	}
	var sel []string
	for _, k := range slices.Sorted(maps.Keys(spec.Selector.MatchLabels)) {
		sel = append(sel, k+"="+spec.Selector.MatchLabels[k])
	}
	s := scale{Kind: "Scale", APIVersion: "autoscaling/v1",
		Metadata: scaleMeta{Name: obj.Metadata.Name, Namespace: obj.Metadata.Namespace, UID: obj.Metadata.UID,
			ResourceVersion: obj.Metadata.ResourceVersion},
		Spec:   scaleSpec{Replicas: &replicas},
		Status: scaleState{Replicas: status.Replicas, Selector: strings.Join(sel, ",")}}
	if !obj.Metadata.CreationTimestamp.IsZero() {
		s.Metadata.CreationTimestamp = obj.Metadata.CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")
	}
	return s
}

func (h *Handlers) serveScale(w http.ResponseWriter, r *http.Request, ri RequestInfo, verb string) {
	res := ri.Entry.Resource
	key := res.Key(ri.Namespace, ri.Name)
	var body []byte
	var apply func([]byte) ([]byte, error)
	switch verb {
	case registry.VerbGet:
		obj, err := res.Storage(h.store).Get(r.Context(), key)
		if err != nil {
			negotiation.WriteError(w, r, api.NewNotFound(res.GroupResource(), ri.Name))
			return
		}
		writeScale(w, r, scaleOf(obj))
		return
	case registry.VerbUpdate, registry.VerbPatch:
		if err := rejectDryRun(r); err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		b, err := filters.ReadBody(w, r)
		if err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
		body = b
		if verb == registry.VerbPatch {
			patchType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if !patch.Supported(patchType) {
				negotiation.WriteStatus(w, r, patch.UnsupportedType())
				return
			}
			directive, err := fieldValidation(r, "PatchOptions")
			if err != nil {
				negotiation.WriteError(w, r, err)
				return
			}
			if apply, err = patch.Func(patchType, body, directive != fieldValidationIgnore); err != nil {
				negotiation.WriteError(w, r, err)
				return
			}
		}
	default:
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	updated, err := h.guaranteedUpdate(r, ri, func(cur *api.Object) (*api.Object, error) {
		want := body
		if apply != nil {
			current, err := json.Marshal(scaleOf(cur))
			if err != nil {
				return nil, api.NewInternalError(err)
			}
			if want, err = apply(current); err != nil {
				return nil, err
			}
		}
		return scaledTo(res, ri, cur, want)
	})
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "SCALE %s %s → rv %s", res.Name, updated.Key(), updated.Metadata.ResourceVersion)
	}
	writeScale(w, r, scaleOf(updated))
}

// scaledTo is cur with spec.replicas set from the Scale in want, after the
// checks a scale subresource makes: a Scale that decodes, a
// resourceVersion (if any) that is the current one, replicas present and
// not negative.
func scaledTo(res *registry.Resource, ri RequestInfo, cur *api.Object, want []byte) (*api.Object, error) {
	var in scale
	if err := json.Unmarshal(want, &in); err != nil {
		return nil, api.NewBadRequest(fmt.Sprintf("the body of the request is not a valid Scale: %v", err))
	}
	if in.Metadata.ResourceVersion != "" && in.Metadata.ResourceVersion != cur.Metadata.ResourceVersion {
		return nil, api.NewConflict(res.GroupResource(), ri.Name, api.OptimisticLockErrorMsg)
	}
	if in.Spec.Replicas == nil || *in.Spec.Replicas < 0 {
		return nil, api.NewInvalid(api.GroupKind{Group: "autoscaling", Kind: "Scale"}, ri.Name, []api.StatusCause{{
			Type: api.CauseFieldValueInvalid, Field: "spec.replicas", Message: "Invalid value: must be greater than or equal to 0"}})
	}
	var spec map[string]json.RawMessage
	if err := json.Unmarshal(cur.Get("spec"), &spec); err != nil || spec == nil {
		spec = map[string]json.RawMessage{}
	}
	n, _ := json.Marshal(*in.Spec.Replicas)
	spec["replicas"] = n
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, api.NewInternalError(err)
	}
	next := cur.DeepCopy()
	if err := next.Set("spec", raw); err != nil {
		return nil, api.NewInternalError(err)
	}
	return prepareUpdate(res, next, cur)
}

func writeScale(w http.ResponseWriter, r *http.Request, s scale) {
	b, err := json.Marshal(s)
	if err != nil {
		negotiation.WriteError(w, r, api.NewInternalError(err))
		return
	}
	negotiation.WriteBody(w, http.StatusOK, b, negotiation.IsPretty(r))
}

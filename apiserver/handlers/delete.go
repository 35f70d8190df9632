package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/apiserver/yamljson"
	"listwatch/narrate"
	"listwatch/store"
)

// DELETE of one object, and of a collection. What a delete answers depends
// on the resource, as in Kubernetes: ConfigMaps, Secrets, Events and
// Deployments answer a Status "Success" naming the object
// (delete-200.json); Pods, Services and Namespaces answer the deleted
// object. A DeleteOptions body may carry preconditions (uid,
// resourceVersion): if the object moved on, 409 Conflict
// (error-409-delete-precondition.json). The DELETED watch event carries the
// object's last state stamped with the deletion's revision (the store does
// that). Kubernetes: handlers/delete.go, registry/generic/registry/store.go.

// deleteOptions is the part of meta/v1 DeleteOptions the server reads.
type deleteOptions struct {
	Preconditions *struct {
		ResourceVersion *string `json:"resourceVersion"`
		UID             *string `json:"uid"`
	} `json:"preconditions"`
	PropagationPolicy  *string  `json:"propagationPolicy"`
	OrphanDependents   *bool    `json:"orphanDependents"`
	GracePeriodSeconds *int64   `json:"gracePeriodSeconds"`
	DryRun             []string `json:"dryRun"`
}

// request is what the registry decides a deletion by.
func (o *deleteOptions) request() registry.DeleteRequest {
	req := registry.DeleteRequest{Grace: o.GracePeriodSeconds, OrphanDependents: o.OrphanDependents}
	if o.PropagationPolicy != nil {
		req.Propagation = *o.PropagationPolicy
	}
	return req
}

var propagationPolicies = []string{"Foreground", "Background", "Orphan"}

// readDeleteOptions reads the optional DeleteOptions body and the query's
// propagationPolicy and dryRun.
func readDeleteOptions(w http.ResponseWriter, r *http.Request) (*deleteOptions, error) {
	opts := &deleteOptions{}
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		// client-go sends DeleteOptions as protobuf by default, with its
		// own group-version (v1, apps/v1) in the envelope.
		format, err := negotiation.BodyFormatOf(r, true)
		if err != nil {
			return nil, err
		}
		body, err := filters.ReadBody(w, r)
		if err != nil {
			return nil, err
		}
		switch format {
		case negotiation.ProtobufBody:
			if body, err = negotiation.ProtobufToJSON(body, "meta.k8s.io/v1", "DeleteOptions"); err != nil {
				return nil, err
			}
		case negotiation.YAMLBody:
			// kube-apiserver 1.37.2 answers YAML that does not parse
			// with goyaml's words alone: 400 "yaml: line 4: did not
			// find expected key".
			if body, _, err = yamljson.Convert(body); err != nil {
				return nil, api.NewBadRequest(err.Error())
			}
		}
		if len(body) > 0 {
			if err := json.Unmarshal(body, opts); err != nil {
				return nil, api.NewBadRequest(fmt.Sprintf("the body of the request is not a valid DeleteOptions: %v (%s)", err, negotiation.SummarizeBody(body, 30)))
			}
		}
	}
	q := r.URL.Query()
	if v := q.Get("propagationPolicy"); v != "" {
		opts.PropagationPolicy = &v
	}
	if vs, ok := q["orphanDependents"]; ok {
		// Only "0" and "false" are false (apimachinery's
		// runtime.Convert_Slice_string_To_Pointer_bool).
		b := len(vs) > 0 && vs[0] != "0" && !strings.EqualFold(vs[0], "false")
		opts.OrphanDependents = &b
	}
	if v := q.Get("gracePeriodSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, api.NewBadRequest(fmt.Sprintf("gracePeriodSeconds: Invalid value: %q: %v", v, err))
		}
		opts.GracePeriodSeconds = &n
	}
	var causes []api.StatusCause
	if p := opts.PropagationPolicy; p != nil && opts.OrphanDependents != nil {
		causes = append(causes, registry.InvalidValue("propagationPolicy", *p, "orphanDependents and deletionPropagation cannot be both set"))
	}
	if p := opts.PropagationPolicy; p != nil && !slices.Contains(propagationPolicies, *p) {
		causes = append(causes, notSupported("propagationPolicy", *p, "Foreground", "Background", "Orphan", "nil"))
	}
	if len(causes) > 0 {
		// ValidateDeleteOptions (apimachinery pkg/apis/meta/v1/validation).
		return nil, api.NewInvalid(api.GroupKind{Group: "meta.k8s.io", Kind: "DeleteOptions"}, "", causes)
	}
	if _, ok := q["dryRun"]; ok || len(opts.DryRun) > 0 {
		return nil, api.NewBadRequest("dryRun is not supported by this server")
	}
	return opts, nil
}

// preconditions turns DeleteOptions preconditions into the store's.
func (o *deleteOptions) preconditions() (store.Preconditions, error) {
	var pre store.Preconditions
	if o.Preconditions == nil {
		return pre, nil
	}
	if rv := o.Preconditions.ResourceVersion; rv != nil && *rv != "" {
		n, err := strconv.ParseUint(*rv, 10, 63)
		if err != nil {
			return pre, api.NewBadRequest(fmt.Sprintf("preconditions.resourceVersion: Invalid value: %q: %v", *rv, err))
		}
		pre.ResourceVersion = int64(n)
		if n == 0 {
			// Revision 0 names no version at all; no object can match it.
			pre.ResourceVersion = -1
		}
	}
	if uid := o.Preconditions.UID; uid != nil {
		pre.UID = *uid
	}
	return pre, nil
}

func (h *Handlers) serveDelete(w http.ResponseWriter, r *http.Request, ri RequestInfo) {
	res := ri.Entry.Resource
	opts, err := readDeleteOptions(w, r)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	pre, err := opts.preconditions()
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if res == h.reg.Namespaces().Resource && slices.Contains(registry.ImmortalNamespaces, ri.Name) {
		negotiation.WriteError(w, r, api.NewForbidden(res.GroupResource(), ri.Name, "this namespace may not be deleted"))
		return
	}
	key := res.Key(ri.Namespace, ri.Name)
	var obj *api.Object
	gone := true
	if res == h.reg.Namespaces().Resource {
		// Namespaces keep their own deletion: Terminating first.
		obj, gone, err = h.deleteNamespace(r.Context(), res, key, pre)
	} else {
		obj, gone, err = h.deleteObject(r.Context(), res, key, pre, opts.request())
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = api.NewNotFound(res.GroupResource(), ri.Name)
	case errors.Is(err, store.ErrConflict):
		err = h.preconditionConflict(r, res, ri.Name, key, pre)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "DELETE %s %s (last rv %s)", res.Name, obj.Key(), obj.Metadata.ResourceVersion)
	}
	if res.ReturnDeletedObject || !gone {
		// An object that stays (finalizers, a grace period) is answered
		// with itself, whatever the kind (finalizer-delete-configmap-200.json).
		negotiation.WriteObject(w, r, http.StatusOK, negotiation.WithKind(res, obj))
		return
	}
	negotiation.WriteStatus(w, r, negotiation.SuccessStatus(res, obj))
}

// preconditionConflict explains a failed delete precondition the way
// Kubernetes does: naming the kind and both versions.
func (h *Handlers) preconditionConflict(r *http.Request, res *registry.Resource, name, key string, pre store.Preconditions) error {
	cur, err := res.Storage(h.store).Get(r.Context(), key)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return api.NewNotFound(res.GroupResource(), name)
		}
		return err
	}
	byKind := api.GroupResource{Group: res.Group, Resource: res.Kind}
	if pre.UID != "" && pre.UID != cur.Metadata.UID {
		return api.NewConflict(byKind, name, fmt.Sprintf(
			"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been replaced",
			pre.UID, cur.Metadata.UID))
	}
	want := strconv.FormatInt(max(pre.ResourceVersion, 0), 10)
	return api.NewConflict(byKind, name, fmt.Sprintf(
		"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified",
		want, cur.Metadata.ResourceVersion))
}

// serveDeleteCollection deletes every object of the collection that the
// label and field selectors pick, and answers the list of deleted objects
// in their last state (deletecollection-200.json).
func (h *Handlers) serveDeleteCollection(w http.ResponseWriter, r *http.Request, ri RequestInfo) {
	res := ri.Entry.Resource
	p, err := parseListParams(r.URL.Query(), false, "")
	if err == nil {
		err = p.forResource(res)
	}
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	dopts, err := readDeleteOptions(w, r)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	opts := store.ListOptions{}
	if !p.selectorsEmpty() {
		opts.Filter = p.matcher("")
	}
	page, err := res.Storage(h.store).List(r.Context(), res.CollectionPrefix(ri.Namespace), opts)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	deleted := make([]*api.Object, 0, len(page.Items))
	for _, obj := range page.Items {
		// The uid precondition skips an object deleted and re-created since
		// the list: it is not the one the client selected.
		last, _, err := h.deleteObject(r.Context(), res, res.Key(obj.Metadata.Namespace, obj.Metadata.Name),
			store.Preconditions{UID: obj.Metadata.UID}, dopts.request())
		switch {
		case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrConflict):
			continue
		case err != nil:
			negotiation.WriteError(w, r, err)
			return
		}
		deleted = append(deleted, negotiation.AsListItem(last))
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "DELETECOLLECTION %s%s → %d deleted", res.Name, nsSuffix(ri.Namespace), len(deleted))
	}
	l := api.List{APIVersion: res.APIVersion(), Kind: res.ListKind,
		Metadata: api.ListMeta{ResourceVersion: strconv.FormatInt(page.Revision, 10)}, Items: deleted}
	negotiation.WriteJSON(w, r, http.StatusOK, l.AppendJSON(nil))
}

package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"listwatch/api"
)

// The patch types a server may accept; the Content-Type of a PATCH says
// which one its body is.
const (
	// PatchTypeMerge is RFC 7386 JSON merge patch: the body is a partial
	// object, maps merge, null deletes.
	PatchTypeMerge = "application/merge-patch+json"
	// PatchTypeJSON is RFC 6902 JSON patch: a list of operations.
	PatchTypeJSON = "application/json-patch+json"
	// PatchTypeStrategicMerge is Kubernetes' strategic merge patch
	// (kubectl patch's default; built-in kinds only).
	PatchTypeStrategicMerge = "application/strategic-merge-patch+json"
	// PatchTypeApply is server-side apply.
	PatchTypeApply = "application/apply-patch+yaml"
)

// ResourceClient makes the calls for one resource, either across all
// namespaces (or cluster-scoped) or within one namespace. It is the
// listwatch counterpart of client-go's dynamic ResourceInterface, and it
// satisfies the reflector's ListerWatcher (List + Watch).
type ResourceClient struct {
	c         *Client
	gvr       api.GroupVersionResource
	namespace string
}

// Resource returns a client for gvr across all namespaces, which is also
// the right one for a cluster-scoped resource such as namespaces.
func (c *Client) Resource(gvr api.GroupVersionResource) *ResourceClient {
	return &ResourceClient{c: c, gvr: gvr}
}

// Namespace returns a client for the same resource within namespace ns.
func (rc *ResourceClient) Namespace(ns string) *ResourceClient {
	return &ResourceClient{c: rc.c, gvr: rc.gvr, namespace: ns}
}

// collectionPath is /api/v1/[namespaces/{ns}/]{resource} for the core group
// (whose group name is empty) and /apis/{group}/{version}/... for the rest.
func (rc *ResourceClient) collectionPath() string {
	var b strings.Builder
	if rc.gvr.Group == "" {
		b.WriteString("/api/" + url.PathEscape(rc.gvr.Version))
	} else {
		b.WriteString("/apis/" + url.PathEscape(rc.gvr.Group) + "/" + url.PathEscape(rc.gvr.Version))
	}
	if rc.namespace != "" {
		b.WriteString("/namespaces/" + url.PathEscape(rc.namespace))
	}
	b.WriteString("/" + url.PathEscape(rc.gvr.Resource))
	return b.String()
}

func (rc *ResourceClient) objectPath(name string) string {
	return rc.collectionPath() + "/" + url.PathEscape(name)
}

func (rc *ResourceClient) check() error {
	if rc.gvr.Version == "" || rc.gvr.Resource == "" {
		return fmt.Errorf("client: resource %+v needs a version and a resource name", rc.gvr)
	}
	return nil
}

func checkName(verb, name string) error {
	if name == "" {
		return fmt.Errorf("client: %s needs an object name", verb)
	}
	return nil
}

// List reads the collection once: one page if opts.Limit is set (then
// List.Metadata.Continue names the next one), otherwise everything.
// opts.Watch is ignored; use Watch for that.
func (rc *ResourceClient) List(ctx context.Context, opts api.ListOptions) (*api.List, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	opts.Watch = false
	opts.AllowWatchBookmarks = false
	body, err := rc.c.do(ctx, &request{
		method: http.MethodGet, path: rc.collectionPath(), query: opts.Values(),
		gr: rc.gvr.GroupResource(),
	})
	if err != nil {
		return nil, err
	}
	list := &api.List{}
	if err := list.UnmarshalJSON(body); err != nil {
		return nil, fmt.Errorf("client: decoding the list of %s: %w", rc.gvr.GroupResource(), err)
	}
	return list, nil
}

// Get reads one object by name.
func (rc *ResourceClient) Get(ctx context.Context, name string) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if err := checkName("get", name); err != nil {
		return nil, err
	}
	return rc.c.doObject(ctx, &request{
		method: http.MethodGet, path: rc.objectPath(name),
		gr: rc.gvr.GroupResource(), name: name,
	})
}

// Create stores a new object (POST to the collection) and returns it as
// stored, with its uid and resourceVersion.
func (rc *ResourceClient) Create(ctx context.Context, obj *api.Object) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("client: create of a nil object")
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("client: encoding the object to create: %w", err)
	}
	return rc.c.doObject(ctx, &request{
		method: http.MethodPost, path: rc.collectionPath(), body: body, contentType: "application/json",
		gr: rc.gvr.GroupResource(), name: obj.Metadata.Name,
	})
}

// Update replaces an object (PUT). If obj carries a resourceVersion the
// server only accepts the write if that is still the object's current one,
// and answers 409 Conflict otherwise (optimistic concurrency).
func (rc *ResourceClient) Update(ctx context.Context, obj *api.Object) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("client: update of a nil object")
	}
	return rc.put(ctx, obj, "update", "")
}

// put PUTs obj to its path plus suffix ("" or "/status").
func (rc *ResourceClient) put(ctx context.Context, obj *api.Object, verb, suffix string) (*api.Object, error) {
	if err := checkName(verb, obj.Metadata.Name); err != nil {
		return nil, err
	}
	body, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("client: encoding the object to %s: %w", verb, err)
	}
	return rc.c.doObject(ctx, &request{
		method: http.MethodPut, path: rc.objectPath(obj.Metadata.Name) + suffix, body: body, contentType: "application/json",
		gr: rc.gvr.GroupResource(), name: obj.Metadata.Name,
	})
}

// Patch changes part of an object. patchType is the body's format, one of
// the PatchType constants (PatchTypeMerge is the one every server takes).
func (rc *ResourceClient) Patch(ctx context.Context, name, patchType string, data []byte) (*api.Object, error) {
	if err := rc.check(); err != nil {
		return nil, err
	}
	if err := checkName("patch", name); err != nil {
		return nil, err
	}
	if patchType == "" {
		return nil, fmt.Errorf("client: patch of %q needs a patch type", name)
	}
	if data == nil {
		data = []byte("{}")
	}
	return rc.c.doObject(ctx, &request{
		method: http.MethodPatch, path: rc.objectPath(name), body: data, contentType: patchType,
		gr: rc.gvr.GroupResource(), name: name,
	})
}

// DeleteOptions are the options of a delete.
type DeleteOptions struct {
	// Preconditions, if set, make the delete conditional: the server
	// answers 409 Conflict unless the object still has this
	// resourceVersion and/or uid.
	Preconditions *Preconditions
	// PropagationPolicy says what happens to the object's dependents:
	// "Background" (the garbage collector deletes them afterwards),
	// "Foreground" or "Orphan". Empty leaves it to the server.
	PropagationPolicy string
	// GracePeriodSeconds, if set, overrides the object's grace period; 0
	// deletes a Pod at once (what a kubelet sends once containers are gone).
	GracePeriodSeconds *int64
}

// Preconditions must hold for a delete to happen.
type Preconditions struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
	UID             string `json:"uid,omitempty"`
}

// deleteOptionsJSON is the meta/v1 DeleteOptions body, byte for byte what
// kubectl sends: {"kind":"DeleteOptions","apiVersion":"v1","preconditions":{...}}.
type deleteOptionsJSON struct {
	Kind               string         `json:"kind"`
	APIVersion         string         `json:"apiVersion"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty"`
	Preconditions      *Preconditions `json:"preconditions,omitempty"`
	PropagationPolicy  string         `json:"propagationPolicy,omitempty"`
}

// Delete removes one object. The server's answer (a Success Status, or
// for some kinds the deleted object) is not needed and is dropped.
func (rc *ResourceClient) Delete(ctx context.Context, name string, opts DeleteOptions) error {
	if err := rc.check(); err != nil {
		return err
	}
	if err := checkName("delete", name); err != nil {
		return err
	}
	r := &request{method: http.MethodDelete, path: rc.objectPath(name), gr: rc.gvr.GroupResource(), name: name}
	if err := opts.setBody(r); err != nil {
		return err
	}
	_, err := rc.c.do(ctx, r)
	return err
}

// setBody puts the options, if any are set, in r's body as a
// DeleteOptions.
func (opts DeleteOptions) setBody(r *request) error {
	if opts.Preconditions == nil && opts.PropagationPolicy == "" && opts.GracePeriodSeconds == nil {
		return nil
	}
	body, err := json.Marshal(deleteOptionsJSON{
		Kind: "DeleteOptions", APIVersion: "v1", Preconditions: opts.Preconditions,
		PropagationPolicy: opts.PropagationPolicy, GracePeriodSeconds: opts.GracePeriodSeconds,
	})
	if err != nil {
		return fmt.Errorf("client: encoding delete options: %w", err)
	}
	r.body, r.contentType = body, "application/json"
	return nil
}

// DeleteCollection deletes every object of the collection (in the
// ResourceClient's namespace, if any) that opts' selectors pick, as
// client-go's DeleteCollection does; the namespace controller empties a
// namespace this way. The answer (the list of deleted objects) is dropped.
func (rc *ResourceClient) DeleteCollection(ctx context.Context, dopts DeleteOptions, opts api.ListOptions) error {
	if err := rc.check(); err != nil {
		return err
	}
	r := &request{method: http.MethodDelete, path: rc.collectionPath(), query: opts.Values(), gr: rc.gvr.GroupResource()}
	if err := dopts.setBody(r); err != nil {
		return err
	}
	_, err := rc.c.do(ctx, r)
	return err
}

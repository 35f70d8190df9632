package api

// GroupResource names a resource in an API group: {"", "configmaps"} or
// {"apps", "deployments"}. Error messages name resources this way.
type GroupResource struct {
	Group    string
	Resource string
}

// String is "configmaps" for the core group and "deployments.apps" otherwise,
// the qualified form Kubernetes puts in messages.
func (gr GroupResource) String() string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// GroupKind names a kind in an API group: {"", "ConfigMap"}.
type GroupKind struct {
	Group string
	Kind  string
}

// String is "ConfigMap" for the core group and "Deployment.apps" otherwise.
func (gk GroupKind) String() string {
	if gk.Group == "" {
		return gk.Kind
	}
	return gk.Kind + "." + gk.Group
}

// GroupVersionResource is what a client needs to build a resource's path.
type GroupVersionResource struct {
	Group    string
	Version  string
	Resource string
}

// GroupResource drops the version.
func (gvr GroupVersionResource) GroupResource() GroupResource {
	return GroupResource{Group: gvr.Group, Resource: gvr.Resource}
}

// APIVersion is "v1" for the core group and "apps/v1" otherwise, the value
// of an object's apiVersion field.
func (gvr GroupVersionResource) APIVersion() string {
	if gvr.Group == "" {
		return gvr.Version
	}
	return gvr.Group + "/" + gvr.Version
}

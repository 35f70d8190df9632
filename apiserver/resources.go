package apiserver

import (
	"slices"

	"listwatch/api"
)

// The verbs a resource can allow, as discovery lists them.
const (
	verbCreate           = "create"
	verbDelete           = "delete"
	verbDeleteCollection = "deletecollection"
	verbGet              = "get"
	verbList             = "list"
	verbPatch            = "patch"
	verbUpdate           = "update"
	verbWatch            = "watch"
)

// allVerbs is what an ordinary resource allows, in discovery's order.
var allVerbs = []string{verbCreate, verbDelete, verbDeleteCollection, verbGet, verbList, verbPatch, verbUpdate, verbWatch}

// resource declares one API resource: everything routing, discovery,
// validation, Table output and storage need to know about it. Adding a
// resource to the server is adding one entry to builtinResources; nothing
// else changes. It plays the role of a Kubernetes REST storage
// (pkg/registry/<group>/<resource>/storage) plus its strategy and its
// discovery entry.
type resource struct {
	Group, Version string
	// Name is the plural resource name of the URL ("configmaps").
	Name         string
	SingularName string
	Kind         string
	ListKind     string
	ShortNames   []string
	Categories   []string
	Namespaced   bool
	Verbs        []string
	// ReturnDeletedObject: DELETE answers with the deleted object instead of
	// a Success Status, as Kubernetes does for pods, services and
	// namespaces (genericregistry.Store.ReturnDeletedObject).
	ReturnDeletedObject bool
	// Generation: metadata.generation starts at 1 and grows with every
	// change of spec, as for Deployments.
	Generation bool
	// validateName checks metadata.name (prefix: it is a generateName).
	validateName func(name string, prefix bool) []string
	// columns are the Table columns after Name (Age is always last).
	columns []column
	// prepareCreate fills in what the server owns on create (a namespace's
	// phase, finalizer and name label); it may return a Status error.
	prepareCreate func(obj *api.Object) error
	// prepareUpdate keeps what the server owns on update; old is the stored
	// object.
	prepareUpdate func(obj, old *api.Object) error
}

// builtinResources is the one table of resources the server serves: core/v1
// namespaces, configmaps, secrets, pods, services and events, and apps/v1
// deployments. The facts (kinds, short names, verbs, categories, name rules)
// are those of a real kube-apiserver v1.32's discovery documents.
func builtinResources() []*resource {
	return []*resource{
		{
			Version: "v1", Name: "namespaces", SingularName: "namespace",
			Kind: "Namespace", ListKind: "NamespaceList", ShortNames: []string{"ns"},
			Verbs:               []string{verbCreate, verbDelete, verbGet, verbList, verbPatch, verbUpdate, verbWatch},
			ReturnDeletedObject: true,
			validateName:        validateDNS1123Label,
			columns:             []column{namespaceStatusColumn},
			prepareCreate:       prepareNamespace,
			prepareUpdate:       func(obj, _ *api.Object) error { return prepareNamespace(obj) },
		},
		{
			Version: "v1", Name: "configmaps", SingularName: "configmap",
			Kind: "ConfigMap", ListKind: "ConfigMapList", ShortNames: []string{"cm"},
			Namespaced: true, Verbs: allVerbs,
			validateName: validateDNS1123Subdomain,
			columns:      []column{configMapDataColumn},
		},
		{
			Version: "v1", Name: "secrets", SingularName: "secret",
			Kind: "Secret", ListKind: "SecretList",
			Namespaced: true, Verbs: allVerbs,
			validateName: validateDNS1123Subdomain,
			columns:      []column{secretTypeColumn, secretDataColumn},
		},
		{
			Version: "v1", Name: "pods", SingularName: "pod",
			Kind: "Pod", ListKind: "PodList", ShortNames: []string{"po"}, Categories: []string{"all"},
			Namespaced: true, Verbs: allVerbs, ReturnDeletedObject: true,
			validateName: validateDNS1123Subdomain,
			columns:      []column{podStatusColumn},
		},
		{
			Version: "v1", Name: "services", SingularName: "service",
			Kind: "Service", ListKind: "ServiceList", ShortNames: []string{"svc"}, Categories: []string{"all"},
			Namespaced: true, Verbs: allVerbs, ReturnDeletedObject: true,
			validateName: validateDNS1035Label,
			columns:      []column{serviceTypeColumn},
		},
		{
			Version: "v1", Name: "events", SingularName: "event",
			Kind: "Event", ListKind: "EventList", ShortNames: []string{"ev"},
			Namespaced: true, Verbs: allVerbs,
			validateName: validateDNS1123Subdomain,
		},
		{
			Group: "apps", Version: "v1", Name: "deployments", SingularName: "deployment",
			Kind: "Deployment", ListKind: "DeploymentList", ShortNames: []string{"deploy"}, Categories: []string{"all"},
			Namespaced: true, Verbs: allVerbs, Generation: true,
			validateName: validateDNS1123Subdomain,
		},
	}
}

// GroupResource names the resource in error messages ("deployments.apps").
func (r *resource) GroupResource() api.GroupResource {
	return api.GroupResource{Group: r.Group, Resource: r.Name}
}

// GroupKind names the kind in 422 Invalid messages ("Deployment.apps").
func (r *resource) GroupKind() api.GroupKind {
	return api.GroupKind{Group: r.Group, Kind: r.Kind}
}

// APIVersion is the value of the apiVersion field ("v1", "apps/v1").
func (r *resource) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Prefix is the store prefix of every object of the resource, as
// kube-apiserver lays out etcd: /registry/<resource>/.
func (r *resource) Prefix() string { return "/registry/" + r.Name + "/" }

// collectionPrefix is the store prefix of one namespace's objects, or of
// all objects when ns is empty.
func (r *resource) collectionPrefix(ns string) string {
	if r.Namespaced && ns != "" {
		return r.Prefix() + ns + "/"
	}
	return r.Prefix()
}

// Key is the store key of one object: /registry/<resource>/[<ns>/]<name>.
func (r *resource) Key(ns, name string) string {
	if r.Namespaced {
		return r.Prefix() + ns + "/" + name
	}
	return r.Prefix() + name
}

// allows reports whether the resource serves verb.
func (r *resource) allows(verb string) bool { return slices.Contains(r.Verbs, verb) }

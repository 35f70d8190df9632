package registry

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"listwatch/api"
	"listwatch/api/protobuf"
)

// The verbs a resource can allow, as discovery lists them.
const (
	VerbCreate           = "create"
	VerbDelete           = "delete"
	VerbDeleteCollection = "deletecollection"
	VerbGet              = "get"
	VerbList             = "list"
	VerbPatch            = "patch"
	VerbUpdate           = "update"
	VerbWatch            = "watch"
)

// AllVerbs is what an ordinary resource Allows, in discovery's order.
var AllVerbs = []string{VerbCreate, VerbDelete, VerbDeleteCollection, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch}

// Resource declares one API resource: everything routing, discovery,
// validation, Table output and storage need to know about it. Adding a
// resource to the server is adding one entry to Builtin; nothing
// else changes. It plays the role of a Kubernetes REST storage
// (pkg/registry/<group>/<resource>/storage) plus its strategy and its
// discovery entry.
type Resource struct {
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
	// change of spec, as for Deployments and, in Kubernetes 1.37, Pods
	// (pkg/registry/core/pod/strategy.go PrepareForCreate,
	// updatePodGeneration); and by one when a delete first marks the object
	// (finalizers.go).
	Generation bool
	// GenerationField is the field whose changes Generation counts when it
	// is not spec: a PodTemplate's template
	// (pkg/registry/core/podtemplate/strategy.go, PrepareForUpdate).
	GenerationField string
	// ValidateName checks metadata.name (prefix: it is a generateName).
	ValidateName func(name string, prefix bool) []string
	// ValidateFields, if set, checks the rest of an object about to be
	// written, after its metadata (the kind's Validate<Kind> in
	// pkg/apis/core/validation); each problem is a cause of the 422.
	ValidateFields func(obj *api.Object) []api.StatusCause
	// Columns are the Table columns after Name; Age comes last unless
	// NoAgeColumn (a CRD with additionalPrinterColumns has no automatic Age).
	Columns     []Column
	NoAgeColumn bool
	// WideColumns come after Age: the priority-1 columns kubectl shows
	// with -o wide (a Deployment's Containers, Images, Selector).
	WideColumns []Column
	// OwnColumns, if set, are every Table column in order, for a kind
	// whose table does not start with Name and end with Age (Events).
	OwnColumns []Column
	// Default fills in the defaults of an object about to be written, as
	// the API's SetDefaults_<Kind> functions do when a request body is
	// decoded (pkg/apis/<group>/v1/defaults.go), before anything compares
	// or validates it.
	Default func(obj *api.Object) error
	// NotWatchCached: the resource has no watch cache. Each of its watches
	// is a store watch of its own (package storagewatch) and its lists
	// read the store. kube-apiserver 1.37.2 serves Events so:
	// DefaultWatchCacheSizes (pkg/kubeapiserver/default_storage_factory_builder.go)
	// sets the watch cache size of "events" and "events.k8s.io/events" to
	// 0, and StorageFactoryRestOptionsFactory.GetRESTOptions
	// (k8s.io/apiserver pkg/server/options/etcd.go) then builds their
	// storage with generic.UndecoratedStorage, not StorageWithCacher.
	// Every other built-in kind, and every custom resource, is cached.
	NotWatchCached bool
	// NoGarbageCollection: a DELETE never adds the garbage collector's
	// finalizers, whatever its propagationPolicy (gcfinalizers.go), as
	// for Events.
	NoGarbageCollection bool
	// AdmitCreate, if set, is what kube-apiserver's default mutating
	// admission plugins do to a new object after defaulting and before
	// validation (podadmission.go); lookup reads the objects they
	// consult. It may return a Status error (a 403 refusal).
	AdmitCreate func(ctx context.Context, obj *api.Object, lookup Lookup) error
	// AdmitUpdate is the same for a replacement of the stored object old.
	AdmitUpdate func(obj, old *api.Object) error
	// StoragePrefix, if set, replaces /registry/<resource>/ as the store
	// prefix (see eventsV1).
	StoragePrefix string
	// StoredAs, if set, converts the resource's objects to the version
	// they are stored in and back (storedas.go): events.k8s.io Events are
	// stored as core Events, under the core prefix.
	StoredAs *StoredAs
	// StorageVersion, if set, is the version the resource's objects are
	// stored in when it is not Version: a custom resource served in
	// several versions keeps its objects in the definition's storage
	// version, which discovery's storageVersionHash names for every one.
	StorageVersion string
	// PrepareCreate fills in what the server owns on create (a namespace's
	// phase, finalizer and name label); it may return a Status error.
	PrepareCreate func(obj *api.Object) error
	// PrepareUpdate keeps what the server owns on update; old is the stored
	// object.
	PrepareUpdate func(obj, old *api.Object) error
	// Subresources are the subresources served under each object's path:
	// SubresourceStatus, SubresourceScale.
	Subresources []string
	// PrepareStatusUpdate, if set, checks a write through the status
	// subresource (obj is the stored object with the new status and,
	// unless StatusKeepsStoredMetadata, the request's metadata).
	PrepareStatusUpdate func(obj, old *api.Object) error
	// StatusKeepsStoredMetadata: a write through the status subresource
	// changes the status alone, as a custom resource's status strategy
	// does (apiextensions-apiserver pkg/registry/customresource/
	// status_strategy.go PrepareForUpdate copies the stored object and
	// sets the new status on it). A built-in kind's status strategy resets
	// only spec, so labels, annotations and finalizers written to /status
	// stay (pkg/registry/core/namespace/strategy.go
	// namespaceStatusStrategy.PrepareForUpdate); what else a kind keeps is
	// its PrepareStatusUpdate's.
	StatusKeepsStoredMetadata bool
	// Prune, if set, conforms a JSON body in place of the typed schema of
	// Conform (validation.go): a custom resource's structural schema
	// prunes what it does not know, and reports each pruned path as a
	// strict decoding error.
	Prune func(js []byte) (protobuf.Conformed, error)
	// OpenAPISchema is a custom resource's schema, its definition's
	// openAPIV3Schema, which OpenAPI v3 publishes for kubectl explain.
	OpenAPISchema json.RawMessage
}

// The subresources a resource may serve.
const (
	// SubresourceStatus: GET, PUT and PATCH of .../{name}/status change
	// only status; writes of the object itself keep the stored status.
	SubresourceStatus = "status"
	// SubresourceScale: .../{name}/scale reads and writes spec.replicas as
	// an autoscaling/v1 Scale.
	SubresourceScale = "scale"
)

// SpecField is the field whose changes grow metadata.generation.
func (r *Resource) SpecField() string {
	if r.GenerationField != "" {
		return r.GenerationField
	}
	return "spec"
}

// HasSubresource reports whether the resource serves sub.
func (r *Resource) HasSubresource(sub string) bool { return slices.Contains(r.Subresources, sub) }

// IsCustom reports whether the resource is a custom resource: a CRD's
// group always has a dot and is never a built-in one (*.k8s.io), even
// when its first label ("apps.example.com") would name one.
func (r *Resource) IsCustom() bool {
	return strings.Contains(r.Group, ".") && !strings.HasSuffix(r.Group, ".k8s.io")
}

// Builtin is the one table of resources the server serves: core/v1
// namespaces, configmaps, secrets, pods, services, events, serviceaccounts
// and podtemplates, apps/v1 deployments and replicasets, batch/v1
// cronjobs, events.k8s.io/v1 events and coordination.k8s.io/v1 leases:
// what kube-controller-manager's deployment, replicaset, garbage
// collector, namespace and serviceaccount controllers and its leader
// election read and write, and the PodTemplates and CronJobs Kubernetes'
// e2e API chunking and generated clientset specs use. The facts (kinds,
// short names, verbs, categories, name rules) are those of a real
// kube-apiserver's discovery documents (discovery-*.json).
func Builtin() []*Resource {
	rs := coreV1()
	rs = append(rs, appsV1()...)
	rs = append(rs, batchV1()...)
	return append(rs, eventsV1(), leasesV1())
}

// coreV1 is the core group's resources ("/api/v1").
func coreV1() []*Resource {
	return []*Resource{
		{
			Version: "v1", Name: "namespaces", SingularName: "namespace",
			Kind: "Namespace", ListKind: "NamespaceList", ShortNames: []string{"ns"},
			Verbs:               []string{VerbCreate, VerbDelete, VerbGet, VerbList, VerbPatch, VerbUpdate, VerbWatch},
			ReturnDeletedObject: true,
			ValidateName:        validateDNS1123Label,
			Columns:             []Column{namespaceStatusColumn},
			PrepareCreate:       prepareNamespace,
			PrepareUpdate:       prepareNamespaceUpdate,
			Subresources:        []string{SubresourceFinalize, SubresourceStatus},
		},
		{
			Version: "v1", Name: "configmaps", SingularName: "configmap",
			Kind: "ConfigMap", ListKind: "ConfigMapList", ShortNames: []string{"cm"},
			Namespaced: true, Verbs: AllVerbs,
			ValidateName:   validateDNS1123Subdomain,
			ValidateFields: validateConfigMapKeys,
			Columns:        []Column{configMapDataColumn},
		},
		{
			Version: "v1", Name: "secrets", SingularName: "secret",
			Kind: "Secret", ListKind: "SecretList",
			Namespaced: true, Verbs: AllVerbs,
			ValidateName:   validateDNS1123Subdomain,
			ValidateFields: validateSecretKeys,
			Columns:        secretColumns,
			PrepareCreate:  prepareSecret,
			PrepareUpdate:  func(obj, _ *api.Object) error { return prepareSecret(obj) },
		},
		{
			Version: "v1", Name: "pods", SingularName: "pod",
			Kind: "Pod", ListKind: "PodList", ShortNames: []string{"po"}, Categories: []string{"all"},
			Namespaced: true, Verbs: AllVerbs, ReturnDeletedObject: true, Generation: true,
			ValidateName:        validateDNS1123Subdomain,
			Subresources:        []string{SubresourceResize, SubresourceStatus},
			Default:             defaultPod,
			AdmitCreate:         admitPodCreate,
			AdmitUpdate:         admitPodUpdate,
			PrepareCreate:       preparePodCreate,
			PrepareStatusUpdate: preparePodStatusUpdate,
			Columns:             podColumns,
			WideColumns:         podWideColumns,
		},
		{
			Version: "v1", Name: "services", SingularName: "service",
			Kind: "Service", ListKind: "ServiceList", ShortNames: []string{"svc"}, Categories: []string{"all"},
			Namespaced: true, Verbs: AllVerbs, ReturnDeletedObject: true,
			ValidateName: validateDNS1035Label,
			Subresources: []string{SubresourceStatus},
			Columns:      serviceColumns,
			WideColumns:  serviceWideColumns,
		},
		{
			Version: "v1", Name: "events", SingularName: "event",
			Kind: "Event", ListKind: "EventList", ShortNames: []string{"ev"},
			Namespaced: true, Verbs: AllVerbs,
			ValidateName:   validateDNS1123Subdomain,
			OwnColumns:     eventColumns,
			NotWatchCached: true,
			// DefaultGarbageCollectionPolicy: Unsupported
			// (pkg/registry/core/event/strategy.go).
			NoGarbageCollection: true,
		},
		{
			Version: "v1", Name: "serviceaccounts", SingularName: "serviceaccount",
			Kind: "ServiceAccount", ListKind: "ServiceAccountList", ShortNames: []string{"sa"},
			Namespaced: true, Verbs: AllVerbs,
			ValidateName: validateDNS1123Subdomain,
		},
		{
			Version: "v1", Name: "podtemplates", SingularName: "podtemplate",
			Kind: "PodTemplate", ListKind: "PodTemplateList",
			Namespaced: true, Verbs: AllVerbs, Generation: true, GenerationField: "template",
			ValidateName: validateDNS1123Subdomain,
			Default:      defaultPodTemplate,
			Columns:      podTemplateColumns,
			NoAgeColumn:  true,
		},
	}
}

// appsV1 is apps/v1's resources.
func appsV1() []*Resource {
	return []*Resource{
		{
			Group: "apps", Version: "v1", Name: "deployments", SingularName: "deployment",
			Kind: "Deployment", ListKind: "DeploymentList", ShortNames: []string{"deploy"}, Categories: []string{"all"},
			Namespaced: true, Verbs: AllVerbs, Generation: true,
			ValidateName:  validateDNS1123Subdomain,
			Subresources:  []string{SubresourceStatus, SubresourceScale},
			Default:       defaultDeployment,
			PrepareCreate: resetStatus(`{}`),
			Columns:       deploymentColumns,
			WideColumns:   deploymentWideColumns,
			// deploymentStatusStrategy.PrepareForUpdate keeps the stored
			// labels too (pkg/registry/apps/deployment/strategy.go).
			PrepareStatusUpdate: keepStoredLabels,
		},
		{
			Group: "apps", Version: "v1", Name: "replicasets", SingularName: "replicaset",
			Kind: "ReplicaSet", ListKind: "ReplicaSetList", ShortNames: []string{"rs"}, Categories: []string{"all"},
			Namespaced: true, Verbs: AllVerbs, Generation: true,
			ValidateName:  validateDNS1123Subdomain,
			Subresources:  []string{SubresourceStatus, SubresourceScale},
			Default:       defaultReplicaSet,
			PrepareCreate: resetStatus(`{"replicas":0}`),
			Columns:       replicaSetColumns,
			WideColumns:   replicaSetWideColumns,
		},
	}
}

// leasesV1 is coordination.k8s.io/v1's one resource, what leader
// election holds.
func leasesV1() *Resource {
	return &Resource{
		Group: "coordination.k8s.io", Version: "v1", Name: "leases", SingularName: "lease",
		Kind: "Lease", ListKind: "LeaseList",
		Namespaced: true, Verbs: AllVerbs,
		ValidateName:   validateDNS1123Subdomain,
		ValidateFields: validateLease,
		Columns:        leaseColumns,
	}
}

// GroupResource names the resource in error messages ("deployments.apps").
func (r *Resource) GroupResource() api.GroupResource {
	return api.GroupResource{Group: r.Group, Resource: r.Name}
}

// GroupKind names the kind in 422 Invalid messages ("Deployment.apps").
func (r *Resource) GroupKind() api.GroupKind {
	return api.GroupKind{Group: r.Group, Kind: r.Kind}
}

// APIVersion is the value of the apiVersion field ("v1", "apps/v1").
func (r *Resource) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Prefix is the store prefix of every object of the resource, as
// kube-apiserver lays out etcd: /registry/<resource>/.
func (r *Resource) Prefix() string {
	if r.StoragePrefix != "" {
		return r.StoragePrefix
	}
	return "/registry/" + r.Name + "/"
}

// CollectionPrefix is the store prefix of one namespace's objects, or of
// all objects when ns is empty.
func (r *Resource) CollectionPrefix(ns string) string {
	if r.Namespaced && ns != "" {
		return r.Prefix() + ns + "/"
	}
	return r.Prefix()
}

// Key is the store key of one object: /registry/<resource>/[<ns>/]<name>.
func (r *Resource) Key(ns, name string) string {
	if r.Namespaced {
		return r.Prefix() + ns + "/" + name
	}
	return r.Prefix() + name
}

// Allows reports whether the resource serves verb.
func (r *Resource) Allows(verb string) bool { return slices.Contains(r.Verbs, verb) }

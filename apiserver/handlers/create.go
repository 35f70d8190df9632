package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"listwatch/api"
	"listwatch/apiserver/filters"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
	"listwatch/store"
)

// CREATE: POST a new object to its collection. In order, as kube-apiserver
// does it (handlers/create.go, registry/rest/create.go BeforeCreate):
// decode the body (400), check its namespace against the path (400), check
// the namespace exists (404, NamespaceLifecycle admission), generate a name
// from generateName, default, run the kind's mutating admission (a Pod's
// service account, priority and tolerations: admission.go), validate
// (422), store (409 AlreadyExists), and answer 201 Created with the stored
// object.

// maxGenerateNameAttempts bounds retries when a generated name is taken.
const maxGenerateNameAttempts = 8

// errResourceVersionOnCreate is the error for a create body that carries a
// resourceVersion; kube-apiserver's storage answers it with a 500.
var errResourceVersionOnCreate = errors.New("resourceVersion should not be set on objects to be created")

func (h *Handlers) serveCreate(w http.ResponseWriter, r *http.Request, ri RequestInfo) {
	res := ri.Entry.Resource
	obj, err := h.readObject(w, r, res, "CreateOptions")
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if err := matchNamespace(res, obj, ri.Namespace); err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if obj.Metadata.ResourceVersion != "" {
		negotiation.WriteError(w, r, api.NewInternalError(errResourceVersionOnCreate))
		return
	}
	wipeSystemFields(obj)
	if res.Namespaced {
		if err := h.admitToNamespace(r.Context(), res, obj); err != nil {
			negotiation.WriteError(w, r, err)
			return
		}
	}
	created, err := h.create(r, res, obj)
	if err != nil {
		negotiation.WriteError(w, r, err)
		return
	}
	if h.tracer.Enabled() {
		h.tracer.Printf(narrate.HTTP, "CREATE %s %s → rv %s", res.Name, created.Key(), created.Metadata.ResourceVersion)
	}
	negotiation.WriteObject(w, r, http.StatusCreated, negotiation.WithKind(res, created))
}

// create names, prepares, validates and stores obj, retrying with a new
// name when a generated one is already taken.
func (h *Handlers) create(r *http.Request, res *registry.Resource, obj *api.Object) (*api.Object, error) {
	generated := obj.Metadata.Name == "" && obj.Metadata.GenerateName != ""
	for attempt := 1; ; attempt++ {
		next := obj.DeepCopy()
		if generated {
			next.Metadata.Name = registry.GenerateName(next.Metadata.GenerateName)
		}
		if res.Generation {
			next.Metadata.Generation = 1
		}
		if res.Default != nil {
			if err := res.Default(next); err != nil {
				return nil, err
			}
		}
		if res.AdmitCreate != nil {
			if err := res.AdmitCreate(r.Context(), next, h.lookup); err != nil {
				return nil, err
			}
		}
		if err := registry.Validate(res, next); err != nil {
			return nil, err
		}
		if res.PrepareCreate != nil {
			if err := res.PrepareCreate(next); err != nil {
				return nil, err
			}
		}
		created, err := res.Storage(h.store).Create(r.Context(), res.Key(next.Metadata.Namespace, next.Metadata.Name), next)
		switch {
		case errors.Is(err, store.ErrAlreadyExists) && generated && attempt < maxGenerateNameAttempts:
			continue
		case errors.Is(err, store.ErrAlreadyExists):
			return nil, api.NewAlreadyExists(res.GroupResource(), next.Metadata.Name)
		}
		return created, err
	}
}

// readObject reads and decodes a create or update body: JSON, YAML
// (converted to JSON first, as kube-apiserver's YAML serializer does), or
// protobuf for every built-in kind (negotiation/decode.go, yaml.go,
// protobuf.go). A JSON or YAML body is checked against its kind's types
// and pruned (fieldvalidation.go); options is CreateOptions or
// UpdateOptions.
func (h *Handlers) readObject(w http.ResponseWriter, r *http.Request, res *registry.Resource, options string) (*api.Object, error) {
	format, err := negotiation.ObjectBodyFormat(r, res)
	if err != nil {
		return nil, err
	}
	if err := rejectDryRun(r); err != nil {
		return nil, err
	}
	directive, err := fieldValidation(r, options)
	if err != nil {
		return nil, err
	}
	body, err := filters.ReadBody(w, r)
	if err != nil {
		return nil, err
	}
	// Decode once for what the body claims to be (malformed, the wrong
	// kind: 400 before any field is looked at), then conform it.
	var repeated []string
	switch format {
	case negotiation.ProtobufBody:
		return negotiation.DecodeProtobufObject(res, body, h.tracer)
	case negotiation.YAMLBody:
		if body, repeated, err = negotiation.YAMLToJSON(res, body); err != nil {
			return nil, err
		}
	default:
		body = negotiation.EmptyIfNull(body)
		if _, err := negotiation.DecodeObject(res, body); err != nil {
			return nil, err
		}
	}
	if body, err = conformBody(w, res, body, directive, repeated); err != nil {
		return nil, err
	}
	return negotiation.DecodeObject(res, body)
}

// rejectDryRun refuses ?dryRun: the toy has no path that validates without
// writing, and pretending would write for real.
func rejectDryRun(r *http.Request) error {
	if v, ok := r.URL.Query()["dryRun"]; ok {
		return api.NewBadRequest(fmt.Sprintf("dryRun=%v is not supported by this server", v))
	}
	return nil
}

// matchNamespace puts the path's namespace on a namespaced object whose
// body names none, and rejects a body that names another (400, as
// rest.EnsureObjectNamespaceMatchesRequestNamespace). Cluster-scoped
// objects have no namespace.
func matchNamespace(res *registry.Resource, obj *api.Object, ns string) error {
	switch {
	case !res.Namespaced:
		obj.Metadata.Namespace = ""
	case obj.Metadata.Namespace == "":
		obj.Metadata.Namespace = ns
	case obj.Metadata.Namespace != ns:
		return api.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

// systemMetaFields are metadata members a client may not set; the server
// owns them (rest.WipeObjectMetaSystemFields).
var systemMetaFields = []string{"deletionGracePeriodSeconds", "selfLink"}

// wipeSystemFields clears what the server, not the client, sets.
func wipeSystemFields(obj *api.Object) {
	m := &obj.Metadata
	m.UID = ""
	m.CreationTimestamp = time.Time{}
	m.DeletionTimestamp = nil
	kept := m.Extra[:0:0]
	for _, f := range m.Extra {
		if !slices.Contains(systemMetaFields, f.Name) {
			kept = append(kept, f)
		}
	}
	m.Extra = kept
}

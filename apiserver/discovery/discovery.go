package discovery

import (
	"cmp"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
)

// Discovery: before kubectl does anything it asks the server what it
// serves: /version, /api and /apis (the group versions), then
// /api/v1 and /apis/apps/v1 (each version's resources with kind, scope,
// verbs and short names). That is how "kubectl get cm" knows cm means
// configmaps in v1, namespaced. The documents are built once from the
// resource table and shaped like the fixtures (discovery-*.json), including
// their quirks: /api and /api/v1 carry no apiVersion, the others do.
//
// kubectl and client-go first ask /api and /apis for aggregated discovery
// (aggregated.go), all of it in one document each; the legacy documents
// here are what a client asking for plain JSON gets.
// Kubernetes: endpoints/discovery (legacy.go, root.go, group.go, version.go).

// Doc is one pre-encoded discovery document.
type Doc struct {
	body []byte
	// alwaysPretty: /version is indented for every client.
	alwaysPretty bool
	// contentType and etag are set for an aggregated document.
	contentType, etag string
}

// Docs are all the documents the server serves.
type Docs struct {
	Version   *Doc
	API       *Doc
	APIs      *Doc
	Groups    map[string]*Doc // group → APIGroup
	Resources map[string]*Doc // group version → APIResourceList
	// AggregatedAPI and AggregatedAPIs are /api and /apis as one
	// APIGroupDiscoveryList each (aggregated.go).
	AggregatedAPI, AggregatedAPIs *Doc
}

// Root is the document of /api (core) or /apis: aggregated if the
// request asks for it, else the legacy one.
func (d *Docs) Root(r *http.Request, core bool) *Doc {
	switch agg := WantsAggregated(r); {
	case core && agg:
		return d.AggregatedAPI
	case core:
		return d.API
	case agg:
		return d.AggregatedAPIs
	}
	return d.APIs
}

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string                     `json:"kind,omitempty"`
	APIVersion       string                     `json:"apiVersion,omitempty"`
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Namespaced   bool     `json:"namespaced"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
	// StorageVersionHash names the group, version and kind the resource
	// is stored as (storageVersionHash below); subresources have none.
	StorageVersionHash string `json:"storageVersionHash,omitempty"`
}

// storageVersionHash is kube-apiserver's: the first 8 bytes of the
// SHA-256 of "group/version/kind", in base64 (k8s.io/apiserver
// pkg/endpoints/discovery/storageversionhash.go, StorageVersionHash).
// Clients that migrate stored objects compare it across restarts.
// events.k8s.io Events are stored as core v1 Events, one collection
// under two names (k8s.io/kubernetes pkg/kubeapiserver/
// default_storage_factory_builder.go, AddCohabitatingResources), so their
// hash is that of v1 Event. Ours keeps two collections (registry/
// eventsv1.go says why) but names the same storage version.
func storageVersionHash(group, version, kind string) string {
	if group == "events.k8s.io" && kind == "Event" {
		group, version = "", "v1"
	}
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type serverAddress struct {
	ClientCIDR    string `json:"clientCIDR"`
	ServerAddress string `json:"serverAddress"`
}

type apiVersions struct {
	Kind                       string          `json:"kind"`
	Versions                   []string        `json:"versions"`
	ServerAddressByClientCIDRs []serverAddress `json:"serverAddressByClientCIDRs"`
}

type apiGroupList struct {
	Kind       string     `json:"kind"`
	APIVersion string     `json:"apiVersion"`
	Groups     []apiGroup `json:"groups"`
}

// versionInfo is /version: what `kubectl version` prints. We claim the
// Kubernetes release whose wire behaviour the server follows, 1.37.2, so
// kubectl does not warn about version skew, and say what we are in
// gitVersion's build metadata. The emulation and minimum-compatibility
// versions are the ones kube-apiserver 1.37.2 reports by default (its
// binary version, and the minor before it): version.Info in
// k8s.io/apimachinery/pkg/version/types.go, the answer in
// docs/reference.md.
type versionInfo struct {
	Major                 string `json:"major"`
	Minor                 string `json:"minor"`
	EmulationMajor        string `json:"emulationMajor"`
	EmulationMinor        string `json:"emulationMinor"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
}

// Build encodes every discovery document for the resources served at
// address (host:port, shown in /api's serverAddressByClientCIDRs).
func Build(resources []*registry.Entry, address string, started time.Time) *Docs {
	d := &Docs{Groups: map[string]*Doc{}, Resources: map[string]*Doc{}}
	d.Version = &Doc{alwaysPretty: true, body: negotiation.MustJSON(versionInfo{
		Major: "1", Minor: "37", EmulationMajor: "1", EmulationMinor: "37",
		MinCompatibilityMajor: "1", MinCompatibilityMinor: "36",
		GitVersion: "v1.37.2+listwatch", GitCommit: "listwatch", GitTreeState: "clean",
		BuildDate: started.UTC().Format(time.RFC3339), GoVersion: runtime.Version(), Compiler: runtime.Compiler,
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	})}
	d.API = &Doc{body: negotiation.MustJSON(apiVersions{Kind: "APIVersions", Versions: []string{"v1"},
		ServerAddressByClientCIDRs: []serverAddress{{ClientCIDR: "0.0.0.0/0", ServerAddress: address}}})}

	byGV := map[string][]apiResource{}
	var groups []string
	for _, rs := range resources {
		res := rs.Resource
		gv := res.APIVersion()
		byGV[gv] = append(byGV[gv], apiResource{Name: res.Name, SingularName: res.SingularName,
			Namespaced: res.Namespaced, Kind: res.Kind, Verbs: res.Verbs,
			ShortNames: res.ShortNames, Categories: res.Categories,
			StorageVersionHash: storageVersionHash(res.Group, cmp.Or(res.StorageVersion, res.Version), res.Kind)})
		byGV[gv] = append(byGV[gv], subresources(res)...)
		if res.Group != "" && !slices.Contains(groups, res.Group) {
			groups = append(groups, res.Group)
		}
	}
	for gv, list := range byGV {
		slices.SortFunc(list, func(a, b apiResource) int { return strings.Compare(a.Name, b.Name) })
		doc := apiResourceList{Kind: "APIResourceList", GroupVersion: gv, Resources: list}
		if gv != "v1" {
			doc.APIVersion = "v1"
		}
		d.Resources[gv] = &Doc{body: negotiation.MustJSON(doc)}
	}
	slices.SortStableFunc(groups, func(a, b string) int { return int(groupPriority(b) - groupPriority(a)) })
	list := apiGroupList{Kind: "APIGroupList", APIVersion: "v1", Groups: []apiGroup{}}
	for _, g := range groups {
		var versions []groupVersionForDiscovery
		for _, rs := range resources {
			gvd := groupVersionForDiscovery{GroupVersion: rs.APIVersion(), Version: rs.Version}
			if rs.Group == g && !slices.Contains(versions, gvd) {
				versions = append(versions, gvd)
			}
		}
		slices.SortStableFunc(versions, func(a, b groupVersionForDiscovery) int { return compareVersions(b.Version, a.Version) })
		group := apiGroup{Name: g, Versions: versions, PreferredVersion: versions[0]}
		list.Groups = append(list.Groups, group)
		group.Kind, group.APIVersion = "APIGroup", "v1"
		d.Groups[g] = &Doc{body: negotiation.MustJSON(group)}
	}
	d.APIs = &Doc{body: negotiation.MustJSON(list)}
	d.AggregatedAPI, d.AggregatedAPIs = buildAggregated(resources, groups)
	return d
}

// ServeHTTP writes the document (GET only). An aggregated document carries
// its ETag, and a request that already has it gets 304 Not Modified with
// no body (aggregated/etag.go, ServeHTTPWithETag).
func (doc *Doc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		negotiation.WriteStatus(w, r, api.NewMethodNotSupported())
		return
	}
	if doc.etag != "" {
		h := w.Header()
		h.Set("Etag", doc.etag)
		h.Set("Vary", "Accept")
		h.Set("Cache-Control", "public")
		if r.Header.Get("If-None-Match") == doc.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	pretty := doc.alwaysPretty || negotiation.IsPretty(r)
	if doc.contentType == "" {
		negotiation.WriteBody(w, http.StatusOK, append([]byte(nil), doc.body...), pretty)
		return
	}
	negotiation.WriteBodyAs(w, http.StatusOK, doc.contentType, append([]byte(nil), doc.body...), pretty)
}

// groupPriority orders the groups of /apis as kube-apiserver does, highest
// first: the priorities of apiVersionPriorities in
// cmd/kube-apiserver/app/aggregator.go and DefaultGenericAPIServicePriorities
// in pkg/controlplane/apiserver/aggregator.go. A custom resource's group has
// the priority a CRD's APIService gets (1000, pkg/controlplane/controller/crdregistration),
// after every built-in group; groups of equal priority keep their order.
func groupPriority(group string) int32 {
	switch group {
	case "apps":
		return 17800
	case "events.k8s.io":
		return 17750
	case "batch":
		return 17400
	case "apiextensions.k8s.io":
		return 16700
	case "coordination.k8s.io":
		return 16500
	}
	return 1000
}

package discovery

import (
	"crypto/sha512"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"listwatch/apiserver/negotiation"
	"listwatch/apiserver/registry"
)

// Aggregated discovery: every group, version and resource in one document,
// so a client learns the whole API in two requests (/api and /apis)
// instead of one per group version. kubectl and client-go's discovery ask
// for it first, with an Accept header naming the type
// (application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,
// then plain application/json to fall back on); controller-runtime's
// RESTMapper reads the same document. It is served with an ETag, and a
// request whose If-None-Match carries it gets 304 with no body, so a
// client's cached copy costs nothing until a CustomResourceDefinition
// changes what is served (discovery-apis-aggregated-v2-304.json).
// Kubernetes: endpoints/discovery/aggregated (handler.go, etag.go,
// wrapper.go) and k8s.io/api/apidiscovery/v2.

// AggregatedContentType is the Content-Type of an aggregated document.
const AggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type subresourceDiscovery struct {
	Subresource  string           `json:"subresource"`
	ResponseKind groupVersionKind `json:"responseKind"`
	Verbs        []string         `json:"verbs"`
}

type resourceDiscovery struct {
	Resource         string                 `json:"resource"`
	ResponseKind     groupVersionKind       `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []subresourceDiscovery `json:"subresources,omitempty"`
}

type versionDiscovery struct {
	Version   string              `json:"version"`
	Resources []resourceDiscovery `json:"resources"`
	// Freshness is "Current" for everything an apiserver serves itself
	// (a stale aggregated APIService would be "Stale").
	Freshness string `json:"freshness"`
}

// discoveryMeta is an item's metadata: the group's name, none for the
// core group. (kube-apiserver 1.37 writes no creationTimestamp here;
// 1.32 wrote "creationTimestamp":null.)
type discoveryMeta struct {
	Name string `json:"name,omitempty"`
}

type groupDiscovery struct {
	Metadata discoveryMeta      `json:"metadata"`
	Versions []versionDiscovery `json:"versions"`
}

type groupDiscoveryList struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Metadata   struct{}         `json:"metadata"`
	Items      []groupDiscovery `json:"items"`
}

// resourceEntry is one resource's entry: built-in kinds answer with their
// own group version, so responseKind leaves both empty; a custom
// resource's names them (crd-discovery-apis-aggregated-v2.json).
func resourceEntry(res *registry.Resource, custom bool) resourceDiscovery {
	own := groupVersionKind{Kind: res.Kind}
	if custom {
		own.Group, own.Version = res.Group, res.Version
	}
	e := resourceDiscovery{Resource: res.Name, ResponseKind: own, Scope: "Cluster",
		SingularResource: res.SingularName, Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories}
	if res.Namespaced {
		e.Scope = "Namespaced"
	}
	for _, sub := range res.Subresources {
		kind := own
		if sub == registry.SubresourceScale {
			kind = groupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
		}
		e.Subresources = append(e.Subresources, subresourceDiscovery{Subresource: sub, ResponseKind: kind,
			Verbs: subresourceVerbs(sub)})
	}
	slices.SortFunc(e.Subresources, func(a, b subresourceDiscovery) int { return strings.Compare(a.Subresource, b.Subresource) })
	return e
}

// buildAggregated returns the aggregated documents of /api (the core
// group) and /apis (every other group, in the order of /apis' legacy
// document).
func buildAggregated(resources []*registry.Entry, groups []string) (core, named *Doc) {
	byGroup := map[string]*groupDiscovery{}
	for _, e := range resources {
		res := e.Resource
		g := byGroup[res.Group]
		if g == nil {
			g = &groupDiscovery{Metadata: discoveryMeta{Name: res.Group}}
			byGroup[res.Group] = g
		}
		i := slices.IndexFunc(g.Versions, func(v versionDiscovery) bool { return v.Version == res.Version })
		if i < 0 {
			g.Versions = append(g.Versions, versionDiscovery{Version: res.Version, Freshness: "Current"})
			i = len(g.Versions) - 1
		}
		g.Versions[i].Resources = append(g.Versions[i].Resources, resourceEntry(res, res.IsCustom()))
	}
	list := func(names []string) *Doc {
		doc := groupDiscoveryList{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []groupDiscovery{}}
		for _, name := range names {
			g := byGroup[name]
			if g == nil {
				continue
			}
			slices.SortStableFunc(g.Versions, func(a, b versionDiscovery) int { return compareVersions(b.Version, a.Version) })
			for _, v := range g.Versions {
				slices.SortFunc(v.Resources, func(a, b resourceDiscovery) int { return strings.Compare(a.Resource, b.Resource) })
			}
			doc.Items = append(doc.Items, *g)
		}
		body := negotiation.MustJSON(doc)
		return &Doc{body: body, contentType: AggregatedContentType, etag: fmt.Sprintf("%q", fmt.Sprintf("%X", sha512.Sum512(body)))}
	}
	return list([]string{""}), list(groups)
}

// WantsAggregated reports whether r asks for the aggregated document:
// the first range of its Accept header that the server can write decides
// (wrapper.go, WrappedHandler.ServeHTTP). A range for the aggregated type
// in protobuf, or for the v2beta1 type kube-apiserver 1.37 no longer
// serves, is passed over.
func WantsAggregated(r *http.Request) bool {
	for part := range strings.SplitSeq(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		if mt != "application/json" && mt != "application/*" && mt != "*/*" {
			if mt == negotiation.ProtobufContentType && params["as"] == "" {
				return false
			}
			continue
		}
		switch {
		case params["as"] == "":
			return false
		case params["as"] == "APIGroupDiscoveryList" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2":
			return true
		}
	}
	return false
}

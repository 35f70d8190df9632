package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"listwatch/api"
)

// APIResource is one resource a server serves, as its discovery document
// lists it (meta/v1 APIResource, with its group and version).
type APIResource struct {
	GVR        api.GroupVersionResource
	Kind       string
	Namespaced bool
	Verbs      []string
}

// Allows reports whether the resource serves verb ("list", "delete", ...).
func (r APIResource) Allows(verb string) bool { return slices.Contains(r.Verbs, verb) }

// ServerPreferredResources lists every resource the server serves, in each
// group's preferred version, subresources left out: what client-go's
// discovery client ServerPreferredResources returns, read from the
// unaggregated documents (/api, /api/v1, /apis, /apis/{group}/{version}).
// The namespace controller uses it to find everything a namespace may hold.
func (c *Client) ServerPreferredResources(ctx context.Context) ([]APIResource, error) {
	var core struct {
		Versions []string `json:"versions"`
	}
	if err := c.getJSON(ctx, "/api", &core); err != nil {
		return nil, err
	}
	var groups struct {
		Groups []struct {
			Name             string `json:"name"`
			PreferredVersion struct {
				Version string `json:"version"`
			} `json:"preferredVersion"`
		} `json:"groups"`
	}
	if err := c.getJSON(ctx, "/apis", &groups); err != nil {
		return nil, err
	}
	gvs := []api.GroupVersionResource{{Version: "v1"}} // the core group's one version
	if !slices.Contains(core.Versions, "v1") {
		gvs = nil
	}
	for _, g := range groups.Groups {
		gvs = append(gvs, api.GroupVersionResource{Group: g.Name, Version: g.PreferredVersion.Version})
	}
	var out []APIResource
	for _, gv := range gvs {
		rs, err := c.resourcesOf(ctx, gv)
		if err != nil {
			return nil, err
		}
		out = append(out, rs...)
	}
	return out, nil
}

// resourcesOf reads one group-version's APIResourceList.
func (c *Client) resourcesOf(ctx context.Context, gv api.GroupVersionResource) ([]APIResource, error) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	var list struct {
		Resources []struct {
			Name       string   `json:"name"`
			Kind       string   `json:"kind"`
			Namespaced bool     `json:"namespaced"`
			Verbs      []string `json:"verbs"`
		} `json:"resources"`
	}
	if err := c.getJSON(ctx, path, &list); err != nil {
		return nil, err
	}
	var out []APIResource
	for _, r := range list.Resources {
		if strings.Contains(r.Name, "/") {
			continue // a subresource
		}
		out = append(out, APIResource{GVR: api.GroupVersionResource{Group: gv.Group, Version: gv.Version, Resource: r.Name},
			Kind: r.Kind, Namespaced: r.Namespaced, Verbs: r.Verbs})
	}
	return out, nil
}

// getJSON GETs a discovery document and decodes it into out.
func (c *Client) getJSON(ctx context.Context, path string, out any) error {
	body, err := c.do(ctx, &request{method: http.MethodGet, path: path})
	if err != nil {
		return fmt.Errorf("client: discovery %s: %w", path, err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("client: discovery %s: %w", path, err)
	}
	return nil
}

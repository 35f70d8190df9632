package discovery

import "listwatch/apiserver/registry"

// subresources are the discovery entries of a resource's subresources, as
// the real server lists them right after the resource
// (discovery-apis-apps-v1.json, discovery-api-v1.json): no singular name,
// the verbs get, patch and update (a namespace's finalize: update only);
// status answers with the resource's own kind, scale with an
// autoscaling/v1 Scale.
func subresources(res *registry.Resource) []apiResource {
	var out []apiResource
	for _, sub := range res.Subresources {
		e := apiResource{Name: res.Name + "/" + sub, Namespaced: res.Namespaced, Kind: res.Kind,
			Verbs: subresourceVerbs(sub)}
		if sub == registry.SubresourceScale {
			e.Group, e.Version, e.Kind = "autoscaling", "v1", "Scale"
		}
		out = append(out, e)
	}
	return out
}

// subresourceVerbs are a subresource's verbs: get, patch and update, but
// update only for a namespace's finalize.
func subresourceVerbs(sub string) []string {
	if sub == registry.SubresourceFinalize {
		return []string{registry.VerbUpdate}
	}
	return []string{registry.VerbGet, registry.VerbPatch, registry.VerbUpdate}
}

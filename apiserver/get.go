package apiserver

import (
	"errors"
	"net/http"
	"time"

	"listwatch/api"
	"listwatch/narrate"
	"listwatch/store"
)

// GET of one object: always the store's current state (Kubernetes may serve
// resourceVersion=0 gets from its watch cache; the answer is the same
// object either way). A missing object is 404 NotFound naming the resource
// (error-404-get-notfound.json). Kubernetes: handlers/get.go GetResource.

func (s *Server) serveGet(w http.ResponseWriter, r *http.Request, ri requestInfo, out output) {
	if rv := r.URL.Query().Get("resourceVersion"); rv != "" {
		if _, err := parseResourceVersion(rv); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	res := ri.rs.res
	obj, err := s.store.Get(r.Context(), res.Key(ri.namespace, ri.name))
	if errors.Is(err, store.ErrNotFound) {
		err = api.NewNotFound(res.GroupResource(), ri.name)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.tracer.Enabled() {
		s.tracer.Printf(narrate.HTTP, "GET %s %s rv=%s", res.Name, obj.Key(), obj.Metadata.ResourceVersion)
	}
	if out.table != "" {
		meta := api.ListMeta{ResourceVersion: obj.Metadata.ResourceVersion}
		writeJSON(w, r, http.StatusOK, res.toTable([]*api.Object{obj}, meta, out.table, time.Now()))
		return
	}
	writeObject(w, r, http.StatusOK, withKind(res, obj))
}

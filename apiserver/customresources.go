package apiserver

import (
	"context"
	"fmt"
	"slices"
	"time"

	"listwatch/api"
	"listwatch/apiserver/crd"
	"listwatch/apiserver/discovery"
	"listwatch/apiserver/registry"
	"listwatch/narrate"
	"listwatch/store"
)

// Custom resources: package crd follows the CustomResourceDefinitions in
// the store and calls Install, Update and Uninstall below, which change
// what the registry serves and republish discovery.

// published is one consistent set of discovery and OpenAPI documents.
type published struct {
	docs    *discovery.Docs
	openAPI discovery.OpenAPI
	// index is GET /'s body (index.go).
	index []byte
}

// publish rebuilds discovery from the registry as it is now.
func (s *Server) publish() { s.publishEntries(s.registry.Entries()) }

// publishEntries rebuilds discovery for these resources. Install and
// Uninstall publish before they change the routes, so a resource is never
// served without being listed (a client that found it answering would
// find it missing from discovery while the documents, which take a while
// to build, were not yet rebuilt). For that moment discovery lists a
// resource that is not served yet, or no longer: a client that reads
// discovery just before a definition changes gets a 404 either way.
func (s *Server) publishEntries(entries []*registry.Entry) {
	s.published.Store(&published{
		docs:    discovery.Build(entries, s.listener.Addr().String(), s.started),
		openAPI: discovery.BuildOpenAPI(entries),
		index:   indexBody(rootPaths(entries, s.cfg.EnableFaults)),
	})
}

// isBuiltin reports whether gr is one of the built-in resources, which a
// definition may not shadow.
func isBuiltin(gr api.GroupResource) bool {
	return slices.ContainsFunc(registry.Builtin(), func(r *registry.Resource) bool { return r.GroupResource() == gr })
}

// startCRDs serves the definitions already stored, then follows them: by
// the time the server has started, its watch of them is open.
func (s *Server) startCRDs(ctx context.Context) error {
	s.crds = crd.NewController(s.store, s, s.tracer)
	from, err := s.crds.Sync(ctx)
	if err != nil {
		return fmt.Errorf("apiserver: listing customresourcedefinitions: %w", err)
	}
	ctx, s.crdsCancel = context.WithCancel(s.ctx)
	if err := s.crds.Open(ctx, from); err != nil && s.tracer.Enabled() {
		s.tracer.Printf(narrate.HTTP, "crd: watching definitions: %v (Run tries again)", err)
	}
	s.crdsRun.Go(func() { s.crds.Run(ctx, from) })
	return nil
}

// stopCRDs ends the definitions' controller, so that nothing is installed
// after Stop has stopped the watch caches.
func (s *Server) stopCRDs() {
	s.crdMu.Lock()
	s.crdsStopped = true
	s.crdMu.Unlock()
	if s.crdsCancel != nil {
		s.crdsCancel()
	}
	s.crdsRun.Wait()
}

var _ crd.Host = (*Server)(nil)

// Install serves a custom resource in each of its versions: a watch cache
// each, then routes and discovery.
func (s *Server) Install(_ context.Context, versions []*registry.Resource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.crdsStopped {
		return fmt.Errorf("apiserver: stopping")
	}
	entries, err := s.newEntries(versions)
	if err != nil {
		return err
	}
	s.publishEntries(append(s.registry.Entries(), entries...)) // listed, then served: see publishEntries
	if err := s.registry.Add(entries...); err != nil {
		stopCaches(entries)
		s.publish()
		return err
	}
	return nil
}

// newEntries starts a watch cache for each version.
func (s *Server) newEntries(versions []*registry.Resource) ([]*registry.Entry, error) {
	entries := make([]*registry.Entry, 0, len(versions))
	for _, res := range versions {
		c, err := s.newCacher(res)
		if err != nil {
			stopCaches(entries)
			return nil, err
		}
		entries = append(entries, &registry.Entry{Resource: res, Cacher: c})
	}
	return entries, nil
}

// stopCaches stops the watch caches of entries, which ends their watches.
func stopCaches(entries []*registry.Entry) {
	for _, e := range entries {
		e.Cacher.Stop()
	}
}

// Update serves a custom resource anew, in the versions given (its
// definition's spec changed): each version gets a new watch cache, the
// old ones stop. kube-apiserver does the same: any change to a
// definition's spec makes the crdHandler drop its storage and build a new
// one, with new watch caches, on the next request
// (customresource_handler.go, updateCustomResourceDefinition and
// removeStorage_locked). Its tearDown lets requests in flight on the old
// storage finish first, waiting at most twice the request timeout before
// it destroys the old storage and so ends its watches; ours ends them at
// once, and their clients watch again from the new caches.
func (s *Server) Update(_ context.Context, versions []*registry.Resource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.crdsStopped {
		return fmt.Errorf("apiserver: stopping")
	}
	entries, err := s.newEntries(versions)
	if err != nil {
		return err
	}
	gr := versions[0].GroupResource()
	s.publishEntries(append(slices.DeleteFunc(s.registry.Entries(), func(e *registry.Entry) bool { return e.GroupResource() == gr }), entries...))
	old, err := s.registry.Replace(entries...)
	if err != nil {
		stopCaches(entries)
		s.publish()
		return err
	}
	stopCaches(old)
	return nil
}

// uninstallTimeout bounds deleting a custom resource's objects and
// flushing their DELETED events to open watches.
const uninstallTimeout = 30 * time.Second

// Uninstall stops serving a custom resource: it disappears from routes and
// discovery at once (later requests get 404), then its objects are deleted
// one by one, so open watches of every version see one DELETED each, and
// once the watch caches have passed those on, they stop and the watches
// end. If deleting fails, the resource stays unserved and the next
// Uninstall of it deletes what is left: the definitions' controller tries
// again, as kube-apiserver's customresourcecleanup finalizer does
// (crd.Controller.remove).
func (s *Server) Uninstall(ctx context.Context, gr api.GroupResource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, uninstallTimeout)
	defer cancel()
	if res, ok := s.undeleted[gr]; ok {
		if _, err := s.deleteAll(ctx, res); err != nil {
			return err
		}
		delete(s.undeleted, gr)
		return nil
	}
	s.publishEntries(slices.DeleteFunc(s.registry.Entries(), func(e *registry.Entry) bool { return e.GroupResource() == gr }))
	entries := s.registry.Remove(gr)
	if len(entries) == 0 {
		return nil
	}
	defer stopCaches(entries)
	deleted, err := s.deleteAll(ctx, entries[0].Resource)
	if err != nil {
		if s.undeleted == nil {
			s.undeleted = map[api.GroupResource]*registry.Resource{}
		}
		s.undeleted[gr] = entries[0].Resource
		return err
	}
	if deleted == 0 {
		return nil
	}
	// Every deletion is at or below the current revision.
	last, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := e.Cacher.Drain(ctx, last); err != nil {
			return err
		}
	}
	return nil
}

// deleteAll deletes every object of res from the store, one by one, and
// says how many it deleted.
func (s *Server) deleteAll(ctx context.Context, res *registry.Resource) (int, error) {
	deleted := 0
	for {
		page, err := s.store.List(ctx, res.Prefix(), store.ListOptions{Limit: 500})
		if err != nil {
			return deleted, err
		}
		for _, obj := range page.Items {
			key := res.Key(obj.Metadata.Namespace, obj.Metadata.Name)
			if _, err := s.store.Delete(ctx, key, store.Preconditions{}); err == nil {
				deleted++
			} // else deleted meanwhile
		}
		if page.NextKey == "" {
			return deleted, nil
		}
	}
}

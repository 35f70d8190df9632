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

// startCRDs serves the definitions already stored, then follows them.
func (s *Server) startCRDs(ctx context.Context) error {
	s.crds = crd.NewController(s.store, s, s.tracer)
	from, err := s.crds.Sync(ctx)
	if err != nil {
		return fmt.Errorf("apiserver: listing customresourcedefinitions: %w", err)
	}
	ctx, s.crdsCancel = context.WithCancel(s.ctx)
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

// Install serves a custom resource: its watch cache, then routes and
// discovery.
func (s *Server) Install(_ context.Context, res *registry.Resource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if s.crdsStopped {
		return fmt.Errorf("apiserver: stopping")
	}
	c, err := s.newCacher(res)
	if err != nil {
		return err
	}
	entry := &registry.Entry{Resource: res, Cacher: c}
	s.publishEntries(append(s.registry.Entries(), entry)) // listed, then served: see publishEntries
	if err := s.registry.Add(entry); err != nil {
		c.Stop()
		s.publish()
		return err
	}
	return nil
}

// Update swaps how a custom resource is served (schema, columns), keeping
// its watch cache.
func (s *Server) Update(_ context.Context, res *registry.Resource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	if err := s.registry.Replace(res); err != nil {
		return err
	}
	s.publish()
	return nil
}

// uninstallTimeout bounds deleting a custom resource's objects and
// flushing their DELETED events to open watches.
const uninstallTimeout = 30 * time.Second

// Uninstall stops serving a custom resource: it disappears from routes and
// discovery at once (later requests get 404), then its objects are deleted
// one by one, so open watches see one DELETED each, and once the watch
// cache has passed those on, it stops and the watches end.
func (s *Server) Uninstall(ctx context.Context, gr api.GroupResource) error {
	s.crdMu.Lock()
	defer s.crdMu.Unlock()
	s.publishEntries(slices.DeleteFunc(s.registry.Entries(), func(e *registry.Entry) bool { return e.GroupResource() == gr }))
	e := s.registry.Remove(gr)
	if e == nil {
		return nil
	}
	defer e.Cacher.Stop()
	ctx, cancel := context.WithTimeout(ctx, uninstallTimeout)
	defer cancel()
	deleted := 0
	for {
		page, err := s.store.List(ctx, e.Prefix(), store.ListOptions{Limit: 500})
		if err != nil {
			return err
		}
		for _, obj := range page.Items {
			key := e.Key(obj.Metadata.Namespace, obj.Metadata.Name)
			if _, err := s.store.Delete(ctx, key, store.Preconditions{}); err == nil {
				deleted++
			} // else deleted meanwhile
		}
		if page.NextKey == "" {
			break
		}
	}
	if deleted == 0 {
		return nil
	}
	// Every deletion is at or below the current revision.
	last, err := s.store.CurrentRevision(ctx)
	if err != nil {
		return err
	}
	return e.Cacher.Drain(ctx, last)
}

package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// The health endpoints, /healthz, /livez and /readyz, answer as
// kube-apiserver's do (k8s.io/apiserver/pkg/server/healthz/healthz.go,
// handleRootHealth): "ok" when every check passes, the list of checks with
// ?verbose, a check named by ?exclude= reported but not run, and each
// check alone under its own path (/readyz/etcd). A failing check makes
// the answer 500 with "[-]<check> failed: reason withheld".
//
// Kubernetes registers a check per part of the server that must be up:
// etcd, the informers, and every post-start hook (a goroutine started once
// the server listens, from the bootstrap of RBAC roles to the CRD informer
// being synced). Ours has the same three endpoints and lists the same
// check names, in kube-apiserver v1.37.2's order, as a real server
// answers (clients and Kubernetes' own e2e tests read the names): what
// ours checks for real is "etcd" (the store answers a consistent read of
// its revision) and "shutdown" (a stopping server already refuses every
// request with 503 before it gets here). Every other name is a start-up
// step of kube-apiserver's that ours either does before it listens (its
// watch caches, CRD registry and namespaces are ready when Start returns)
// or does not have (aggregated API servers, priority and fairness,
// identity leases): nothing to wait for, so they report ok.

// healthEndpoint is one of /healthz, /livez and /readyz.
type healthEndpoint struct {
	name   string // "healthz", "livez", "readyz"
	checks []string
}

// kubeAPIServerLivezChecks are the checks of /healthz and /livez, as
// kube-apiserver v1.37.2 lists them (GET /livez?verbose on the reference).
func kubeAPIServerLivezChecks() []string {
	return append([]string{"ping", "log", "loopback-serving-certificate", "etcd"}, postStartHooks()...)
}

// kubeAPIServerReadyzChecks are the checks of /readyz: the same, with
// etcd-readiness and informer-sync after etcd and shutdown last.
func kubeAPIServerReadyzChecks() []string {
	return slices.Concat([]string{"ping", "log", "etcd", "etcd-readiness", "informer-sync"}, postStartHooks(), []string{"shutdown"})
}

// postStartHooks are kube-apiserver v1.37.2's post-start hooks, in the
// order its health checks list them.
func postStartHooks() []string {
	hooks := []string{
		"start-apiserver-admission-initializer", "generic-apiserver-start-informers",
		"priority-and-fairness-config-consumer", "priority-and-fairness-filter",
		"storage-object-count-tracker-hook", "start-apiextensions-informers",
		"start-apiextensions-controllers", "crd-informer-synced",
		"start-system-namespaces-controller", "peer-endpoint-reconciler-controller",
		"start-cluster-authentication-info-controller", "start-kube-apiserver-identity-lease-controller",
		"start-kube-apiserver-identity-lease-garbage-collector", "storage-readiness",
		"start-legacy-token-tracking-controller", "start-service-ip-repair-controllers",
		"scheduling/bootstrap-system-priority-classes", "priority-and-fairness-config-producer",
		"bootstrap-controller", "start-kubernetes-service-cidr-controller",
		"start-kube-aggregator-informers", "apiservice-status-local-available-controller",
		"apiservice-status-remote-available-controller", "apiservice-registration-controller",
		"apiservice-discovery-controller", "kube-apiserver-autoregistration",
	}
	var names []string
	for _, h := range hooks {
		names = append(names, "poststarthook/"+h)
	}
	// autoregister-completion is a check of its own between two hooks.
	return append(names, "autoregister-completion",
		"poststarthook/apiservice-openapi-controller", "poststarthook/apiservice-openapiv3-controller")
}

// healthEndpointOf says which endpoint path is under, and the rest of the
// path: "" for the endpoint itself, "/etcd" for one check. Every request
// passes through it on its way to a route, so it builds an endpoint's list
// of checks only for a health path.
func healthEndpointOf(path string) (healthEndpoint, string, bool) {
	for _, name := range [...]string{"healthz", "livez", "readyz"} {
		rest, ok := strings.CutPrefix(path, "/"+name)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			continue
		}
		checks := kubeAPIServerLivezChecks()
		if name == "readyz" {
			checks = kubeAPIServerReadyzChecks()
		}
		return healthEndpoint{name, checks}, rest, true
	}
	return healthEndpoint{}, "", false
}

// isHealthPath says whether path is a health endpoint or one of its checks.
func isHealthPath(path string) bool {
	_, _, ok := healthEndpointOf(path)
	return ok
}

// serveHealth answers one health endpoint or one of its checks.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, e healthEndpoint, rest string) {
	if rest != "" {
		only := rest[1:]
		if !slices.Contains(e.checks, only) {
			http.NotFound(w, r)
			return
		}
		if err := s.healthCheck(r, only); err != nil {
			http.Error(w, "internal server error: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
		return
	}
	excluded := r.URL.Query()["exclude"]
	var out strings.Builder
	failed := false
	for _, name := range e.checks {
		switch {
		case slices.Contains(excluded, name):
			fmt.Fprintf(&out, "[+]%s excluded: ok\n", name)
		case s.healthCheck(r, name) != nil:
			fmt.Fprintf(&out, "[-]%s failed: reason withheld\n", name)
			failed = true
		default:
			fmt.Fprintf(&out, "[+]%s ok\n", name)
		}
	}
	if unknown := unknownChecks(excluded, e.checks); len(unknown) > 0 {
		fmt.Fprintf(&out, "warn: some health checks cannot be excluded: no matches for %s\n", strings.Join(unknown, ","))
	}
	if failed {
		http.Error(w, out.String()+e.name+" check failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if _, verbose := r.URL.Query()["verbose"]; !verbose {
		_, _ = w.Write([]byte("ok"))
		return
	}
	_, _ = w.Write([]byte(out.String() + e.name + " check passed\n"))
}

// healthCheck runs one check: the store for etcd, nothing for the others
// (see the top of this file).
func (s *Server) healthCheck(r *http.Request, name string) error {
	if name != "etcd" && name != "etcd-readiness" {
		return nil
	}
	_, err := s.store.CurrentRevision(r.Context())
	return err
}

// unknownChecks are the excluded names that are no check, quoted and
// sorted as kube-apiserver's formatQuoted writes them.
func unknownChecks(excluded, checks []string) []string {
	var unknown []string
	for _, x := range excluded {
		if !slices.Contains(checks, x) && !slices.Contains(unknown, strconv.Quote(x)) {
			unknown = append(unknown, strconv.Quote(x))
		}
	}
	slices.Sort(unknown)
	return unknown
}

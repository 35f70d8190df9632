package target

import (
	"context"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
)

// Target is the apiserver a program talks to, and a client for it.
type Target struct {
	// URL is the server's address.
	URL string
	// Namespace is where the program works.
	Namespace string
	// Client talks to URL.
	Client *client.Client
	// Local is the in-process server, or nil when the server is shared.
	Local *apiserver.Server

	faults Faults
	stop   func()
}

// Namespaces is the resource Open creates a missing namespace in.
var Namespaces = api.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// Open starts an apiserver in-process with local (on a free loopback port
// unless local.Listen says otherwise) when f names no server, or points at
// f.Server. ccfg's Host and BearerToken are filled in. The namespace is
// created if it does not exist, as `kubectl create namespace` would. Call
// Close before exiting: it ends the local server's watches cleanly.
func Open(ctx context.Context, f Flags, local apiserver.Config, ccfg client.Config) (*Target, error) {
	t := &Target{URL: f.Server, Namespace: f.Namespace, stop: func() {}}
	if t.Namespace == "" {
		t.Namespace = DefaultNamespace
	}
	if f.Shared() {
		t.faults = httpFaults{url: f.Server, token: f.Token}
	} else {
		if local.Listen == "" {
			local.Listen = "127.0.0.1:0"
		}
		srv, err := apiserver.Start(ctx, local)
		if err != nil {
			return nil, err
		}
		t.Local, t.URL, t.faults = srv, srv.URL(), localFaults{srv}
		t.stop = func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = srv.Stop(ctx)
		}
	}
	ccfg.Host, ccfg.BearerToken = t.URL, f.Token
	c, err := client.New(ccfg)
	if err != nil {
		t.Close()
		return nil, err
	}
	t.Client = c
	if err := t.ensureNamespace(ctx); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// ensureNamespace creates t.Namespace unless it exists.
func (t *Target) ensureNamespace(ctx context.Context) error {
	ns := t.Client.Resource(Namespaces)
	if _, err := ns.Get(ctx, t.Namespace); err == nil {
		return nil
	} else if !client.IsNotFound(err) {
		return fmt.Errorf("target: the namespace %s on %s: %w", t.Namespace, t.URL, err)
	}
	obj := &api.Object{APIVersion: "v1", Kind: "Namespace", Metadata: api.ObjectMeta{Name: t.Namespace}}
	if _, err := ns.Create(ctx, obj); err != nil && !client.IsAlreadyExists(err) {
		return fmt.Errorf("target: creating the namespace %s on %s: %w", t.Namespace, t.URL, err)
	}
	return nil
}

// Shared reports whether the server is someone else's.
func (t *Target) Shared() bool { return t.Local == nil }

// Resource is a client for gvr in the target's namespace.
func (t *Target) Resource(gvr api.GroupVersionResource) *client.ResourceClient {
	return t.Client.Resource(gvr).Namespace(t.Namespace)
}

// Faults are the server's workshop fault switches: in-process calls on a
// local server, POSTs under /faults/ on a shared one (which must run with
// --enable-faults).
func (t *Target) Faults() Faults { return t.faults }

// Close stops the local server, if any.
func (t *Target) Close() { t.stop() }

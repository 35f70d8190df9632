// Command 14-operator is an operator, built in four steps a workshop can
// follow: a CustomResourceDefinition for a kind of our own (Website), an
// informer on it (our informers work on any resource), a reconcile that
// turns each Website into built-in objects (a ConfigMap with its page, a
// Deployment serving it) owned by the Website, and status with a Ready
// condition. It runs our apiserver and controller manager in-process, so
// the Deployment gets Pods, the Pods get Ready, and deleting the Website
// lets the garbage collector remove what it owned. The operator itself is
// package listwatch/controllers/website; this program drives it.
//
//	go run ./examples/14-operator
//
// Against a shared apiserver (the workshop's) it runs only the operator, in
// a namespace of your own; the room's controller manager makes the Pods and
// collects the garbage:
//
//	go run ./cmd/controller-manager --collect-websites
//	go run ./examples/14-operator -server http://127.0.0.1:8080 -namespace alice
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/controllers/manager"
	"listwatch/controllers/website"
	"listwatch/examples/internal/demo"
	"listwatch/internal/target"
	"listwatch/narrate"
)

// Step 1 is website.CRD; steps 2 to 4 are package controllers/website,
// which chaos/ also runs under faults.
var (
	crds        = website.CRDs
	websites    = website.Websites
	deployments = website.Deployments
	configMaps  = website.ConfigMaps
)

func main() {
	trace := flag.Bool("trace", false, "narrate the operator's workqueue and reconciles")
	var tf target.Flags
	tf.Register(flag.CommandLine)
	flag.Parse()
	if err := run(demo.NewPrinter(os.Stdout), tf, demo.Tracer(*trace)); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, tf target.Flags, tr *narrate.Tracer) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t, err := target.Open(ctx, tf, apiserver.Config{}, client.Config{})
	if err != nil {
		return err
	}
	defer t.Close()
	c, ns := t.Client, t.Namespace

	p.Section("step 1: the CustomResourceDefinition")
	crd := &api.Object{}
	if err := crd.UnmarshalJSON([]byte(website.CRD)); err != nil {
		return err
	}
	// On a shared server the room's first run created it already.
	if _, err := c.Resource(crds).Create(ctx, crd); err != nil && !client.IsAlreadyExists(err) {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		_, err := c.Resource(websites).Namespace(ns).List(ctx, api.ListOptions{})
		return err == nil, nil
	}); err != nil {
		return fmt.Errorf("websites never served: %w", err)
	}
	p.Say("crd", "websites.workshop.example.com created: the apiserver now serves websites")

	if t.Shared() {
		p.Say("manager", "the shared server's controller manager makes the Pods and collects the garbage (go run ./cmd/controller-manager --collect-websites)")
		if err := deleteLeftover(ctx, c.Resource(websites).Namespace(ns), "hello"); err != nil {
			return err
		}
	} else {
		// The built-in controllers, so the Deployment gets running Pods; the
		// garbage collector also watches websites, to collect what they own.
		mgrDone := make(chan error, 1)
		go func() {
			mgrDone <- manager.Run(ctx, manager.Config{Client: c, KubeletStartDelay: 50 * time.Millisecond,
				GCKinds: append(manager.DefaultGCKinds, manager.WebsiteGCKind)})
		}()
		defer func() { cancel(); <-mgrDone }()
	}

	p.Section("step 2: informers on websites (a custom resource) and on what they own")
	op, err := website.New(website.Options{Client: c, Namespace: ns,
		OnChange: func(action, kind, name string) { p.Say("reconcile", "%s %s %s", action, kind, name) },
		Settings: controllers.Settings{Tracer: tr}})
	if err != nil {
		return err
	}
	p.Say("informers", "websites, deployments and configmaps in %s; events queue the owning website's key", ns)
	opDone := make(chan struct{})
	go func() { op.Run(ctx); close(opDone) }()
	defer func() { cancel(); <-opDone }()

	p.Section("step 3: a Website becomes a ConfigMap and a Deployment it owns")
	ws := c.Resource(websites).Namespace(ns)
	site := &api.Object{}
	_ = site.UnmarshalJSON([]byte(`{"apiVersion":"workshop.example.com/v1","kind":"Website","metadata":{"name":"hello"},"spec":{"message":"hello, operators","replicas":2,"image":"nginx"}}`))
	if _, err := ws.Create(ctx, site); err != nil {
		return err
	}
	p.Say("create", "website hello: message %q, replicas 2", "hello, operators")

	p.Section("step 4: status: Ready once the Deployment's Pods are")
	if err := waitReady(ctx, ws, "hello", 2, p); err != nil {
		return err
	}

	p.Section("the operator is level-triggered: changes and damage are repaired")
	if _, err := ws.Patch(ctx, "hello", client.PatchTypeMerge, []byte(`{"spec":{"replicas":1,"message":"hello again"}}`)); err != nil {
		return err
	}
	p.Say("change", "website hello: replicas 1, message %q", "hello again")
	if err := waitFor(ctx, func() (bool, error) {
		cm, err := c.Resource(configMaps).Namespace(ns).Get(ctx, "hello-content")
		return err == nil && demo.Data(cm, "index.html") == "hello again", nil
	}); err != nil {
		return err
	}
	if err := waitReady(ctx, ws, "hello", 1, p); err != nil {
		return err
	}
	if err := c.Resource(configMaps).Namespace(ns).Delete(ctx, "hello-content", client.DeleteOptions{}); err != nil {
		return err
	}
	p.Say("damage", "configmap hello-content deleted by hand")
	if err := waitFor(ctx, func() (bool, error) {
		cm, err := c.Resource(configMaps).Namespace(ns).Get(ctx, "hello-content")
		return err == nil && demo.Data(cm, "index.html") == "hello again", nil
	}); err != nil {
		return err
	}
	p.Say("repaired", "configmap hello-content is back")

	p.Section("deleting the Website: the garbage collector removes what it owned")
	if err := ws.Delete(ctx, "hello", client.DeleteOptions{PropagationPolicy: "Background"}); err != nil {
		return err
	}
	if err := waitFor(ctx, func() (bool, error) {
		_, e1 := c.Resource(configMaps).Namespace(ns).Get(ctx, "hello-content")
		_, e2 := c.Resource(deployments).Namespace(ns).Get(ctx, "hello")
		pods, e3 := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).List(ctx, api.ListOptions{LabelSelector: "website=hello"})
		return client.IsNotFound(e1) && client.IsNotFound(e2) && e3 == nil && len(pods.Items) == 0, nil
	}); err != nil {
		return fmt.Errorf("the website's objects were not collected: %w", err)
	}
	p.Say("result", "website hello deleted: its configmap, deployment and pods are gone")
	return nil
}

// waitReady waits until the Website reports Ready with replicas ready.
func waitReady(ctx context.Context, ws *client.ResourceClient, name string, replicas int, p *demo.Printer) error {
	var st website.Status
	err := waitFor(ctx, func() (bool, error) {
		o, err := ws.Get(ctx, name)
		if err != nil {
			return false, nil
		}
		st = website.Status{}
		_ = json.Unmarshal(o.Get("status"), &st)
		return st.Ready == "True" && st.ReadyReplicas == replicas && st.ObservedGeneration == o.Metadata.Generation, nil
	})
	if err != nil {
		return fmt.Errorf("website %s never became ready with %d replicas (last status %+v): %w", name, replicas, st, err)
	}
	c := st.Conditions[0]
	p.Say("status", "website %s: condition %s=%s (%s: %s), readyReplicas %d", name, c.Type, c.Status, c.Reason, c.Message, st.ReadyReplicas)
	return nil
}

// deleteLeftover deletes the Website an earlier run on a shared server
// left behind, and waits until it is gone.
func deleteLeftover(ctx context.Context, ws *client.ResourceClient, name string) error {
	err := ws.Delete(ctx, name, client.DeleteOptions{PropagationPolicy: "Background"})
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return waitFor(ctx, func() (bool, error) {
		_, err := ws.Get(ctx, name)
		return client.IsNotFound(err), nil
	})
}

// waitFor polls cond until it holds, bounded: an example must not hang.
func waitFor(ctx context.Context, cond func() (bool, error)) error {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return errors.New("timed out")
}

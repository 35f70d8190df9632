// Command 10-real-cluster points our client, Reflector and informer at a
// real Kubernetes cluster, through `kubectl proxy`, with no code change:
// they speak the same HTTP API as kube-apiserver, and kubectl proxy takes
// care of TLS and credentials.
//
//	kubectl proxy --port=8001 &
//	go run ./examples/10-real-cluster
//
// Without a cluster, -standin starts our own apiserver in-process and
// points the same code at it instead.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
)

type settings struct {
	server    string
	namespace string
	watchFor  time.Duration
	write     bool
	standin   bool
	trace     bool
}

func main() {
	var s settings
	flag.StringVar(&s.server, "server", "http://127.0.0.1:8001", "the API server: kubectl proxy's address")
	flag.StringVar(&s.namespace, "namespace", "default", "the namespace whose ConfigMaps to list and watch")
	flag.DurationVar(&s.watchFor, "for", 3*time.Second, "how long to watch and print events")
	flag.BoolVar(&s.write, "write", false, "also create, update and delete one ConfigMap (listwatch-example-<pid>) to see events")
	flag.BoolVar(&s.standin, "standin", false, "no cluster: start our apiserver in-process and use it instead (implies -write)")
	flag.BoolVar(&s.trace, "trace", false, "narrate every client-side layer")
	flag.Parse()
	if s.watchFor <= 0 {
		demo.Fail(fmt.Errorf("-for must be positive"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, s); err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("%w\nnothing is listening on %s: start `kubectl proxy --port=8001` first, or run with -standin", err, s.server)
		}
		demo.Fail(err)
	}
}

func run(p *demo.Printer, s settings) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := demo.Tracer(s.trace)

	if s.standin {
		srv, err := apiserver.Start(ctx, apiserver.Config{})
		if err != nil {
			return err
		}
		defer func() {
			stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
			defer stop()
			_ = srv.Stop(stopCtx)
		}()
		s.server, s.write = srv.URL(), true
		p.Say("standin", "no cluster: our apiserver on %s stands in for kubectl proxy", s.server)
	}

	// Everything below is the same whatever is at the other end.
	version, err := serverVersion(ctx, s.server)
	if err != nil {
		return err
	}
	p.Say("server", "%s answers /version: %s", s.server, version)

	c, err := client.New(client.Config{Host: s.server, Tracer: tr})
	if err != nil {
		return err
	}
	cms := c.Resource(demo.ConfigMaps).Namespace(s.namespace)

	list, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return err
	}
	p.Say("list", "%d ConfigMaps in %s at resourceVersion %s", len(list.Items), s.namespace, list.Metadata.ResourceVersion)
	for i, obj := range list.Items {
		if i == 5 {
			p.Say("list", "  … and %d more", len(list.Items)-5)
			break
		}
		p.Say("list", "  %s (rv %s)", obj.Metadata.Name, obj.Metadata.ResourceVersion)
	}

	inf, err := informer.NewSharedIndexInformer(cms, informer.Options{Tracer: tr})
	if err != nil {
		return err
	}
	var mu sync.Mutex
	seen := map[string]bool{} // "ADDED name", "MODIFIED name", "DELETED name"
	note := func(kind, name string) {
		mu.Lock()
		seen[kind+" "+name] = true
		mu.Unlock()
	}
	_, err = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, initial bool) {
			if !initial {
				p.Say("event", "OnAdd    %s rv=%s", obj.Metadata.Name, obj.Metadata.ResourceVersion)
			}
			note("ADDED", obj.Metadata.Name)
		},
		UpdateFunc: func(old, obj *api.Object) {
			if old.Metadata.ResourceVersion == obj.Metadata.ResourceVersion {
				return // a resync, not a change
			}
			p.Say("event", "OnUpdate %s rv %s→%s", obj.Metadata.Name, old.Metadata.ResourceVersion, obj.Metadata.ResourceVersion)
			note("MODIFIED", obj.Metadata.Name)
		},
		DeleteFunc: func(obj any) {
			if o := informer.ObjectOf(obj); o != nil {
				p.Say("event", "OnDelete %s", o.Metadata.Name)
				note("DELETED", o.Metadata.Name)
			}
		},
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !informer.WaitForCacheSync(syncCtx, inf) {
		return fmt.Errorf("the informer did not sync within 30s")
	}
	p.Say("informer", "synced: %d ConfigMaps cached; watching for %v", inf.GetIndexer().Len(), s.watchFor)

	name := "listwatch-example-" + strconv.Itoa(os.Getpid())
	if s.write {
		obj := demo.ConfigMap(name, map[string]string{"step": "1"}, nil)
		obj.Metadata.Namespace = s.namespace
		// Each change is said before it is made, so that it prints
		// before the event it causes, which may arrive before the
		// request returns.
		p.Say("change", "create ConfigMap %s/%s", s.namespace, name)
		if _, err := cms.Create(ctx, obj); err != nil {
			return err
		}
		_ = obj.Set("data", []byte(`{"step":"2"}`))
		p.Say("change", "update it: step=2")
		if _, err := cms.Update(ctx, obj); err != nil {
			return err
		}
		p.Say("change", "delete it")
		if err := cms.Delete(ctx, name, client.DeleteOptions{}); err != nil {
			return err
		}
	}
	time.Sleep(s.watchFor)

	p.Say("result", "list, watch and informer ran against %s with the same code as against our apiserver", s.server)
	if s.write {
		mu.Lock()
		defer mu.Unlock()
		for _, kind := range []string{"ADDED", "MODIFIED", "DELETED"} {
			demo.Check(seen[kind+" "+name], "the informer did not see %s %s within %v", kind, name, s.watchFor)
		}
	}
	return nil
}

// serverVersion reads GET /version, which every API server answers.
func serverVersion(ctx context.Context, server string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, server+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s/version: %s", server, resp.Status)
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
		Platform   string `json:"platform"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return "", fmt.Errorf("GET %s/version: %w", server, err)
	}
	return fmt.Sprintf("gitVersion %s, platform %s", v.GitVersion, v.Platform), nil
}

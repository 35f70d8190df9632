// Command 07-indexer shows the informer's local cache answering questions
// through custom indexes: "which ConfigMaps belong to app web?", "which
// ones have a key named port?". An index maps each value an IndexFunc
// computes to the keys of the objects that have it, and the informer keeps
// it up to date with every delta; a query is a map lookup in memory, with
// no request to the server. It is how a controller finds, say, the pods on
// a node without listing every pod (the fourth article's "indexer: a local
// cache").
//
//	go run ./examples/07-indexer
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/examples/internal/demo"
	"listwatch/informer"
)

// The custom indexes.
const (
	// byApp indexes a ConfigMap under its "app" label (none: not indexed).
	byApp = "byApp"
	// byDataKey indexes a ConfigMap under every key of its data: one
	// object, several values.
	byDataKey = "byDataKey"
)

func appIndex(obj *api.Object) ([]string, error) {
	if app, ok := obj.Metadata.Labels["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}

func dataKeyIndex(obj *api.Object) ([]string, error) {
	raw := obj.Get("data")
	if raw == nil {
		return nil, nil
	}
	var data map[string]string
	if err := json.Unmarshal(raw, &data); err != nil {
		return nil, fmt.Errorf("data of %s: %w", obj.Key(), err)
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys, nil
}

func main() {
	extra := flag.Int("extra", 0, "also create this many more ConfigMaps (app=app-0 … app-9), and time an index lookup against a scan")
	trace := flag.Bool("trace", false, "narrate every layer")
	flag.Parse()
	if *extra < 0 {
		demo.Fail(fmt.Errorf("-extra must not be negative"))
	}
	p := demo.NewPrinter(os.Stdout)
	if err := run(p, *extra, *trace); err != nil {
		demo.Fail(err)
	}
}

func run(p *demo.Printer, extra int, trace bool) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := demo.Tracer(trace)
	srv, cms, stop, err := demo.Start(ctx, apiserver.Config{Tracer: tr}, client.Config{Tracer: tr})
	if err != nil {
		return err
	}
	defer stop()
	c, err := client.New(client.Config{Host: srv.URL(), Tracer: tr})
	if err != nil {
		return err
	}
	all := c.Resource(demo.ConfigMaps) // every namespace
	system := all.Namespace("kube-system")
	p.Say("server", "our apiserver on %s", srv.URL())

	objects := []struct {
		rc     *client.ResourceClient
		name   string
		data   map[string]string
		labels map[string]string
	}{
		{cms, "web-config", map[string]string{"port": "8080", "host": "web"}, map[string]string{"app": "web"}},
		{cms, "web-flags", map[string]string{"debug": "true"}, map[string]string{"app": "web"}},
		{cms, "db-config", map[string]string{"port": "5432", "dsn": "postgres://db"}, map[string]string{"app": "db"}},
		{system, "dns", map[string]string{"port": "53"}, map[string]string{"app": "dns"}},
		{cms, "notes", map[string]string{"todo": "index me"}, nil},
	}
	for _, o := range objects {
		obj := demo.ConfigMap(o.name, o.data, o.labels)
		if o.rc == system {
			obj.Metadata.Namespace = "kube-system"
		}
		if _, err := o.rc.Create(ctx, obj); err != nil {
			return err
		}
		p.Say("create", "%-22s labels=%-10s data keys=%s", obj.Key(), labelString(o.labels), strings.Join(keysOf(o.data), ","))
	}
	for i := range extra {
		obj := demo.ConfigMap("extra-"+strconv.Itoa(i), map[string]string{"n": strconv.Itoa(i)}, map[string]string{"app": "app-" + strconv.Itoa(i%10)})
		if _, err := cms.Create(ctx, obj); err != nil {
			return err
		}
	}
	if extra > 0 {
		p.Say("create", "and %d more: extra-0 … extra-%d, labels app=app-0 … app-9", extra, extra-1)
	}

	// An informer over every namespace, with two indexes of our own next
	// to the namespace index every informer has.
	inf, err := informer.NewSharedIndexInformer(all, informer.Options{
		Tracer:   tr,
		Indexers: informer.Indexers{byApp: appIndex, byDataKey: dataKeyIndex},
	})
	if err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	if !informer.WaitForCacheSync(ctx, inf) {
		return fmt.Errorf("the informer did not sync")
	}
	cache := inf.GetIndexer()
	p.Say("informer", "synced: %d ConfigMaps cached, indexes %s", cache.Len(), strings.Join(indexNames(cache), ", "))

	p.Section("1. queries: each one a map lookup, no request to the server")
	webKeys, err := show(p, cache, byApp, "web")
	if err != nil {
		return err
	}
	portKeys, err := show(p, cache, byDataKey, "port")
	if err != nil {
		return err
	}
	if _, err := show(p, cache, informer.NamespaceIndex, "kube-system"); err != nil {
		return err
	}
	p.Say("query", "%-36s → %s", fmt.Sprintf("ListIndexFuncValues(%q)", byApp), strings.Join(cache.ListIndexFuncValues(byApp), ", "))
	webConfig, _ := cache.GetByKey("default/web-config")
	same, err := cache.Index(byApp, webConfig)
	if err != nil {
		return err
	}
	p.Say("query", "%-36s → %s  (everything sharing its app)", fmt.Sprintf("Index(%q, web-config)", byApp), strings.Join(keysOfObjects(same), ", "))
	if _, err := cache.ByIndex("byColour", "blue"); err != nil {
		p.Say("query", "%-36s → error: %v", `ByIndex("byColour", "blue")`, err)
	}
	demo.Check(slices.Equal(webKeys, []string{"default/web-config", "default/web-flags"}), "byApp=web gave %v", webKeys)
	demo.Check(slices.Equal(portKeys, []string{"default/db-config", "default/web-config", "kube-system/dns"}), "byDataKey=port gave %v", portKeys)

	p.Section("2. the indexes follow every change")
	if _, err := cms.Update(ctx, demo.ConfigMap("web-flags", map[string]string{"debug": "true"}, map[string]string{"app": "db"})); err != nil {
		return err
	}
	p.Say("change", "relabel default/web-flags: app=web → app=db")
	if err := cms.Delete(ctx, "db-config", client.DeleteOptions{}); err != nil {
		return err
	}
	p.Say("change", "delete default/db-config")
	if err := waitFor(func() bool {
		keys, _ := cache.IndexKeys(byApp, "db")
		return slices.Equal(keys, []string{"default/web-flags"})
	}); err != nil {
		return err
	}
	webKeys, _ = show(p, cache, byApp, "web")
	dbKeys, _ := show(p, cache, byApp, "db")
	portKeys, _ = show(p, cache, byDataKey, "port")
	demo.Check(slices.Equal(webKeys, []string{"default/web-config"}), "after the changes byApp=web gave %v", webKeys)
	demo.Check(slices.Equal(dbKeys, []string{"default/web-flags"}), "after the changes byApp=db gave %v", dbKeys)
	demo.Check(slices.Equal(portKeys, []string{"default/web-config", "kube-system/dns"}), "after the changes byDataKey=port gave %v", portKeys)

	if extra > 0 {
		p.Section("3. index lookup against a scan of the whole cache")
		const rounds = 1000
		t0 := time.Now()
		var hits int
		for range rounds {
			objs, _ := cache.ByIndex(byApp, "app-3")
			hits = len(objs)
		}
		byIndex := time.Since(t0) / rounds
		t0 = time.Now()
		for range rounds {
			hits = 0
			for _, obj := range cache.List() {
				if obj.Metadata.Labels["app"] == "app-3" {
					hits++
				}
			}
		}
		scan := time.Since(t0) / rounds
		p.Say("timing", "ByIndex(%q, \"app-3\"): %d objects in %v; scanning all %d cached: %v", byApp, hits, byIndex, cache.Len(), scan)
	}
	p.Say("result", "custom indexes answered every query from memory, and stayed right through an update and a delete")
	return nil
}

// show runs ByIndex and prints the keys it returns.
func show(p *demo.Printer, cache *informer.Indexer, index, value string) ([]string, error) {
	objs, err := cache.ByIndex(index, value)
	if err != nil {
		return nil, err
	}
	keys := keysOfObjects(objs)
	call := fmt.Sprintf("ByIndex(%q, %q)", index, value)
	p.Say("query", "%-36s → %s", call, strings.Join(keys, ", "))
	return keys, nil
}

func keysOfObjects(objs []*api.Object) []string {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, o.Key())
	}
	return keys
}

func keysOf(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func labelString(labels map[string]string) string {
	if len(labels) == 0 {
		return "(none)"
	}
	parts := make([]string, 0, len(labels))
	for _, k := range keysOf(labels) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func indexNames(cache *informer.Indexer) []string {
	var names []string
	for name := range cache.GetIndexers() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// waitFor polls cond for up to 15 s: the informer applies changes
// asynchronously.
func waitFor(cond func() bool) error {
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out waiting for the informer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

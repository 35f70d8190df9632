package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/target"
)

var configMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// restartDelay is the least time between the starts of two watches, so a
// server that ends every watch at once is not hammered (client-go's
// RetryWatcher waits a second too).
const restartDelay = time.Second

func main() {
	var tf target.Flags
	tf.Register(flag.CommandLine)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, tf); err != nil && ctx.Err() == nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, tf target.Flags) error {
	t, err := target.Open(ctx, tf, apiserver.Config{}, client.Config{})
	if err != nil {
		return err
	}
	defer t.Close()
	cms := t.Resource(configMaps)

	known := map[string]string{} // name -> resourceVersion: what we know
	rv, err := relist(ctx, cms, t.Namespace, known)
	if err != nil {
		return err
	}
	for ctx.Err() == nil {
		started := time.Now()
		next, expired, err := watchOnce(ctx, cms, rv, known)
		switch {
		case err != nil:
			log.Printf("watch failed: %v; trying again", err)
		case expired:
			// The history after rv is gone: only a new list can go on.
			if rv, err = relist(ctx, cms, t.Namespace, known); err != nil {
				log.Printf("list failed: %v; trying again", err)
			}
		default:
			rv = next
		}
		select {
		case <-time.After(time.Until(started.Add(restartDelay))):
		case <-ctx.Done():
		}
	}
	return nil
}

// watchOnce watches from rv until the channel closes. It returns the
// resourceVersion to resume from, or expired when the server answered 410.
func watchOnce(ctx context.Context, cms *client.ResourceClient, rv string, known map[string]string) (string, bool, error) {
	fmt.Printf("watch from rv=%s\n", rv)
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	if err != nil {
		return rv, false, err
	}
	defer w.Stop()
	n := 0
	for ev := range w.ResultChan() {
		switch ev.Type {
		case api.Error:
			fmt.Printf("ERROR    %d %s: list again\n", ev.Status.Code, ev.Status.Message)
			return rv, ev.Status.Code == 410, nil
		case api.Bookmark:
			rv = ev.Object.Metadata.ResourceVersion // no change, a newer rv
			continue
		case api.Deleted:
			delete(known, ev.Object.Metadata.Name)
		default:
			known[ev.Object.Metadata.Name] = ev.Object.Metadata.ResourceVersion
		}
		rv = ev.Object.Metadata.ResourceVersion
		n++
		fmt.Printf("%-8s %s rv=%s\n", ev.Type, ev.Object.Metadata.Name, rv)
	}
	log.Printf("watch channel closed after %d events: watch again from rv=%s", n, rv)
	return rv, false, nil
}

// relist lists the namespace's ConfigMaps and compares the list with what
// we knew: a name we knew and the list lacks was deleted while we were
// away, and its DELETED event will never come (the informer's tombstone,
// DeletedFinalStateUnknown, chapter 07).
func relist(ctx context.Context, cms *client.ResourceClient, ns string, known map[string]string) (string, error) {
	list, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return "", err
	}
	listed := map[string]string{}
	for _, obj := range list.Items {
		listed[obj.Metadata.Name] = obj.Metadata.ResourceVersion
		if old, ok := known[obj.Metadata.Name]; ok && old != obj.Metadata.ResourceVersion {
			fmt.Printf("CHANGED  %s rv=%s (while away, from rv=%s)\n", obj.Metadata.Name, obj.Metadata.ResourceVersion, old)
		}
	}
	for name := range known {
		if _, ok := listed[name]; !ok {
			fmt.Printf("GONE     %s (deleted while away)\n", name)
		}
	}
	clear(known)
	for name, rv := range listed {
		known[name] = rv
	}
	fmt.Printf("listed %d ConfigMaps in %s at rv=%s\n", len(list.Items), ns, list.Metadata.ResourceVersion)
	return list.Metadata.ResourceVersion, nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/internal/target"
)

var configMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

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

	list, err := cms.List(ctx, api.ListOptions{})
	if err != nil {
		return err
	}
	rv := list.Metadata.ResourceVersion
	fmt.Printf("listed %d ConfigMaps in %s at rv=%s\n", len(list.Items), t.Namespace, rv)

	// TODO(step 2): ask for bookmarks (AllowWatchBookmarks), and watch
	// again, from rv, whenever the channel closes.
	fmt.Printf("watch from rv=%s\n", rv)
	w, err := cms.Watch(ctx, api.ListOptions{ResourceVersion: rv})
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		// The article's receive, with Ctrl-C beside it (a receive that
		// ignored ctx could not be stopped once step 1 makes it spin).
		var ev api.Event
		var ok bool
		select {
		case <-ctx.Done():
			return nil
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			log.Printf("watch channel closed")
			return nil // TODO(step 1): `continue` here instead. TODO(step 2): watch again from rv.
		}
		// TODO(step 3): an api.Error event (410 Expired) means the history
		// is gone: list again, and compare with what you knew.
		// TODO(step 2): a Bookmark carries no change, only a newer rv.
		rv = ev.Object.Metadata.ResourceVersion
		fmt.Printf("%-8s %s rv=%s\n", ev.Type, ev.Object.Metadata.Name, rv)
	}
}

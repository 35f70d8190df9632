package integration_test

import (
	"context"
	"fmt"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/informer"
)

// The whole pipeline in one process: an apiserver on a loopback port, a
// client, and an informer whose handler hears about a ConfigMap created
// through the REST API: store → watch cache → HTTP → StreamWatcher →
// Reflector → queue → Indexer → handler.
func Example_pipeline() {
	ctx := context.Background()
	srv, err := apiserver.Start(ctx, apiserver.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = srv.Stop(ctx) }()

	c, err := client.New(client.Config{Host: srv.URL()})
	if err != nil {
		fmt.Println(err)
		return
	}
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")

	inf, err := informer.NewSharedIndexInformer(cms, informer.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	added := make(chan string, 1)
	_, _ = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, isInInitialList bool) {
			added <- fmt.Sprintf("OnAdd %s (in initial list: %v)", obj.Key(), isInInitialList)
		},
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.Run(runCtx)
	}()
	defer func() {
		stop()
		<-done
	}()
	<-inf.Synced() // the first list (empty) has been handled

	cm := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: "default", Name: "hello"}}
	if _, err := cms.Create(ctx, cm); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case line := <-added:
		fmt.Println(line)
	case <-time.After(2 * time.Minute): // only a hang gets here, however busy the machine
		fmt.Println("no event")
	}
	cached, _ := inf.GetIndexer().GetByKey("default/hello")
	fmt.Println("cached:", cached.Key())
	// Output:
	// OnAdd default/hello (in initial list: false)
	// cached: default/hello
}

// Command multi-apiserver runs three apiservers on one three-member etcd
// cluster, all in this process on loopback ports, and shows what one global
// revision buys:
//
//  1. a write through one apiserver reaches the watchers of all three, with
//     the same resourceVersion;
//  2. an informer whose apiserver is stopped mid-stream carries on with
//     another one (its client has all three addresses and fails over) from
//     its last resourceVersion, without listing again.
//
// With --serve it then keeps the cluster and the apiservers running until
// Ctrl-C, printing their addresses, for curl, kubectl or etcdctl.
//
//	go -C etcd run ./examples/multi-apiserver    # from the repository root
//	go -C etcd run ./examples/multi-apiserver --serve
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"listwatch/api"
	"listwatch/apiserver"
	"listwatch/client"
	"listwatch/etcd"
	"listwatch/etcd/embedded"
	"listwatch/informer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	serve := flag.Bool("serve", false, "after the demonstration, keep the cluster and the apiservers running until Ctrl-C")
	dataDir := flag.String("data-dir", "", "where the three etcd members keep their data (default: a temporary directory, removed at the end)")
	flag.Parse()
	if err := run(ctx, os.Stdout, *dataDir, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "multi-apiserver:", err)
		os.Exit(1)
	}
}

// waitLong bounds every wait of the demonstration. Each wait ends as soon
// as what it waits for happens; the bound only turns a hang into an error,
// so it is generous enough for a busy laptop.
const waitLong = 2 * time.Minute

var configMapsGVR = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// replica is one apiserver with its own etcd client, talking to one member.
type replica struct {
	name  string
	srv   *apiserver.Server
	store *etcd.Store
	done  bool
}

func (r *replica) stop() {
	if r.done {
		return
	}
	r.done = true
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	_ = r.srv.Stop(ctx)
	r.store.Close()
	_ = r.store.Client().Close()
}

func run(ctx context.Context, out io.Writer, dataDir string, serve bool) error {
	if dataDir == "" {
		dir, err := os.MkdirTemp("", "listwatch-multi-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dataDir = dir
	}
	startCtx, cancel := context.WithTimeout(ctx, waitLong)
	defer cancel()

	// 1. A three-member etcd cluster.
	var members []embedded.Member
	for i := range 3 {
		name := fmt.Sprintf("etcd-%d", i)
		members = append(members, embedded.Member{Name: name, DataDir: filepath.Join(dataDir, name)})
	}
	servers, err := embedded.StartCluster(startCtx, members, embedded.Config{ProgressNotifyInterval: time.Second})
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	fmt.Fprintf(out, "etcd cluster: %s\n", strings.Join(embedded.ClientURLs(servers), " "))

	// 2. Three apiservers, each on its own member.
	var replicas []*replica
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for i, m := range servers {
		cli, err := embedded.NewClient([]string{m.ClientURL()})
		if err != nil {
			return err
		}
		st, err := etcd.New(startCtx, cli, etcd.Options{})
		if err != nil {
			_ = cli.Close()
			return err
		}
		srv, err := apiserver.Start(startCtx, apiserver.Config{Store: st, EnableFaults: true})
		if err != nil {
			st.Close()
			_ = cli.Close()
			return err
		}
		r := &replica{name: fmt.Sprintf("apiserver-%d", i), srv: srv, store: st}
		replicas = append(replicas, r)
		fmt.Fprintf(out, "%s: %s on %s\n", r.name, srv.URL(), m.ClientURL())
	}
	urls := make([]string, len(replicas))
	for i, r := range replicas {
		urls[i] = r.srv.URL()
	}

	// 3. An informer whose client knows all three, starting on the first.
	ic, err := client.New(client.Config{Host: urls[0], FailoverHosts: urls[1:]})
	if err != nil {
		return err
	}
	inf, err := informer.NewSharedIndexInformer(ic.Resource(configMapsGVR).Namespace("default"), informer.Options{})
	if err != nil {
		return err
	}
	seen := make(chan *api.Object, 16)
	if _, err := inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, _ bool) { seen <- obj },
	}); err != nil {
		return err
	}
	infCtx, stopInf := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(infCtx) })
	defer func() { stopInf(); wg.Wait() }()
	select {
	case <-inf.Synced():
	case <-time.After(waitLong):
		return errors.New("the informer did not sync")
	}
	fmt.Fprintf(out, "informer: listed from apiserver-0 at resourceVersion %s, watching\n", inf.LastSyncResourceVersion())

	// 4. A plain watch on each apiserver, then one write through the second.
	from := inf.LastSyncResourceVersion()
	var watchers []client.Watcher
	defer func() {
		for _, w := range watchers {
			w.Stop()
		}
	}()
	for _, u := range urls {
		c, err := client.New(client.Config{Host: u})
		if err != nil {
			return err
		}
		w, err := c.Resource(configMapsGVR).Namespace("default").Watch(ctx, api.ListOptions{ResourceVersion: from})
		if err != nil {
			return err
		}
		watchers = append(watchers, w)
	}
	a, err := create(ctx, urls[1], "written-through-apiserver-1")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created %s through apiserver-1: resourceVersion %s\n", a.Metadata.Name, a.Metadata.ResourceVersion)
	for i, w := range watchers {
		ev, err := next(w)
		if err != nil {
			return fmt.Errorf("watch on apiserver-%d: %w", i, err)
		}
		fmt.Fprintf(out, "watch on apiserver-%d: %s %s resourceVersion %s\n", i, ev.Type, ev.Object.Metadata.Name, ev.Object.Metadata.ResourceVersion)
		if ev.Object.Metadata.ResourceVersion != a.Metadata.ResourceVersion {
			return fmt.Errorf("apiserver-%d sent resourceVersion %s, want %s", i, ev.Object.Metadata.ResourceVersion, a.Metadata.ResourceVersion)
		}
	}
	if err := waitSeen(seen, a.Metadata.Name); err != nil {
		return err
	}
	fmt.Fprintf(out, "informer: saw %s\n", a.Metadata.Name)

	// 5. Stop the informer's apiserver; write through the third.
	replicas[0].stop()
	fmt.Fprintln(out, "apiserver-0 stopped")
	b, err := create(ctx, urls[2], "written-after-the-failover")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "created %s through apiserver-2: resourceVersion %s\n", b.Metadata.Name, b.Metadata.ResourceVersion)
	if err := waitSeen(seen, b.Metadata.Name); err != nil {
		return err
	}
	lists := 0.0
	for _, u := range urls[1:] {
		n, err := listRequests(ctx, u)
		if err != nil {
			return err
		}
		lists += n
	}
	fmt.Fprintf(out, "informer: saw %s through another apiserver, at resourceVersion %s\n", b.Metadata.Name, inf.LastSyncResourceVersion())
	fmt.Fprintf(out, "LIST requests on apiserver-1 and apiserver-2: %.0f (the informer resumed its watch, no re-list)\n", lists)
	if lists != 0 {
		return fmt.Errorf("the informer listed again (%.0f LIST requests)", lists)
	}

	if serve {
		fmt.Fprintf(out, "serving until Ctrl-C: apiservers %s; etcd %s\n", strings.Join(urls[1:], " "), strings.Join(embedded.ClientURLs(servers), " "))
		<-ctx.Done()
	}
	return nil
}

func create(ctx context.Context, url, name string) (*api.Object, error) {
	c, err := client.New(client.Config{Host: url})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, waitLong)
	defer cancel()
	return c.Resource(configMapsGVR).Namespace("default").Create(ctx, &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: "default", Name: name}})
}

// next returns the next ADDED, MODIFIED or DELETED event of w.
func next(w client.Watcher) (api.Event, error) {
	timeout := time.After(waitLong)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return api.Event{}, errors.New("watch closed")
			}
			if ev.Type == api.Bookmark {
				continue
			}
			if ev.Object == nil {
				return api.Event{}, fmt.Errorf("%s event without an object", ev.Type)
			}
			return ev, nil
		case <-timeout:
			return api.Event{}, errors.New("no event in time")
		}
	}
}

func waitSeen(seen <-chan *api.Object, name string) error {
	timeout := time.After(waitLong)
	for {
		select {
		case o := <-seen:
			if o.Metadata.Name == name {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("the informer did not see %s", name)
		}
	}
}

// listRequests is how many LIST requests the apiserver at url answered.
func listRequests(ctx context.Context, url string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/debug/listwatch", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var v struct {
		Verbs map[string]float64 `json:"requestsByVerb"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return 0, err
	}
	return v.Verbs["list"], nil
}

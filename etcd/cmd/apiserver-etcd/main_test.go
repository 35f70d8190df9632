package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/client"
	"listwatch/etcd/embedded"
	"listwatch/informer"
)

// waitLong bounds every wait for the binary or a watch event. It only turns
// a hang into a failure, so it is generous enough for a busy machine.
const waitLong = 2 * time.Minute

var configMapsGVR = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// binary is one run of the command, stopped by stop.
type binary struct {
	url  string
	stop func()
}

// start runs the command with args until stop, and waits until it serves.
func start(t *testing.T, args ...string) *binary {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	errc := make(chan error, 1)
	go func() { errc <- run(ctx, args, io.Discard, ready) }()
	select {
	case url := <-ready:
		var once sync.Once
		b := &binary{url: url, stop: func() {
			once.Do(func() {
				cancel()
				require.NoError(t, <-errc)
			})
		}}
		t.Cleanup(b.stop)
		return b
	case err := <-errc:
		cancel()
		require.NoError(t, err)
	case <-time.After(waitLong):
		cancel()
		require.FailNow(t, "the apiserver did not start")
	}
	return nil
}

// listRequests is how many LIST requests the server has answered.
func listRequests(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url + "/debug/listwatch")
	require.NoError(t, err)
	defer resp.Body.Close()
	var v struct {
		Verbs map[string]float64 `json:"requestsByVerb"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v.Verbs["list"]
}

func configMap(name string) *api.Object {
	return &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: "default", Name: name}}
}

func freePort(t *testing.T) string {
	t.Helper()
	u, err := embedded.FreeURL()
	require.NoError(t, err)
	return strings.TrimPrefix(u, "http://")
}

// Nothing is lost on restart: the apiserver and its embedded etcd stop and
// start again with the same data directory; every object keeps its
// resourceVersion, and an informer that watched through the restart
// resumes from its last resourceVersion without listing again.
func TestRestartKeepsDataAndInformersResumeWithoutRelisting(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--data-dir", dir, "--listen", freePort(t),
		"--etcd-client-url", "http://" + freePort(t), "--etcd-peer-url", "http://" + freePort(t),
		"--watch-progress-notify-interval", "1s", "--quiet"}
	first := start(t, args...)

	c, err := client.New(client.Config{Host: first.url})
	require.NoError(t, err)
	cms := c.Resource(configMapsGVR).Namespace("default")
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitLong)
	defer cancel()
	a, err := cms.Create(ctx, configMap("a"))
	require.NoError(t, err)
	b, err := cms.Create(ctx, configMap("b"))
	require.NoError(t, err)

	inf, err := informer.NewSharedIndexInformer(cms, informer.Options{})
	require.NoError(t, err)
	seen := make(chan string, 16)
	_, err = inf.AddEventHandler(informer.ResourceEventHandlerFuncs{
		AddFunc: func(obj *api.Object, _ bool) { seen <- obj.Metadata.Name },
	})
	require.NoError(t, err)
	infCtx, stopInf := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { inf.Run(infCtx) })
	defer func() { stopInf(); wg.Wait() }()
	select {
	case <-inf.Synced():
	case <-time.After(waitLong):
		require.FailNow(t, "informer did not sync")
	}
	assert.ElementsMatch(t, []string{"a", "b"}, []string{<-seen, <-seen})

	first.stop() // the apiserver and its etcd are gone; the informer's watch breaks
	second := start(t, args...)
	require.Equal(t, first.url, second.url, "same address: the informer's client does not fail over here")

	for _, want := range []*api.Object{a, b} {
		got, err := cms.Get(ctx, want.Metadata.Name)
		require.NoError(t, err)
		assert.Equal(t, want.Metadata.ResourceVersion, got.Metadata.ResourceVersion, "the resourceVersion survived")
		assert.Equal(t, want.Metadata.UID, got.Metadata.UID)
	}

	d, err := cms.Create(ctx, configMap("d"))
	require.NoError(t, err)
	select {
	case name := <-seen:
		assert.Equal(t, "d", name)
	case <-time.After(waitLong):
		require.FailNow(t, "the informer did not resume its watch")
	}
	assert.Equal(t, d.Metadata.ResourceVersion, inf.LastSyncResourceVersion())
	assert.Zero(t, listRequests(t, second.url), "the informer resumed its watch without a LIST")
}

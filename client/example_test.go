package client_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"

	"listwatch/api"
	"listwatch/client"
)

// A watch served from a recording of a real kube-apiserver
// (watch-from-list-rv.jsonl: a ConfigMap created, patched twice, deleted;
// the stand-in server below then ends the response). The loop checks
// the second value of every receive: when the server ends the watch the
// channel closes, and that is the moment to watch again.
func ExampleResourceClient_Watch() {
	recorded, err := os.ReadFile("../testdata/fixtures/watch-from-list-rv.jsonl")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(recorded) // then return: the server ends the watch
	}))
	defer srv.Close()

	c, err := client.New(client.Config{Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("fixtures")
	// The recording's watch started at a LIST's resourceVersion; any
	// will do for this stand-in server.
	w, err := cms.Watch(context.Background(), api.ListOptions{ResourceVersion: "1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Stop()
	for {
		ev, ok := <-w.ResultChan()
		if !ok {
			fmt.Println("channel closed: the server ended the watch; watch again from the last event's resourceVersion")
			return
		}
		fmt.Println(ev.Type, ev.Object.Key())
	}
	// Output:
	// ADDED fixtures/w1
	// MODIFIED fixtures/w1
	// MODIFIED fixtures/w1
	// DELETED fixtures/w1
	// channel closed: the server ended the watch; watch again from the last event's resourceVersion
}

// A RetryWatcher against a server that ends every watch after one event:
// the consumer sees one uninterrupted sequence, and each re-watch starts
// after the last event it delivered.
func ExampleRetryWatcher() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from, _ := strconv.Atoi(r.URL.Query().Get("resourceVersion"))
		if from >= 13 {
			<-r.Context().Done() // nothing newer: a quiet watch
			return
		}
		// The next change after "from", then the end of the response.
		fmt.Fprintf(w, `{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"demo","namespace":"default","resourceVersion":"%d"}}}`+"\n", from+1)
	}))
	defer srv.Close()

	c, err := client.New(client.Config{Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	cms := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default")
	rw, err := client.NewRetryWatcher(context.Background(), "10", cms, client.RetryWatcherOptions{MinRestartDelay: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		ev := <-rw.ResultChan()
		fmt.Println(ev.Type, ev.Object.Key(), ev.Object.Metadata.ResourceVersion)
	}
	rw.Stop()
	<-rw.Done()
	// Output:
	// MODIFIED default/demo 11
	// MODIFIED default/demo 12
	// MODIFIED default/demo 13
}

// A Status the server sends is a Go error that the Is* helpers recognise.
func ExampleIsNotFound() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintln(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}`)
	}))
	defer srv.Close()
	c, _ := client.New(client.Config{Host: srv.URL})
	_, err := c.Resource(api.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("default").Get(context.Background(), "nope")
	fmt.Println(client.IsNotFound(err), client.IsConflict(err))
	fmt.Println(err)
	// Output:
	// true false
	// configmaps "nope" not found
}

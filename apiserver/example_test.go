package apiserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"listwatch/apiserver"
)

// Start a server on a free loopback port, create a ConfigMap over plain
// HTTP, read it back, and stop.
func Example() {
	ctx := context.Background()
	srv, err := apiserver.Start(ctx, apiserver.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(ctx)

	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"greeting":"hello"}}`
	resp, err := http.Post(srv.URL()+"/api/v1/namespaces/default/configmaps", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println("create:", resp.Status)

	resp, err = http.Get(srv.URL() + "/api/v1/namespaces/default/configmaps/demo?pretty=true")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	fmt.Println("get:", resp.Status)
	for _, line := range strings.Split(string(got), "\n") {
		// uid, resourceVersion and creationTimestamp differ on every run.
		if !strings.Contains(line, `"uid"`) && !strings.Contains(line, `"resourceVersion"`) && !strings.Contains(line, `"creationTimestamp"`) {
			fmt.Println(line)
		}
	}
	// Output:
	// create: 201 Created
	// get: 200 OK
	// {
	//   "kind": "ConfigMap",
	//   "apiVersion": "v1",
	//   "metadata": {
	//     "name": "demo",
	//     "namespace": "default",
	//   },
	//   "data": {
	//     "greeting": "hello"
	//   }
	// }
}

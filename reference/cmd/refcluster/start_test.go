package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReferenceClusterAnswers starts the real etcd, kube-apiserver and
// kube-controller-manager from bin/ (./test.sh reference builds them
// first), asks /version, creates a ConfigMap and sees it on a watch, then
// stops everything and checks that no process is left.
func TestReferenceClusterAnswers(t *testing.T) {
	c := testConfig(t)
	for _, b := range binaries() {
		if _, err := os.Stat(filepath.Join(c.binDir, b.name)); err != nil {
			t.Fatalf("%s is not built (%v): run `go run ./cmd/refcluster build` in reference/ first (./test.sh reference does)", b.name, err)
		}
	}
	// A safety net only: a start that hangs fails instead of blocking the
	// run. How long a healthy start takes depends on the machine.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	if err := start(ctx, c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(c); err != nil {
			t.Error(err)
		}
		for _, b := range binaries() {
			if _, ok, _ := runningPid(c, b.name); ok {
				t.Errorf("%s still runs after stop", b.name)
			}
		}
	})
	api := newTestAPI(t, c)
	var version struct{ GitVersion string }
	api.getJSON(ctx, "/version", &version)
	if version.GitVersion != kubernetesVersion {
		t.Errorf("/version gitVersion = %q, want %q", version.GitVersion, kubernetesVersion)
	}
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	api.getJSON(ctx, "/api/v1/namespaces/default/configmaps", &list)
	watch := api.get(ctx, "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion="+list.Metadata.ResourceVersion)
	defer watch.Body.Close()
	api.post(ctx, "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"probe"},"data":{"k":"v"}}`)
	line, err := bufio.NewReader(watch.Body).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the watch: %v", err)
	}
	if !strings.HasPrefix(line, `{"type":"ADDED","object":{"kind":"ConfigMap"`) || !strings.Contains(line, `"name":"probe"`) {
		t.Errorf("first watch event = %s", line)
	}
}

// testConfig is a reference on free loopback ports with its state in a
// temporary directory, built binaries taken from the module's bin/.
func testConfig(t *testing.T) config {
	t.Helper()
	c := config{
		moduleDir:     "../..",
		stateDir:      t.TempDir(),
		controllers:   true,
		authorization: "RBAC",
		timeout:       10 * time.Minute,
	}
	if err := c.resolve(); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 4)
	c.etcdPort, c.etcdPeerPort, c.apiserverPort, c.controllerManagerPort = ports[0], ports[1], ports[2], ports[3]
	return c
}

// freePorts asks the kernel for n unused loopback ports.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := freeLoopbackPorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// testAPI sends requests to the reference kube-apiserver as the admin.
type testAPI struct {
	t      *testing.T
	client *http.Client
	server string
	token  string
}

func newTestAPI(t *testing.T, c config) *testAPI {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(c.stateDir, caCertFile))
	if err != nil {
		t.Fatal(err)
	}
	client, err := trustingClient(ca)
	if err != nil {
		t.Fatal(err)
	}
	csv, err := os.ReadFile(filepath.Join(c.stateDir, tokenFile))
	if err != nil {
		t.Fatal(err)
	}
	token, _, _ := strings.Cut(string(csv), ",")
	return &testAPI{t: t, client: client, server: fmt.Sprintf("https://127.0.0.1:%d", c.apiserverPort), token: token}
}

func (a *testAPI) do(ctx context.Context, method, path, body string) *http.Response {
	a.t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, a.server+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		resp.Body.Close()
		a.t.Fatalf("%s %s: %s", method, path, resp.Status)
	}
	return resp
}

func (a *testAPI) get(ctx context.Context, path string) *http.Response {
	a.t.Helper()
	return a.do(ctx, http.MethodGet, path, "")
}

func (a *testAPI) post(ctx context.Context, path, body string) {
	a.t.Helper()
	a.do(ctx, http.MethodPost, path, body).Body.Close()
}

func (a *testAPI) getJSON(ctx context.Context, path string, into any) {
	a.t.Helper()
	resp := a.get(ctx, path)
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		a.t.Fatalf("GET %s: %v", path, err)
	}
}

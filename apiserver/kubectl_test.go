package apiserver

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectl drives the installed kubectl against the server: no kubeconfig,
// just --server, with its caches in a temporary directory.
type kubectl struct {
	t      *testing.T
	bin    string
	server string
	env    []string
	cache  string
}

func newKubectl(t *testing.T, ts *testServer) *kubectl {
	t.Helper()
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		// Never a skip: a missing tool would pass the run unseen. ./test.sh
		// checks for kubectl before any test and says how to get it.
		t.Fatalf("the kubectl tests of listwatch/apiserver need kubectl on PATH: %v", err)
	}
	home := t.TempDir()
	return &kubectl{t: t, bin: bin, server: ts.URL(), cache: filepath.Join(home, "cache"),
		env: append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))}
}

func (k *kubectl) cmd(ctx context.Context, args ...string) *exec.Cmd {
	all := append([]string{"--server", k.server, "--cache-dir", k.cache, "--request-timeout", "20s"}, args...)
	c := exec.CommandContext(ctx, k.bin, all...)
	c.Env = k.env
	return c
}

// run runs kubectl and returns its combined output, failing on an error.
func (k *kubectl) run(args ...string) string {
	k.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	out, err := k.cmd(ctx, args...).CombinedOutput()
	require.NoError(k.t, err, "kubectl %s:\n%s", strings.Join(args, " "), out)
	return string(out)
}

// kubectlFullRunOnly leaves a kubectl test out of -short runs: each runs
// kubectl several times, and kubectl reads discovery and OpenAPI on every
// start, seconds of CPU per test. ./test.sh quick keeps TestKubectl
// (create, get, watch, label, annotate, edit, apply, delete); the full run
// executes every kubectl test.
func kubectlFullRunOnly(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short runs TestKubectl only of the kubectl tests; ./test.sh (the full run) executes this one")
	}
}

func TestKubectl(t *testing.T) {
	ts := startServer(t, Config{})
	k := newKubectl(t, ts)
	dir := t.TempDir()
	file := filepath.Join(dir, "alpha.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"alpha","labels":{"app":"demo"}},"data":{"k":"original"}}`), 0o600))

	assert.Contains(t, k.run("create", "-f", file), "configmap/alpha created")
	get := k.run("get", "configmaps")
	assert.Regexp(t, `NAME\s+DATA\s+AGE`, get, "a Table with the server's columns")
	assert.Regexp(t, `alpha\s+1\s+\d+s`, get)
	assert.Regexp(t, `NAMESPACE\s+NAME\s+DATA\s+AGE\s+default\s+alpha`, k.run("get", "cm", "-A"))
	assert.Regexp(t, `default\s+Active`, k.run("get", "ns"))
	yaml := k.run("get", "cm", "alpha", "-o", "yaml")
	assert.Contains(t, yaml, "kind: ConfigMap")
	assert.Contains(t, yaml, "name: alpha")
	assert.Contains(t, yaml, "k: original")

	resources := k.run("api-resources")
	assert.Regexp(t, `configmaps\s+cm\s+v1\s+true\s+ConfigMap`, resources)
	assert.Regexp(t, `deployments\s+deploy\s+apps/v1\s+true\s+Deployment`, resources)
	assert.Regexp(t, `namespaces\s+ns\s+v1\s+false\s+Namespace`, resources)

	// get -w sees an update: read its output until alpha shows up again.
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	watch := k.cmd(ctx, "get", "cm", "alpha", "-w")
	stdout, err := watch.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, watch.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitFor := func(what string) {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				require.True(t, ok, "kubectl get -w ended before %s", what)
				t.Logf("kubectl get -w: %s", l)
				if strings.HasPrefix(l, "alpha") {
					return
				}
			case <-ctx.Done():
				t.Fatalf("kubectl get -w printed no line for %s", what)
			}
		}
	}
	waitFor("the initial state")
	assert.Contains(t, k.run("label", "cm", "alpha", "tier=web"), "configmap/alpha labeled")
	waitFor("the update")
	cancel()
	_ = watch.Wait() // killed by the context
	for range lines {
	}

	assert.Equal(t, "web", ts.get("/api/v1/namespaces/default/configmaps/alpha").object(t).Metadata.Labels["tier"])
	assert.Contains(t, k.run("annotate", "cm", "alpha", "note=hi"), "configmap/alpha annotated")
	assert.Equal(t, "hi", ts.get("/api/v1/namespaces/default/configmaps/alpha").object(t).Metadata.Annotations["note"])

	// kubectl edit sends a strategic merge patch of what the editor changed.
	editor := filepath.Join(dir, "editor.sh")
	require.NoError(t, os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/k: original/k: edited/' \"$1\"\n"), 0o700))
	k.env = append(k.env, "KUBE_EDITOR="+editor)
	assert.Contains(t, k.run("edit", "cm", "alpha"), "configmap/alpha edited")
	assert.Equal(t, "edited", dataK(t, ts.get("/api/v1/namespaces/default/configmaps/alpha").object(t)))

	assert.Contains(t, k.run("apply", "-f", file), "configmap/alpha configured")
	assert.Equal(t, "original", dataK(t, ts.get("/api/v1/namespaces/default/configmaps/alpha").object(t)))

	assert.Contains(t, k.run("delete", "cm", "alpha"), `configmap "alpha" deleted`)
	ts.get("/api/v1/namespaces/default/configmaps/alpha").mustCode(t, http.StatusNotFound)
	assert.Contains(t, k.run("get", "cm"), "No resources found in default namespace.")
}

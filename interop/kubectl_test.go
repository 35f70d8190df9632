package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubectlPath is where every machine of this project (CI's too) has
// kubectl; the test falls back to $PATH and fails if there is none (never
// a skip: a missing tool would pass the run unseen). ./test.sh checks for
// kubectl before any test and says how to get it.
func kubectlPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/kubectl", "kubectl"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	t.Fatal("the kubectl tests of listwatch/interop need kubectl, at /usr/bin/kubectl or on PATH")
	return ""
}

// kubectl runs the installed kubectl against our server through a
// kubeconfig file, bounded by a timeout.
type kubectl struct {
	bin        string
	kubeconfig string
	cacheDir   string
}

func (k kubectl) args(args []string) []string {
	return append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir, "--request-timeout", "10s"}, args...)
}

// run runs kubectl to completion and returns its stdout; a non-zero exit
// fails the test with stderr.
func (k kubectl) run(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, k.args(args)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	require.NoError(t, err, "kubectl %s\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	return stdout.String()
}

// TestKubectl drives the real kubectl binary against our server: discovery,
// get, get -A, get -o json, create (from a file and from literals), delete,
// and get -w printing a change.
func TestKubectl(t *testing.T) {
	bin := kubectlPath(t)
	srv := startServer(t)
	dir := t.TempDir()
	k := kubectl{bin: bin, kubeconfig: writeKubeconfig(t, srv.url), cacheDir: filepath.Join(dir, "cache")}
	w := srv.writeClient(t)
	createNamespace(t, w, "elsewhere")
	_, err := w.CoreV1().ConfigMaps("elsewhere").Create(context.Background(), configMap("elsewhere", "far-away", "x", nil), metav1.CreateOptions{})
	require.NoError(t, err)

	t.Run("api-resources", func(t *testing.T) {
		out := k.run(t, "api-resources")
		for _, want := range []string{"configmaps", "namespaces", "deployments", "pods", "secrets"} {
			assert.Contains(t, out, want)
		}
		assert.Regexp(t, `configmaps\s+cm\s+v1\s+true\s+ConfigMap`, out)
		assert.Regexp(t, `deployments\s+deploy\s+apps/v1\s+true\s+Deployment`, out)
	})
	t.Run("create -f", func(t *testing.T) {
		// kubectl create -f sends the manifest as JSON.
		manifest := filepath.Join(dir, "demo.json")
		require.NoError(t, os.WriteFile(manifest, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"k":"v"}}`), 0o600))
		out := k.run(t, "create", "-f", manifest)
		assert.Contains(t, out, "configmap/demo created")
	})
	t.Run("create configmap", func(t *testing.T) {
		// kubectl create configmap builds the object itself and POSTs it
		// with client-go's typed client, which (kubectl 1.32) encodes the
		// body as application/vnd.kubernetes.protobuf.
		out := k.run(t, "create", "configmap", "literal", "--from-literal=k=v")
		assert.Contains(t, out, "configmap/literal created")
	})
	t.Run("get", func(t *testing.T) {
		out := k.run(t, "get", "configmaps")
		assert.Contains(t, out, "demo")
		assert.NotContains(t, out, "far-away")
		assert.Contains(t, strings.SplitN(out, "\n", 2)[0], "NAME")
	})
	t.Run("get -A", func(t *testing.T) {
		out := k.run(t, "get", "configmaps", "-A")
		assert.Regexp(t, `default\s+demo`, out)
		assert.Regexp(t, `elsewhere\s+far-away`, out)
	})
	t.Run("get -o json", func(t *testing.T) {
		out := k.run(t, "get", "configmap", "demo", "-o", "json")
		var cm struct {
			Kind     string            `json:"kind"`
			Metadata metav1.ObjectMeta `json:"metadata"`
			Data     map[string]string `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &cm), out)
		assert.Equal(t, "ConfigMap", cm.Kind)
		assert.Equal(t, "demo", cm.Metadata.Name)
		assert.Equal(t, "default", cm.Metadata.Namespace)
		assert.Equal(t, map[string]string{"k": "v"}, cm.Data)
	})
	t.Run("get -w", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, k.bin, k.args([]string{"get", "configmaps", "-w"})...)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		var stderr syncBuffer
		cmd.Stderr = &stderr
		require.NoError(t, cmd.Start())
		var wg sync.WaitGroup
		defer func() {
			cancel()
			wg.Wait()
			_ = cmd.Wait()
		}()
		lines := make(chan string, 100)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(lines)
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		waitLine := func(what string, match func(string) bool) {
			t.Helper()
			for {
				select {
				case line, ok := <-lines:
					require.True(t, ok, "kubectl get -w ended before printing %s; stderr:\n%s", what, stderr.String())
					if match(line) {
						return
					}
				case <-ctx.Done():
					t.Fatalf("kubectl get -w did not print %s; stderr:\n%s", what, stderr.String())
				}
			}
		}
		waitLine("the existing object", func(l string) bool { return strings.HasPrefix(l, "demo ") })
		_, err = w.CoreV1().ConfigMaps("default").Create(context.Background(), configMap("default", "watched", "1", nil), metav1.CreateOptions{})
		require.NoError(t, err)
		waitLine("the created object", func(l string) bool { return strings.HasPrefix(l, "watched ") })
		require.NoError(t, w.CoreV1().ConfigMaps("default").Delete(context.Background(), "watched", metav1.DeleteOptions{}))
		waitLine("the deleted object", func(l string) bool { return strings.HasPrefix(l, "watched ") })
	})
	t.Run("delete", func(t *testing.T) {
		out := k.run(t, "delete", "configmap", "demo")
		assert.Contains(t, out, `configmap "demo" deleted`)
		out = k.run(t, "get", "configmaps", "--ignore-not-found")
		assert.NotContains(t, out, "demo")
	})
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

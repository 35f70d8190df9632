package interop_test

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"listwatch/internal/leakcheck"
)

// getW runs `kubectl get <args> -w` and returns a function that waits for
// a printed line matching re (returning every line printed so far) and a
// stop function.
func (k kubectl) getW(t *testing.T, args ...string) (waitFor func(re string) []string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	cmd := exec.CommandContext(ctx, k.bin, k.args(append(append([]string{"get"}, args...), "-w"))...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	lines := make(chan string, 100)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var seen []string
	waitFor = func(re string) []string {
		t.Helper()
		match := regexp.MustCompile(re)
		for {
			select {
			case line, ok := <-lines:
				require.True(t, ok, "kubectl get -w ended before printing %q; printed:\n%s\nstderr:\n%s", re, strings.Join(seen, "\n"), stderr.String())
				seen = append(seen, line)
				if match.MatchString(line) {
					return seen
				}
			case <-ctx.Done():
				t.Fatalf("kubectl get -w did not print %q; printed:\n%s\nstderr:\n%s", re, strings.Join(seen, "\n"), stderr.String())
			}
		}
	}
	stop = func() {
		cancel()
		_ = cmd.Wait()
		wg.Wait()
	}
	return waitFor, stop
}

// TestKubectlEverydayCommands: the commands a new user types first work
// as against a real cluster: the create generators (which send protobuf),
// get with the real printer columns, a Secret's default type, and get -w
// keeping one header with filled columns, with and without
// --output-watch-events.
func TestKubectlEverydayCommands(t *testing.T) {
	t.Cleanup(leakcheck.Check(t)) // registered first, so it runs after the server stops
	bin := kubectlPath(t)
	srv := startServer(t)
	k := kubectl{bin: bin, kubeconfig: writeKubeconfig(t, srv.url), cacheDir: filepath.Join(t.TempDir(), "cache")}

	for args, want := range map[string]string{
		"create deployment web --image=nginx":             "deployment.apps/web created",
		"create service clusterip s1 --tcp=80:80":         "service/s1 created",
		"create secret generic s --from-literal=a=b":      "secret/s created",
		"create configmap c --from-literal=k=v":           "configmap/c created",
		"create namespace n":                              "namespace/n created",
		"run p --image=busybox:1.36 --restart=Never -- x": "pod/p created",
	} {
		assert.Contains(t, k.run(t, strings.Fields(args)...), want, args)
	}

	out := k.run(t, "get", "secret")
	assert.Regexp(t, `(?m)^NAME\s+TYPE\s+DATA\s+AGE$`, out)
	assert.Regexp(t, `(?m)^s\s+Opaque\s+1\s+\d+s$`, out)
	out = k.run(t, "get", "deploy")
	assert.Regexp(t, `(?m)^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`, out)
	assert.Regexp(t, `(?m)^web\s+0/1\s+0\s+0\s+\d+s$`, out)
	out = k.run(t, "get", "deploy", "-o", "wide")
	assert.Regexp(t, `(?m)^web\s+0/1\s+0\s+0\s+\d+s\s+nginx\s+nginx\s+app=web$`, out)
	out = k.run(t, "get", "pods")
	assert.Regexp(t, `(?m)^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$`, out)
	assert.Regexp(t, `(?m)^p\s+0/1\s+Pending\s+0\s+\d+s$`, out)
	out = k.run(t, "get", "svc")
	assert.Regexp(t, `(?m)^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$`, out)
	assert.Regexp(t, `(?m)^s1\s+ClusterIP\s+\S+\s+<none>\s+80/TCP\s+\d+s$`, out)
	out = k.run(t, "get", "cm", "c")
	assert.Regexp(t, `(?m)^c\s+1\s+\d+s$`, out)

	w := srv.writeClient(t)
	for _, c := range []struct {
		name                 string
		args                 []string
		header, added, gone  string
		create, deleteObject func() error
	}{
		{"configmaps", []string{"configmaps"}, `^NAME\s+DATA\s+AGE$`, `^watched\s+1\s+\d+s$`, `^watched\s+1\s+\d+s$`,
			func() error {
				_, err := w.CoreV1().ConfigMaps("default").Create(context.Background(), configMap("default", "watched", "1", nil), metav1.CreateOptions{})
				return err
			},
			func() error {
				return w.CoreV1().ConfigMaps("default").Delete(context.Background(), "watched", metav1.DeleteOptions{})
			}},
		{"configmaps --output-watch-events", []string{"configmaps", "--output-watch-events"}, `^EVENT\s+NAME\s+DATA\s+AGE$`,
			`^ADDED\s+watched\s+1\s+\d+s$`, `^DELETED\s+watched\s+1\s+\d+s$`,
			func() error {
				_, err := w.CoreV1().ConfigMaps("default").Create(context.Background(), configMap("default", "watched", "1", nil), metav1.CreateOptions{})
				return err
			},
			func() error {
				return w.CoreV1().ConfigMaps("default").Delete(context.Background(), "watched", metav1.DeleteOptions{})
			}},
		{"deployments", []string{"deployments"}, `^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$`,
			`^watched\s+0/2\s+0\s+0\s+\d+s$`, `^watched\s+0/2\s+0\s+0\s+\d+s$`,
			func() error {
				_, err := w.AppsV1().Deployments("default").Create(context.Background(), newDeploymentNamed("watched"), metav1.CreateOptions{})
				return err
			},
			func() error {
				return w.AppsV1().Deployments("default").Delete(context.Background(), "watched", metav1.DeleteOptions{})
			}},
	} {
		t.Run("get -w "+c.name, func(t *testing.T) {
			waitFor, stop := k.getW(t, c.args...)
			defer stop()
			waitFor(c.header)
			require.NoError(t, c.create())
			waitFor(c.added)
			require.NoError(t, c.deleteObject())
			seen := waitFor(c.gone)
			headers := 0
			for _, l := range seen {
				if strings.HasPrefix(l, "NAME") || strings.HasPrefix(l, "EVENT") {
					headers++
				}
			}
			assert.Equal(t, 1, headers, "one header, no second one once events arrive:\n%s", strings.Join(seen, "\n"))
		})
	}
}

// newDeploymentNamed is newDeployment (defaultconfig_test.go) under
// another name.
func newDeploymentNamed(name string) *appsv1.Deployment { return newDeployment(name) }

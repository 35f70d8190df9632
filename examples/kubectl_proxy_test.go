package examples_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/leakcheck"
)

// TestRealClusterThroughKubectlProxy runs 10-real-cluster the way its
// README tells a reader to, through a real `kubectl proxy`, with our
// apiserver as the "cluster" behind it; the README's look-for lines must
// hold there too (except the -standin one). It needs kubectl, which every
// development and CI machine of this project has, so its absence fails.
func TestRealClusterThroughKubectlProxy(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("the kubectl tests of listwatch/examples need kubectl on PATH (every machine of this project has it): %v", err)
	}
	if testing.Short() {
		t.Skip("-short leaves out the example behind kubectl proxy; the full run executes it")
	}
	bin := examplesBin(t, "..")
	defer leakcheck.Check(t)()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := apiserver.Start(ctx, apiserver.Config{})
	require.NoError(t, err)
	defer func() { require.NoError(t, srv.Stop(context.Background())) }()

	// An empty kubeconfig: kubectl must not pick up the credentials of
	// whatever cluster this machine is configured for and send them to us.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kubeconfig, nil, 0o600))
	proxy := exec.CommandContext(ctx, kubectl, "proxy", "--server", srv.URL(), "--port=0")
	proxy.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	proxy.Stderr = os.Stderr
	stdout, err := proxy.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, proxy.Start())
	defer func() {
		_ = proxy.Process.Kill()
		_ = proxy.Wait()
	}()

	// kubectl proxy --port=0 prints "Starting to serve on 127.0.0.1:PORT".
	serving := regexp.MustCompile(`Starting to serve on (\S+)`)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "kubectl proxy said nothing")
	m := serving.FindStringSubmatch(line)
	require.NotNil(t, m, "kubectl proxy: %q", line)
	proxyURL := "http://" + m[1]

	out, err := exec.CommandContext(ctx, filepath.Join(bin, "10-real-cluster"),
		"-server", proxyURL, "-write", "-for", "1s").CombinedOutput()
	require.NoError(t, err, "%s", out)

	doc, err := os.ReadFile(filepath.Join("10-real-cluster", "README.md"))
	require.NoError(t, err)
	r, err := parseReadme("10-real-cluster", string(doc))
	require.NoError(t, err)
	checked := 0
	for _, expr := range r.lookFor[r.defaultCmd] {
		if strings.HasPrefix(expr, "^standin") {
			continue
		}
		checked++
		assert.Regexp(t, regexp.MustCompile("(?m)"+expr), string(out))
	}
	assert.Positive(t, checked)
	assert.Contains(t, string(out), proxyURL+" answers /version", "the example talked to the proxy")
}

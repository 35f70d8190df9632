package controllerruntime_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"listwatch/apiserver"
	"listwatch/controllerruntime"
)

// BenchmarkEnvtestStart measures what a controller's test suite waits for
// before its first test: envtest.Environment.Start, installing the Website
// CRD, until discovery serves it, then Stop. One iteration is one start
// and one stop; the start-s/op and stop-s/op metrics split them. Three
// set-ups:
//
//   - kube-apiserver+etcd: envtest as kubebuilder runs it, starting the
//     real etcd and kube-apiserver it finds in KUBEBUILDER_ASSETS
//     (reference/bin after `go -C reference run ./cmd/refcluster build`);
//     the benchmark fails without them.
//   - listwatch-binary: `cmd/apiserver --tls` started as a process, then
//     envtest with UseExistingCluster on the kubeconfig it writes.
//   - listwatch-in-process: our apiserver started in the test's process
//     (apiserver.Start), then envtest with UseExistingCluster.
//
// The figures are in docs/12-custom-resources.md; run it with
//
//	cd controllerruntime && KUBEBUILDER_ASSETS=$PWD/../reference/bin \
//	  go test -run '^$' -bench EnvtestStart -benchtime 5x .
func BenchmarkEnvtestStart(b *testing.B) {
	crd, err := controllerruntime.CRD()
	if err != nil {
		b.Fatal(err)
	}
	crds := func() []*apiextensionsv1.CustomResourceDefinition {
		return []*apiextensionsv1.CustomResourceDefinition{crd.DeepCopy()}
	}
	b.Run("kube-apiserver+etcd", func(b *testing.B) {
		assets := os.Getenv("KUBEBUILDER_ASSETS")
		if assets == "" {
			b.Fatal("KUBEBUILDER_ASSETS is not set: point it at a directory holding kube-apiserver and etcd " +
				"(reference/bin after `go -C reference run ./cmd/refcluster build`)")
		}
		measure(b, func() (*envtest.Environment, func()) {
			// envtest gives each process 20 s to start, then retries up
			// to five times; on a loaded machine kube-apiserver takes
			// longer, so the bound is raised (a hang guard, not a figure).
			return &envtest.Environment{CRDs: crds(), BinaryAssetsDirectory: assets,
				ControlPlaneStartTimeout: 5 * time.Minute, ControlPlaneStopTimeout: time.Minute}, func() {}
		})
	})
	b.Run("listwatch-binary", func(b *testing.B) {
		bin := buildAPIServer(b)
		measure(b, func() (*envtest.Environment, func()) {
			cfg, stop := startAPIServerProcess(b, bin)
			return &envtest.Environment{Config: cfg, UseExistingCluster: ptr.To(true), CRDs: crds()}, stop
		})
	})
	b.Run("listwatch-in-process", func(b *testing.B) {
		measure(b, func() (*envtest.Environment, func()) {
			srv, err := apiserver.Start(context.Background(), apiserver.Config{SelfSignedTLS: true})
			if err != nil {
				b.Fatal(err)
			}
			stop := func() {
				if err := srv.Stop(context.Background()); err != nil {
					b.Error(err)
				}
			}
			return &envtest.Environment{Config: restConfig(srv), UseExistingCluster: ptr.To(true), CRDs: crds()}, stop
		})
	})
}

// measure starts and stops an Environment per iteration, timing both; up
// starts whatever runs beside envtest (timed as part of the start) and
// returns the Environment and how to stop it.
func measure(b *testing.B, up func() (*envtest.Environment, func())) {
	var started, stopped time.Duration
	for b.Loop() {
		t0 := time.Now()
		env, down := up()
		if _, err := env.Start(); err != nil {
			down()
			b.Fatalf("envtest.Environment.Start: %v", err)
		}
		t1 := time.Now()
		if err := env.Stop(); err != nil {
			b.Errorf("envtest.Environment.Stop: %v", err)
		}
		down()
		started += t1.Sub(t0)
		stopped += time.Since(t1)
	}
	b.ReportMetric(started.Seconds()/float64(b.N), "start-s/op")
	b.ReportMetric(stopped.Seconds()/float64(b.N), "stop-s/op")
}

// buildAPIServer compiles cmd/apiserver from the core module, the
// repository's root.
func buildAPIServer(b *testing.B) string {
	b.Helper()
	out := filepath.Join(b.TempDir(), "apiserver")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/apiserver")
	cmd.Dir = ".."
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/apiserver: %v\n%s", err, msg)
	}
	return out
}

// startAPIServerProcess runs `apiserver --tls` on a free loopback port and
// returns the client configuration from the kubeconfig it writes, once it
// says it has written it, and how to stop it.
func startAPIServerProcess(b *testing.B, bin string) (*rest.Config, func()) {
	b.Helper()
	dir := b.TempDir()
	out := &lineSignal{want: []byte("apiserver: wrote "), seen: make(chan struct{})}
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--tls", "--cert-dir", dir, "--quiet")
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}
	select {
	case <-out.seen:
	case <-exited:
		b.Fatalf("apiserver exited before writing its kubeconfig:\n%s", out.text())
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(dir, "kubeconfig"))
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return cfg, stop
}

// lineSignal is a process's stderr: it keeps what was written and closes
// seen once want has been written.
type lineSignal struct {
	want []byte
	seen chan struct{}

	mu  sync.Mutex
	buf []byte
}

func (l *lineSignal) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	had := bytes.Contains(l.buf, l.want)
	l.buf = append(l.buf, p...)
	if !had && bytes.Contains(l.buf, l.want) {
		close(l.seen)
	}
	return len(p), nil
}

func (l *lineSignal) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

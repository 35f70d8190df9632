package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ours is listwatch's apiserver and controller-manager, built from the
// repository's core module (the directory above this module) and started
// the way docs/e2e.md says: `cmd/apiserver --tls` (HTTPS and HTTP/2 with a
// generated certificate and the kubeconfig that trusts it) and
// `cmd/controller-manager --kubeconfig` on that kubeconfig.
type ours struct {
	c          config // binDir and stateDir are the run's own directory
	kubeconfig string
}

// oursPrograms are the two programs, in the order they start.
func oursPrograms() []struct{ name, pkg string } {
	return []struct{ name, pkg string }{
		{"apiserver", "./cmd/apiserver"},
		{"controller-manager", "./cmd/controller-manager"},
	}
}

// startOurs builds and starts our apiserver on a free loopback port and
// our controller-manager against it; on failure it stops what it started.
func startOurs(ctx context.Context, c config, dir string) (o *ours, err error) {
	root := filepath.Dir(c.moduleDir)
	if mod, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(string(mod), "module listwatch\n") {
		return nil, fmt.Errorf("%s is not listwatch's core module: the reference module must sit in the repository", root)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	o = &ours{c: c}
	o.c.binDir, o.c.stateDir = dir, dir
	for _, p := range oursPrograms() {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, p.name), p.pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %w\n%s", p.pkg, err, out)
		}
	}
	ports, err := freeLoopbackPorts(1)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			_ = o.stop()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := o.startAPIServer(ctx, ports[0]); err != nil {
		return o, err
	}
	return o, o.startControllerManager(ctx)
}

// startAPIServer starts `apiserver --tls` and waits for /readyz.
func (o *ours) startAPIServer(ctx context.Context, port int) error {
	certDir := filepath.Join(o.c.stateDir, "certs")
	proc, err := launch(o.c, "apiserver", []string{
		"--listen=127.0.0.1:" + strconv.Itoa(port), "--tls", "--cert-dir=" + certDir,
	})
	if err != nil {
		return err
	}
	o.kubeconfig = filepath.Join(certDir, "kubeconfig")
	base := "https://127.0.0.1:" + strconv.Itoa(port)
	url := base + "/readyz"
	// The server writes its certificate and kubeconfig once it serves.
	err = proc.waitReady(ctx, o.c, func(ctx context.Context) error {
		ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
		if err != nil {
			return fmt.Errorf("no certificate yet: %w", err)
		}
		client, err := trustingClient(ca)
		if err != nil {
			return err
		}
		return expectBody(ctx, client, url, "", "ok")
	})
	if err != nil {
		return err
	}
	return createKubernetesService(ctx, base, filepath.Join(certDir, "apiserver.crt"))
}

// kubernetesService is the Service kube-apiserver's bootstrap controller
// creates in the default namespace at start
// (pkg/controlplane/controller/kubernetesservice). Every e2e.test process
// reads it in its set-up (test/e2e/e2e.go, setupSuitePerGinkgoNode and
// getDefaultClusterIPFamily) and fails without it; ours does not create
// it, so the runner does, with the reference's first service IP.
const kubernetesService = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"kubernetes",` +
	`"labels":{"component":"apiserver","provider":"kubernetes"}},"spec":{"clusterIP":"` + firstServiceIP + `",` +
	`"ports":[{"name":"https","port":443,"protocol":"TCP","targetPort":6443}]}}`

func createKubernetesService(ctx context.Context, base, caFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return fmt.Errorf("ours' certificate: %w", err)
	}
	client, err := trustingClient(ca)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/namespaces/default/services", strings.NewReader(kubernetesService))
	if err != nil {
		return fmt.Errorf("kubernetes Service: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("kubernetes Service: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("kubernetes Service: %s", resp.Status)
	}
	return nil
}

// startControllerManager starts our controller-manager with its default
// controllers, on the kubeconfig the apiserver wrote, and waits until it
// says it runs them.
func (o *ours) startControllerManager(ctx context.Context) error {
	proc, err := launch(o.c, "controller-manager", []string{"--kubeconfig=" + o.kubeconfig})
	if err != nil {
		return err
	}
	return proc.waitReady(ctx, o.c, func(context.Context) error {
		log, err := os.ReadFile(filepath.Join(o.c.stateDir, "controller-manager.log"))
		if err != nil || !strings.Contains(string(log), "controller-manager: running") {
			return errors.New("not running its controllers yet")
		}
		return nil
	})
}

// stop ends the controller-manager, then the apiserver, by pid.
func (o *ours) stop() error {
	var errs []error
	progs := oursPrograms()
	for i := len(progs) - 1; i >= 0; i-- {
		errs = append(errs, terminate(o.c, progs[i].name, 30*time.Second))
	}
	return errors.Join(errs...)
}

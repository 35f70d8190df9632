package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// firstServiceIP is the first address of --service-cluster-ip-range, which
// kube-apiserver gives the "kubernetes" Service in the default namespace.
// Nothing routes to it here; the serving certificate names it as a real
// cluster's does.
const (
	serviceIPRange = "10.0.0.0/24"
	firstServiceIP = "10.0.0.1"
)

// start brings the cluster up: state, etcd, kube-apiserver, optionally
// kube-controller-manager, each ready before the next starts. On failure
// it stops whatever it had started.
func start(ctx context.Context, c config) (err error) {
	for _, b := range binaries() {
		if _, ok, perr := runningPid(c, b.name); perr != nil || ok {
			return fmt.Errorf("%s already runs from %s: run `refcluster stop` first", b.name, c.stateDir)
		}
	}
	if err := build(ctx, c.moduleDir, c.binDir, false, binaries()); err != nil {
		return err
	}
	if err := os.RemoveAll(c.stateDir); err != nil {
		return fmt.Errorf("clear state: %w", err)
	}
	if err := os.MkdirAll(c.stateDir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	p, err := writePKI(c.stateDir)
	if err != nil {
		return err
	}
	server := "https://127.0.0.1:" + strconv.Itoa(c.apiserverPort)
	kubeconfig, err := writeKubeconfig(c.stateDir, server, p)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = stop(c)
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := startEtcd(ctx, c); err != nil {
		return err
	}
	if err := startAPIServer(ctx, c, server, p); err != nil {
		return err
	}
	if c.controllers {
		if err := startControllerManager(ctx, c, kubeconfig); err != nil {
			return err
		}
	}
	fmt.Printf("kube-apiserver %s is ready at %s\n", kubernetesVersion, server)
	fmt.Printf("export KUBECONFIG=%s\n", kubeconfig)
	return nil
}

func startEtcd(ctx context.Context, c config) error {
	client := "http://127.0.0.1:" + strconv.Itoa(c.etcdPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(c.etcdPeerPort)
	p, err := launch(c, "etcd", []string{
		"--name=reference",
		"--data-dir=" + filepath.Join(c.stateDir, "etcd-data"),
		"--listen-client-urls=" + client, "--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer, "--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=reference=" + peer,
	})
	if err != nil {
		return err
	}
	// etcd's /health answers {"health":"true",...} once it has a leader.
	return p.waitReady(ctx, c, func(ctx context.Context) error {
		return expectBody(ctx, http.DefaultClient, client+"/health", "", `"health":"true"`)
	})
}

// apiserverArgs are the flags of the reference kube-apiserver. Everything
// else is kube-apiserver's default.
func apiserverArgs(c config) []string {
	state := func(name string) string { return filepath.Join(c.stateDir, name) }
	return []string{
		"--etcd-servers=http://127.0.0.1:" + strconv.Itoa(c.etcdPort),
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.apiserverPort),
		// The endpoint reconciler writes the advertise address into the
		// "kubernetes" Service's Endpoints, whose validation refuses a
		// loopback IP (pkg/apis/core/validation/validation.go,
		// ValidateEndpointIP); with no reconciler nothing writes them.
		"--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + state("certs"),
		"--tls-cert-file=" + state(servingCert),
		"--tls-private-key-file=" + state(servingKey),
		"--client-ca-file=" + state(caCertFile),
		"--token-auth-file=" + state(tokenFile),
		"--authorization-mode=" + c.authorization,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + state(saPubFile),
		"--service-account-signing-key-file=" + state(saKeyFile),
		"--service-cluster-ip-range=" + serviceIPRange,
	}
}

func startAPIServer(ctx context.Context, c config, server string, p pki) error {
	proc, err := launch(c, "kube-apiserver", apiserverArgs(c))
	if err != nil {
		return err
	}
	client, err := trustingClient(p.caPEM)
	if err != nil {
		return err
	}
	// /readyz turns 200 "ok" once every post-start hook (RBAC's bootstrap
	// roles, the priority-and-fairness configuration, ...) has finished.
	return proc.waitReady(ctx, c, func(ctx context.Context) error {
		return expectBody(ctx, client, server+"/readyz", p.token, "ok")
	})
}

func startControllerManager(ctx context.Context, c config, kubeconfig string) error {
	state := func(name string) string { return filepath.Join(c.stateDir, name) }
	port := strconv.Itoa(c.controllerManagerPort)
	args := []string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		"--secure-port=" + port,
		"--cert-dir=" + state("controller-manager-certs"),
		"--leader-elect=false",
		"--service-account-private-key-file=" + state(saKeyFile),
		"--root-ca-file=" + state(caCertFile),
		"--service-cluster-ip-range=" + serviceIPRange,
	}
	if c.kcmControllers != "" {
		args = append(args, "--controllers="+c.kcmControllers)
	}
	proc, err := launch(c, "kube-controller-manager", args)
	if err != nil {
		return err
	}
	// The controller manager serves /healthz with a self-signed certificate
	// it makes in --cert-dir; the check only asks our own loopback process.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	return proc.waitReady(ctx, c, func(ctx context.Context) error {
		return expectBody(ctx, insecure, "https://127.0.0.1:"+port+"/healthz", "", "ok")
	})
}

// trustingClient is an HTTP client that trusts only the reference CA.
func trustingClient(caPEM []byte) (*http.Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("reference CA: no certificate in PEM")
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}, nil
}

// expectBody GETs url (with the bearer token, if any) and succeeds when
// the answer is 200 and its body contains want.
func expectBody(ctx context.Context, client *http.Client, url, token, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health request: %w", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		return fmt.Errorf("GET %s: %s %q", url, resp.Status, body)
	}
	return nil
}

// stop ends the programs in the reverse order of start and removes etcd's
// data; certificates, kubeconfig and logs stay until the next start.
func stop(c config) error {
	var errs []error
	for _, name := range []string{"kube-controller-manager", "kube-apiserver", "etcd"} {
		errs = append(errs, terminate(c, name, 30*time.Second))
	}
	errs = append(errs, os.RemoveAll(filepath.Join(c.stateDir, "etcd-data")))
	return errors.Join(errs...)
}

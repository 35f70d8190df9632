package kcmonours

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kcmControllers are the controllers the proof runs: the ones a Deployment
// needs (deployment, replicaset), the one that deletes what a deleted owner
// leaves (garbagecollector), and the two every namespace needs
// (namespace, serviceaccount). Names as kube-controller-manager v1.37.2
// accepts them (its aliases in cmd/kube-controller-manager/names).
const kcmControllers = "deployment,replicaset,garbagecollector,namespace,serviceaccount"

// TestKubeControllerManagerRunsOnListwatch: the unmodified
// kube-controller-manager v1.37.2, leader election on, runs its controllers
// against cmd/apiserver: it takes the Lease, gives the default namespace
// its default ServiceAccount, turns `kubectl create deployment
// --replicas=3` into a ReplicaSet and three Pods, follows `kubectl scale`,
// and after `kubectl delete deployment` its garbage collector removes the
// ReplicaSet and the Pods. Each step logs how long it took.
func TestKubeControllerManagerRunsOnListwatch(t *testing.T) {
	root := repoRoot(t)
	kcm := controllerManager(t)
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatalf("kubectl is not on PATH (%v): the reference module's kube-controller-manager test drives it with kubectl", err)
	}
	// A safety net only: a hang fails instead of blocking the run. How
	// long a healthy run takes depends on the machine.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	step := func(what string, since time.Time) { t.Logf("%-66s %6.1fs", what, time.Since(since).Seconds()) }

	dir := t.TempDir()
	apiserver := buildAPIServer(ctx, t, root, dir)
	step("built cmd/apiserver", began)

	t0 := time.Now()
	port := strconv.Itoa(freePort(t))
	certDir := filepath.Join(dir, "certs")
	srv := start(t, dir, "apiserver", apiserver, "--listen=127.0.0.1:"+port, "--tls", "--cert-dir="+certDir, "--quiet")
	if err := srv.waitForLine(ctx, "https://127.0.0.1:"+port); err != nil {
		t.Fatal(err)
	}
	k := kubectl{t: t, kubeconfig: filepath.Join(certDir, "kubeconfig")}
	step("apiserver serving", t0)

	t0 = time.Now()
	cm := start(t, dir, "kube-controller-manager", kcm,
		"--kubeconfig="+k.kubeconfig,
		"--controllers="+kcmControllers,
		"--leader-elect=true",
		"--secure-port=0",
		"--v=2")
	defer func() {
		if t.Failed() {
			t.Logf("kube-controller-manager's log, its last errors (all of it in %s):\n%s", cm.log,
				cm.tail(40, "E1", "W1", "404", "failed", "Failed"))
		}
	}()
	wait := func(args ...string) {
		t.Helper()
		k.run(ctx, append([]string{"wait", waitArg(ctx)}, args...)...)
	}
	wait("-n", "kube-system", "--for=create", "lease/kube-controller-manager")
	wait("-n", "kube-system", "--for=jsonpath={.spec.holderIdentity}", "lease/kube-controller-manager")
	step("kube-controller-manager holds its Lease", t0)
	t0 = time.Now()
	wait("-n", "default", "--for=create", "serviceaccount/default")
	step("the serviceaccount controller made default/default", t0)

	t0 = time.Now()
	k.run(ctx, "-n", "default", "create", "deployment", "web", "--image=nginx", "--replicas=3")
	wait("-n", "default", "--for=jsonpath={.status.replicas}=3", "deployment/web")
	rs := strings.Fields(k.run(ctx, "-n", "default", "get", "rs", "-l", "app=web", "-o", "name"))
	if len(rs) != 1 {
		t.Fatalf("the Deployment has ReplicaSets %v, want one", rs)
	}
	wait("-n", "default", "--for=jsonpath={.status.replicas}=3", rs[0])
	pods := strings.Fields(k.run(ctx, "-n", "default", "get", "pods", "-l", "app=web", "-o", "name"))
	if len(pods) != 3 {
		t.Fatalf("pods of the Deployment: %v, want 3", pods)
	}
	owner := k.run(ctx, "-n", "default", "get", pods[0], "-o", "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}")
	if want := "ReplicaSet/" + strings.TrimPrefix(rs[0], "replicaset.apps/"); owner != want {
		t.Errorf("%s is owned by %q, want %q", pods[0], owner, want)
	}
	step("kubectl create deployment --replicas=3: a ReplicaSet, 3 Pods", t0)

	t0 = time.Now()
	k.run(ctx, "-n", "default", "scale", "deployment", "web", "--replicas=1")
	wait("-n", "default", "--for=jsonpath={.status.replicas}=1", rs[0])
	wait("-n", "default", "--for=jsonpath={.status.replicas}=1", "deployment/web")
	if pods := strings.Fields(k.run(ctx, "-n", "default", "get", "pods", "-l", "app=web", "-o", "name")); len(pods) != 1 {
		t.Fatalf("pods after scaling to 1: %v", pods)
	}
	step("kubectl scale --replicas=1: 1 Pod", t0)

	t0 = time.Now()
	k.run(ctx, "-n", "default", "delete", "deployment", "web")
	wait("-n", "default", "--for=delete", rs[0])
	wait("-n", "default", "--for=delete", "pod", "-l", "app=web")
	step("kubectl delete deployment: the garbage collector removed the rest", t0)
	step("the whole test", began)
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The versions built. etcd's is the one Kubernetes 1.37.2 ships with:
// k8s.io/kubernetes@v1.37.2 build/dependencies.yaml (name "etcd", version
// 3.7.0) and cmd/kubeadm/app/constants/constants.go (DefaultEtcdVersion
// "3.7.0-0"); its go.mod requires go.etcd.io/etcd/client/v3 v3.7.0.
const (
	kubernetesVersion = "v1.37.2"
	kubernetesMajor   = "1"
	kubernetesMinor   = "37"
	// buildDate is the time the module proxy gives for k8s.io/kubernetes
	// v1.37.2, so that every build reports the same /version.
	buildDate = "2026-10-27T12:01:04Z"
)

// binary is one program the reference runs: its file name under bin/ and
// the Go package that is its main.
type binary struct {
	name, pkg string
	// stamped says the program reports Kubernetes' version, which a release
	// build sets with -ldflags (hack/lib/version.sh, kube::version::ldflags).
	stamped bool
	// test says pkg is a test package, compiled into a test binary with
	// `go test -c`, as Kubernetes builds e2e.test.
	test bool
	// tags are the build tags it needs.
	tags string
}

func binaries() []binary {
	return []binary{
		// go.etcd.io/etcd/server/v3's root package is etcd's main (main.go,
		// which calls etcdmain.Main).
		{name: "etcd", pkg: "go.etcd.io/etcd/server/v3"},
		{name: "kube-apiserver", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", stamped: true},
		{name: "kube-controller-manager", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", stamped: true},
	}
}

// versionLDFlags are the -X flags hack/lib/version.sh passes: the same
// variables in k8s.io/component-base/version (what /version serves) and
// k8s.io/client-go/pkg/version. Built from the module source there is no
// git commit, so gitCommit is left alone: /version shows the placeholder
// the source carries, "$Format:%H$" (component-base/version/base.go), as
// in the recordings under testdata/fixtures.
func versionLDFlags() string {
	vars := map[string]string{
		"gitVersion":   kubernetesVersion,
		"gitMajor":     kubernetesMajor,
		"gitMinor":     kubernetesMinor,
		"gitTreeState": "clean",
		"buildDate":    buildDate,
	}
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		for _, key := range []string{"gitVersion", "gitMajor", "gitMinor", "gitTreeState", "buildDate"} {
			flags = append(flags, fmt.Sprintf("-X '%s.%s=%s'", pkg, key, vars[key]))
		}
	}
	return strings.Join(flags, " ")
}

// e2eBinary is Kubernetes' own end-to-end test binary, e2e.test, with the
// API machinery specs of k8s.io/kubernetes v1.37.2 (this module's e2e/
// package says why only those). Kubernetes builds its e2e.test the same
// way: hack/lib/golang.sh, kube::golang::build_binaries_for_platform,
// compiles a target ending in ".test" with `go test -c` and the version
// -ldflags of every release binary. It is built only on request
// (`refcluster build e2e`): only the e2e runner (e2e.go) needs it.
//
// One flag is ours: -vet=off. `go test -c` runs vet on the test package
// before it writes the binary (cmd/go/internal/test/test.go, addTestVet:
// the install action waits for vet), and vet needs the facts of every
// package the binary links, about 2,000 here, each analysed once more
// after it is compiled; on this project's loaded 2-core machine that was
// still running when the link had finished. Kubernetes' golang.sh
// (kube::golang::build_binaries_for_platform) leaves vet on.
func e2eBinary() binary {
	return binary{name: "e2e.test", pkg: "./e2e", stamped: true, test: true, tags: "e2e"}
}

// build compiles every binary in bins that bin/ lacks (all of them with
// force). The first build downloads the modules and compiles Kubernetes:
// minutes.
func build(ctx context.Context, moduleDir, binDir string, force bool, bins []binary) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("bin directory: %w", err)
	}
	for _, b := range bins {
		out := filepath.Join(binDir, b.name)
		if _, err := os.Stat(out); err == nil && !force {
			continue
		}
		args := []string{"build", "-o", out}
		if b.test {
			args = []string{"test", "-c", "-vet=off", "-o", out}
		}
		if b.tags != "" {
			args = append(args, "-tags", b.tags)
		}
		if b.stamped {
			args = append(args, "-ldflags", versionLDFlags())
		}
		args = append(args, b.pkg)
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = moduleDir
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		start := time.Now()
		fmt.Printf("building %s (%s)\n", b.name, b.pkg)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go %s %s: %w", args[0], b.pkg, err)
		}
		fmt.Printf("built %s in %s\n", out, time.Since(start).Round(time.Second))
	}
	return nil
}

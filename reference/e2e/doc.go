// Package e2e is Kubernetes' own end-to-end test binary, narrowed to the
// API machinery specs: `refcluster build e2e` compiles it with
// `go test -c -vet=off -tags e2e` into bin/e2e.test, and `refcluster e2e`
// runs its specs against the reference and against ours (docs/e2e.md).
//
// Where it sits: outside the list-watch data flow, beside the reference.
// Nothing imports it; it sends requests to a server named by a kubeconfig.
//
// What it mirrors: k8s.io/kubernetes v1.37.2 test/e2e/e2e_test.go, which
// links every e2e suite (apps, storage, network, node, ...) into one
// e2e.test. This one links only test/e2e/apimachinery's specs, the ones
// the runner runs, and the same suite around them: the flags, the suite
// set-up and RunE2ETests of test/e2e/e2e.go. A third fewer packages to
// compile on a 2-core machine; the specs are the same code.
//
// e2e_test.go carries the build tag e2e, so `go vet ./...` and
// `go test ./...` of this module (./test.sh reference) never compile
// Kubernetes' e2e framework; this file is all they see.
package e2e

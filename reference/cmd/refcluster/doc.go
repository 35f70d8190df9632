// Command refcluster builds, starts and stops the reference: the real
// kube-apiserver v1.37.2, kube-controller-manager v1.37.2 and etcd v3.7.0,
// compiled from their Go modules and run on loopback, so that anyone with Go
// can ask today's Kubernetes how it answers a request.
//
// Where it sits: outside the list-watch data flow altogether. Nothing in the
// core module imports it; the recorder (cmd/recorder) and the reader of a
// docs page send requests to the cluster it starts, and compare the answers
// with ours.
//
// Subcommands (run from this module's directory, or with `go -C reference`
// from the repository root):
//
//	refcluster build   go build the three binaries into bin/ (once; reused)
//	refcluster start   build if needed, then start etcd, kube-apiserver and
//	                   (with -controllers) kube-controller-manager
//	refcluster env     print `export KUBECONFIG=...` for the running cluster
//	refcluster stop    stop what start started, by pid, and delete its state
//	refcluster build e2e  go test -c Kubernetes' e2e tests into bin/e2e.test
//	refcluster e2e     run the in-scope [sig-api-machinery] e2e specs against
//	                   the reference and against ours, one process per spec,
//	                   and print the table docs/e2e.md shows
//
// What start does is what a cluster installer does, reduced to one machine:
// a certificate authority and a serving certificate for 127.0.0.1 (pki.go),
// a service-account key pair for the tokens kube-apiserver signs, a static
// bearer token in the system:masters group and a kubeconfig that carries it
// (kubeconfig.go), then the processes (process.go), each waited for on its
// health endpoint before the next starts (start.go).
//
// The e2e runner lists the specs with a dry run of e2e.test and keeps the
// in-scope groups (e2especs.go), starts one server at a time, the reference
// (start.go) or ours (e2eours.go), runs every spec in its own e2e.test with
// the flags for a cluster without nodes (e2erun.go), and writes the results
// and the table (e2e.go, e2etable.go) under .e2e/.
//
// Read in this order: main.go, build.go, pki.go, kubeconfig.go, start.go,
// process.go; then e2e.go, e2especs.go, e2erun.go, e2eours.go, e2etable.go.
package main

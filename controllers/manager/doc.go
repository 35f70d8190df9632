// Package manager runs the controllers of package controllers together
// against one apiserver, sharing one informer per resource among them: a
// kube-controller-manager in miniature. cmd/controller-manager is this
// package behind flags; integration and chaos tests run it in-process.
// With Config.LeaderElection several Managers run side by side and only
// the one holding the Lease runs its controllers (election.go, package
// leaderelection); its informers start only then, as
// kube-controller-manager's do.
//
// It mirrors k8s.io/kubernetes/cmd/kube-controller-manager/app
// (controllermanager.go: the shared informer factory started once every
// controller has registered its handlers, then each controller's Run;
// leaderElectAndRun around them).
package manager

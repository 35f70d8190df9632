// Command controller-manager runs listwatch's controllers against an
// apiserver, ours or a real one: the Deployment controller (Deployments to
// ReplicaSets, one per template revision, with status for `kubectl rollout
// status` and Events for `kubectl describe`), the ReplicaSet controller
// (ReplicaSets to Pods), a stand-in kubelet (Pods to Running and Ready),
// the garbage collector (objects whose owners are gone are deleted), the
// namespace controller (a deleted namespace is emptied, then removed) and
// the ServiceAccount controller (every namespace gets "default"). With
// leader election (the default) several copies run side by side and one
// acts.
//
//	go run ./cmd/apiserver &
//	go run ./cmd/controller-manager --server http://127.0.0.1:8080
//	kubectl --server http://127.0.0.1:8080 create -f deployment.json
//	kubectl --server http://127.0.0.1:8080 rollout status deployment/web
//
// Against a TLS server it takes a kubeconfig, as kube-controller-manager
// does: the one `cmd/apiserver --tls` writes, or a real cluster's.
//
//	go run ./cmd/apiserver --tls &
//	go run ./cmd/controller-manager --kubeconfig /tmp/listwatch-apiserver/kubeconfig
//
// SIGINT or SIGTERM stops it; every controller finishes the item in hand.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"listwatch/client"
	"listwatch/controllers/kubelet"
	"listwatch/controllers/leaderelection"
	"listwatch/controllers/manager"
	"listwatch/narrate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "controller-manager:", err)
		os.Exit(1)
	}
}

const usageHeader = `Usage: controller-manager [flags]

listwatch's controllers, built on our informers and workqueue, against any
apiserver (ours: go run ./cmd/apiserver, or with --tls and the kubeconfig it
writes; or a real one, with --kubeconfig):

  deployment      rolls each Deployment out through a ReplicaSet per template
                  (revisions for kubectl rollout history and undo), writes
                  its status and records Events
  replicaset      keeps spec.replicas Pods per ReplicaSet, with expectations
  kubelet         reports Pods Running and Ready after --kubelet-start-delay
  gc              deletes objects whose owners are all gone
  namespace       empties a namespace being deleted (Terminating), then
                  finalizes it so the apiserver removes it
  serviceaccount  gives every namespace its "default" ServiceAccount
  website         the workshop's operator: each Website becomes a ConfigMap
                  and a Deployment it owns, with a Ready condition (not run
                  unless named; needs its CustomResourceDefinition, see
                  workshop/manifests/website-crd.yaml)

With --leader-elect (the default, as for kube-controller-manager) several
copies run side by side: only the one holding the Lease
kube-system/listwatch-controller-manager runs the controllers.

Flags:
`

func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller-manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	server := fs.String("server", "http://127.0.0.1:8080", "the apiserver's URL (with --kubeconfig: overrides its server, as kube-controller-manager's --master does)")
	token := fs.String("token", "", "bearer token to send, if the server wants one (with --kubeconfig: overrides its user's)")
	kubeconfig := fs.String("kubeconfig", "", "a kubeconfig file: server, CA and credentials of its current context (cmd/apiserver --tls writes one), as kube-controller-manager --kubeconfig reads it")
	which := fs.String("controllers", strings.Join(manager.All, ","), "comma-separated controllers to run")
	workers := fs.Int("workers", 2, "reconcile goroutines per controller")
	delay := fs.Duration("kubelet-start-delay", kubelet.DefaultStartDelay, "how long a Pod takes to become Running and Ready")
	node := fs.String("node-name", "listwatch-node", "the node the kubelet plays; Pods bound elsewhere are left alone")
	trace := fs.Bool("trace", false, "narrate every reconcile and workqueue step on stderr")
	le := leaderElectionFlags(fs)
	gcAll := fs.Bool("gc-watch-all", true,
		"the garbage collector watches every resource the apiserver serves (looking again every 30 s), as kube-controller-manager's does; false: only the kinds controllers create, and Websites with --collect-websites")
	collectWebsites := fs.Bool("collect-websites", false,
		"the garbage collector also watches websites.workshop.example.com, so deleting a Website removes what it owns (apply its CRD first; implied by --controllers ...,website)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if *workers < 1 {
		return fmt.Errorf("--workers must be at least 1, not %d", *workers)
	}
	ccfg, err := clientConfig(fs, *kubeconfig, *server, *token)
	if err != nil {
		return err
	}
	c, err := client.New(ccfg)
	if err != nil {
		return err
	}
	cfg := manager.Config{
		Client: c, Controllers: strings.Split(*which, ","), Workers: *workers,
		KubeletStartDelay: *delay, NodeName: *node, GCWatchAll: *gcAll,
	}
	if *collectWebsites {
		cfg.GCKinds = append(slices.Clone(manager.DefaultGCKinds), manager.WebsiteGCKind)
	}
	if *trace {
		cfg.Tracer = narrate.New(stderr)
	}
	cfg.LeaderElection = le.config()
	fmt.Fprintf(stderr, "controller-manager: running %s against %s\n", strings.Join(cfg.Controllers, ", "), ccfg.Host)
	err = manager.Run(ctx, cfg)
	if errors.Is(err, leaderelection.ErrLeadershipLost) {
		// kube-controller-manager exits too ("leaderelection lost"): a
		// new process competes again with fresh informers.
		fmt.Fprintln(stderr, "controller-manager: lost the lease; exiting")
		return err
	}
	fmt.Fprintln(stderr, "controller-manager: stopped")
	return err
}

// clientConfig is where the controllers connect: the kubeconfig's current
// context if one is named, with --server and --token, when given, in
// place of its server and token; otherwise --server and --token.
func clientConfig(fs *flag.FlagSet, kubeconfig, server, token string) (client.Config, error) {
	cfg := client.Config{Host: server, BearerToken: token}
	if kubeconfig != "" {
		var err error
		if cfg, err = client.ConfigFromKubeconfig(kubeconfig, ""); err != nil {
			return cfg, err
		}
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "server":
				cfg.Host = server
			case "token":
				cfg.BearerToken = token
			}
		})
	}
	cfg.UserAgent = "listwatch-controller-manager"
	return cfg, nil
}

// electionFlags are kube-controller-manager's --leader-elect flags.
type electionFlags struct {
	enabled                                   *bool
	namespace, name                           *string
	leaseDuration, renewDeadline, retryPeriod *time.Duration
}

func leaderElectionFlags(fs *flag.FlagSet) electionFlags {
	return electionFlags{
		enabled: fs.Bool("leader-elect", true,
			"compete for a coordination.k8s.io/v1 Lease and run the controllers only while holding it, so several copies can run side by side (kube-controller-manager's default)"),
		namespace:     fs.String("leader-elect-resource-namespace", manager.DefaultLeaseNamespace, "the namespace of the Lease"),
		name:          fs.String("leader-elect-resource-name", manager.DefaultLeaseName, "the name of the Lease"),
		leaseDuration: fs.Duration("leader-elect-lease-duration", leaderelection.DefaultLeaseDuration, "how long the others wait after the Lease last changed before taking it over"),
		renewDeadline: fs.Duration("leader-elect-renew-deadline", leaderelection.DefaultRenewDeadline, "how long the leader keeps trying to renew before it stops leading"),
		retryPeriod:   fs.Duration("leader-elect-retry-period", leaderelection.DefaultRetryPeriod, "the wait between tries to acquire or renew"),
	}
}

// config is the Manager's LeaderElection, nil with --leader-elect=false.
// The Lease is released on SIGINT or SIGTERM, so a restart need not wait
// out the lease; kube-controller-manager 1.37 does so only with the alpha
// feature gate ControllerManagerReleaseLeaderElectionLockOnExit.
func (f electionFlags) config() *manager.LeaderElection {
	if !*f.enabled {
		return nil
	}
	return &manager.LeaderElection{Namespace: *f.namespace, Name: *f.name,
		LeaseDuration: *f.leaseDuration, RenewDeadline: *f.renewDeadline, RetryPeriod: *f.retryPeriod,
		ReleaseOnCancel: true}
}

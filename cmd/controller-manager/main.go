// Command controller-manager runs listwatch's controllers against an
// apiserver, ours or a real one: a Deployment controller (Deployments to
// Pods, with status for `kubectl rollout status`), a stand-in kubelet
// (Pods to Running and Ready) and a garbage collector (objects whose owners
// are gone are deleted).
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

	"listwatch/client"
	"listwatch/controllers/kubelet"
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

  deployment  keeps spec.replicas Pods per Deployment, writes its status
  kubelet     reports Pods Running and Ready after --kubelet-start-delay
  gc          deletes objects whose owners are all gone
  namespace   empties a namespace being deleted (Terminating), then
              finalizes it so the apiserver removes it
  website     the workshop's operator: each Website becomes a ConfigMap and a
              Deployment it owns, with a Ready condition (not run unless
              named; needs its CustomResourceDefinition, see
              workshop/manifests/website-crd.yaml)

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
		KubeletStartDelay: *delay, NodeName: *node,
	}
	if *collectWebsites {
		cfg.GCKinds = append(slices.Clone(manager.DefaultGCKinds), manager.WebsiteGCKind)
	}
	if *trace {
		cfg.Tracer = narrate.New(stderr)
	}
	fmt.Fprintf(stderr, "controller-manager: running %s against %s\n", strings.Join(cfg.Controllers, ", "), ccfg.Host)
	err = manager.Run(ctx, cfg)
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

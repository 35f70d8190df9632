package manager

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"

	"listwatch/controllers/leaderelection"
)

// newElector builds the Manager's leader election: a LeaseLock on
// cfg.LeaderElection's Lease, running run while it leads.
func newElector(cfg Config, run func(context.Context)) (*leaderelection.Elector, error) {
	le := *cfg.LeaderElection
	if le.Namespace == "" {
		le.Namespace = DefaultLeaseNamespace
	}
	if le.Name == "" {
		le.Name = DefaultLeaseName
	}
	if le.Identity == "" {
		le.Identity = DefaultIdentity()
	}
	return leaderelection.New(leaderelection.Config{
		Lock:          &leaderelection.LeaseLock{Client: cfg.Client, Namespace: le.Namespace, Name: le.Name, ID: le.Identity},
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		ReleaseOnCancel:  le.ReleaseOnCancel,
		OnStartedLeading: run,
		Clock:            cfg.Clock,
		Tracer:           cfg.Tracer,
	})
}

// DefaultIdentity is a candidate's identity as kube-controller-manager
// makes it (controllermanager.go Run): the hostname, "_", and a random
// suffix (a UUID there), so two copies on one host differ.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "listwatch"
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return host + "_" + hex.EncodeToString(b)
}

package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"listwatch/api"
	"listwatch/client"
)

// Lock is where the Record lives: resourcelock.Interface. Every Update is
// made at the resourceVersion the lock last read or wrote, so of two
// candidates that both read the same Record only the first to write
// succeeds; the other gets 409 Conflict.
type Lock interface {
	// Get reads the Record, and its raw form (to tell whether it changed);
	// an error for which api.IsNotFound holds when there is none.
	Get(ctx context.Context) (Record, []byte, error)
	// Create writes the first Record.
	Create(ctx context.Context, r Record) error
	// Update replaces the Record read or written last.
	Update(ctx context.Context, r Record) error
	// Identity is this candidate's name, written as holderIdentity.
	Identity() string
	// Describe names the lock for messages: "namespace/name".
	Describe() string
}

// Leases is the resource a LeaseLock reads and writes.
var Leases = api.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// LeaseLock keeps the Record in the spec of a coordination.k8s.io/v1
// Lease, as resourcelock.LeaseLock does.
type LeaseLock struct {
	// Client reads and writes the Lease.
	Client *client.Client
	// Namespace and Name locate it: kube-controller-manager's is
	// kube-system/kube-controller-manager.
	Namespace, Name string
	// ID is this candidate's identity, unique among the candidates
	// (kube-controller-manager's is its hostname, "_" and a random UID).
	ID string

	mu    sync.Mutex
	lease *api.Object // as last read or written: the next Update is made at its resourceVersion
}

var _ Lock = (*LeaseLock)(nil)

// Get reads the Lease.
func (l *LeaseLock) Get(ctx context.Context) (Record, []byte, error) {
	lease, err := l.leases().Get(ctx, l.Name)
	if err != nil {
		return Record{}, nil, err
	}
	l.keep(lease)
	raw := lease.Get("spec")
	r, err := recordFromSpec(raw)
	if err != nil {
		return Record{}, nil, fmt.Errorf("lease %s: %w", l.Describe(), err)
	}
	return r, raw, nil
}

// Create creates the Lease holding r.
func (l *LeaseLock) Create(ctx context.Context, r Record) error {
	lease := &api.Object{APIVersion: "coordination.k8s.io/v1", Kind: "Lease",
		Metadata: api.ObjectMeta{Namespace: l.Namespace, Name: l.Name}}
	if err := lease.Set("spec", r.specJSON()); err != nil {
		return err
	}
	created, err := l.leases().Create(ctx, lease)
	if err != nil {
		return err
	}
	l.keep(created)
	return nil
}

// Update writes r over the Lease last read or written, at its
// resourceVersion.
func (l *LeaseLock) Update(ctx context.Context, r Record) error {
	l.mu.Lock()
	last := l.lease
	l.mu.Unlock()
	if last == nil {
		return errors.New("leaderelection: lease not initialized, call Get or Create first")
	}
	next := last.DeepCopy()
	next.APIVersion, next.Kind = "coordination.k8s.io/v1", "Lease"
	if err := next.Set("spec", r.specJSON()); err != nil {
		return err
	}
	updated, err := l.leases().Update(ctx, next)
	if err != nil {
		return err
	}
	l.keep(updated)
	return nil
}

// Identity is ID.
func (l *LeaseLock) Identity() string { return l.ID }

// Describe is "namespace/name".
func (l *LeaseLock) Describe() string { return l.Namespace + "/" + l.Name }

func (l *LeaseLock) leases() *client.ResourceClient {
	return l.Client.Resource(Leases).Namespace(l.Namespace)
}

func (l *LeaseLock) keep(lease *api.Object) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lease = lease
}

package registry

import (
	"encoding/json"
	"slices"

	"listwatch/api"
)

// The finalizers a DELETE adds for the garbage collector, as
// registry/generic/registry/store.go decides them
// (deletionFinalizersForGarbageCollection, shouldOrphanDependents,
// shouldDeleteDependentsInForeground):
//
//   - propagationPolicy=Orphan (or the deprecated orphanDependents=true)
//     adds "orphan": the garbage collector removes the owner's references
//     from every dependent, then the finalizer, and the owner goes; its
//     dependents stay, owned by nobody.
//   - propagationPolicy=Foreground (or orphanDependents=false with the
//     object already holding "foregroundDeletion") adds
//     "foregroundDeletion": the garbage collector deletes the dependents
//     first and removes the finalizer once none that blocks its owner's
//     deletion is left.
//   - Background, the default of every kind served here, adds neither and
//     removes both: the owner goes at once, its dependents after.
//
// The request's options decide first, then a finalizer the object already
// holds, then the kind's default. Events have no garbage collection policy
// at all (pkg/registry/core/event/strategy.go,
// DefaultGarbageCollectionPolicy returns Unsupported): a DELETE never adds
// either finalizer to them.

// The garbage collector's finalizers (metav1.FinalizerOrphanDependents and
// metav1.FinalizerDeleteDependents).
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// The propagation policies of DeleteOptions.
const (
	PropagationOrphan     = "Orphan"
	PropagationBackground = "Background"
	PropagationForeground = "Foreground"
)

// DeleteRequest is what a DELETE asks beyond its preconditions.
type DeleteRequest struct {
	// Grace is gracePeriodSeconds, if sent.
	Grace *int64
	// Propagation is propagationPolicy, or "" when not sent.
	Propagation string
	// OrphanDependents is the deprecated orphanDependents, if sent.
	OrphanDependents *bool
}

// shouldOrphan is shouldOrphanDependents: whether deleting an object with
// finalizers as req asks leaves its dependents behind.
func shouldOrphan(finalizers []string, req DeleteRequest) bool {
	if req.OrphanDependents != nil {
		return *req.OrphanDependents
	}
	switch req.Propagation {
	case PropagationOrphan:
		return true
	case PropagationBackground, PropagationForeground:
		return false
	}
	for _, f := range finalizers {
		switch f {
		case FinalizerOrphanDependents:
			return true
		case FinalizerDeleteDependents:
			return false
		}
	}
	return false // every kind served here defaults to deleting dependents
}

// shouldDeleteInForeground is shouldDeleteDependentsInForeground.
func shouldDeleteInForeground(finalizers []string, req DeleteRequest) bool {
	if req.OrphanDependents != nil {
		return false
	}
	switch req.Propagation {
	case PropagationForeground:
		return true
	case PropagationBackground, PropagationOrphan:
		return false
	}
	for _, f := range finalizers {
		switch f {
		case FinalizerDeleteDependents:
			return true
		case FinalizerOrphanDependents:
			return false
		}
	}
	return false
}

// gcFinalizers returns the finalizers an object holding finalizers has
// once deleted as req asks, and whether they differ from finalizers as a
// set (deletionFinalizersForGarbageCollection). Both garbage collector
// finalizers are taken out, then added back, orphan first, as the policy
// says.
func (r *Resource) gcFinalizers(finalizers []string, req DeleteRequest) ([]string, bool) {
	if r.NoGarbageCollection {
		return finalizers, false
	}
	next := make([]string, 0, len(finalizers)+1)
	for _, f := range finalizers {
		if f != FinalizerOrphanDependents && f != FinalizerDeleteDependents {
			next = append(next, f)
		}
	}
	if shouldOrphan(finalizers, req) {
		next = append(next, FinalizerOrphanDependents)
	}
	if shouldDeleteInForeground(finalizers, req) {
		next = append(next, FinalizerDeleteDependents)
	}
	if sameSet(finalizers, next) {
		return finalizers, false
	}
	return next, true
}

// sameSet reports whether a and b hold the same strings, repeats aside.
func sameSet(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			return false
		}
	}
	return true
}

// setFinalizers sets metadata.finalizers, or removes it when empty.
func setFinalizers(obj *api.Object, finalizers []string) {
	if len(finalizers) == 0 {
		removeMetaExtra(obj, "finalizers")
		return
	}
	raw, _ := json.Marshal(finalizers) // strings: cannot fail
	setMetaExtra(obj, "finalizers", raw)
}

// Package leaderelection lets several copies of a controller manager run
// side by side with exactly one of them acting: they compete for a
// coordination.k8s.io/v1 Lease, the one whose name is in
// spec.holderIdentity leads, renews spec.renewTime every RetryPeriod, and
// stops leading when it could not renew for RenewDeadline; the others
// retry every RetryPeriod and take the Lease over once it has not changed
// for leaseDurationSeconds.
//
// Where it sits: in front of the controllers, not in the data flow. A
// manager's Run calls Run here, and its controllers start (OnStartedLeading)
// only once this copy holds the Lease.
//
//	copy A ─┐                 ┌─ holderIdentity: A, renewTime every 2 s ─► A runs its controllers
//	        ├─► Lease kube-system/<name>
//	copy B ─┘                 └─ unchanged for 15 s? B takes it over  ───► B runs its controllers
//
// Why it is safe: every write of the Lease is an update at the
// resourceVersion last read, so two candidates that both saw it expire
// cannot both win (the second gets 409 Conflict); and a leader that cannot
// renew gives up after RenewDeadline (10 s), before anyone else may take
// over (15 s after the last change they saw). Time is measured on each
// candidate's own clock from when it observed the Lease change, never by
// comparing renewTime with its own clock, so clocks that disagree do not
// matter, only clocks that run at different speeds.
//
// It mirrors client-go's tools/leaderelection (leaderelection.go:
// LeaderElector.Run, acquire, renew, tryAcquireOrRenew, release;
// resourcelock/leaselock.go: LeaseLock) with kube-controller-manager's
// defaults (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s, from
// component-base's config/v1alpha1 RecommendedDefaultLeaderElectionConfiguration).
// Left out: coordinated leader election (the alpha
// CoordinatedLeaderElection feature), the healthz watchdog and metrics.
//
// Read record.go (what a Lease says), then lock.go (reading and writing it
// at a resourceVersion), then elector.go (the loop).
package leaderelection

package controllers

import "listwatch/workqueue"

// RateLimiter is the limiter of a controller's workqueue: Kubernetes'
// default (workqueue.DefaultControllerRateLimiter, client-go's
// DefaultTypedControllerRateLimiter in util/workqueue/default_rate_limiters.go),
// a per-key backoff of 5 ms doubling to 1000 s combined with a 10 per
// second, 100 burst token bucket, unless s.MaxRetryDelay caps the backoff
// lower.
//
// The cap is ours. Every controller of kube-controller-manager builds its
// queue with the default limiter (deployment_controller.go's
// NewDeploymentController, for one), so a key that failed n times in a
// row waits 5 ms·2ⁿ before its next try even when whatever failed has long
// recovered: only a success (Forget) or a new informer event for the key
// brings it back sooner. From the nineteenth failure in a row that wait
// is the full 1000 s. That is right for a cluster, where a broken dependency should not
// be hammered, but a test that stops its faults and then waits for every
// queue to be idle would wait out that backoff; the chaos run caps it at a
// few seconds instead. Only the per-key backoff is capped: the bucket still
// spaces a storm of retries across many keys, as Kubernetes' does.
func RateLimiter[T comparable](s Settings) workqueue.RateLimiter[T] {
	s = s.WithDefaults()
	if s.MaxRetryDelay <= 0 {
		return workqueue.DefaultControllerRateLimiter[T](s.Clock)
	}
	return workqueue.NewMaxOf[T](
		workqueue.NewItemExponentialFailure[T](workqueue.DefaultBaseDelay, s.MaxRetryDelay),
		workqueue.NewBucket[T](s.Clock, workqueue.DefaultQPS, workqueue.DefaultBurst),
	)
}

package workqueue

// Idle answers the question a test asks before it checks that controllers
// converged: has this queue anything left to do? Kubernetes' client-go
// cannot answer it. Its queues export depth and unfinished work to
// Prometheus (util/workqueue/metrics.go), but what waits in a delaying
// queue's waiting room (waitingForQueue in delaying_queue.go, waitingLoop)
// is private, so a retry scheduled in 10 s is invisible; Kubernetes' own
// tests poll the cluster's state instead (wait.PollUntilContextTimeout in
// k8s.io/apimachinery/pkg/util/wait). We count the waiting room so that a
// test can wait for "nothing queued, nothing being worked on and nothing
// scheduled to retry" and then require the state to be right, instead of
// guessing how long the retries might take.

// Idle reports whether the queue had nothing to do when the snapshot was
// taken: no item waiting to be handed out, none held by a worker, none in
// the waiting room. An informer event still on its way can make an idle
// queue busy again, so a caller that needs "converged" checks the state it
// expects as well.
func (m Metrics) Idle() bool {
	return m.Depth == 0 && m.InProgress == 0 && m.Waiting == 0
}

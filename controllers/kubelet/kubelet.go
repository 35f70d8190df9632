package kubelet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
	"listwatch/narrate"
	"listwatch/workqueue"
)

// Pods is the resource the kubelet watches and reports on.
var Pods = api.GroupVersionResource{Version: "v1", Resource: "pods"}

// DefaultStartDelay is how long a Pod takes to "start".
const DefaultStartDelay = 500 * time.Millisecond

// Options configures a Kubelet.
type Options struct {
	// Client writes Pod status.
	Client *client.Client
	// Pods is the Pod informer.
	Pods *informer.SharedIndexInformer
	// NodeName is the node this kubelet plays. Pods bound to another node
	// are left alone; unbound Pods (there is no scheduler) are ours.
	NodeName string
	// StartDelay is how long after the kubelet first sees a Pod it reports
	// it Running and Ready (default DefaultStartDelay).
	StartDelay time.Duration
	controllers.Settings
}

// Kubelet "runs" Pods: after StartDelay it reports each one Running, with
// its containers started and ready. It runs nothing.
type Kubelet struct {
	opts   Options
	queue  *workqueue.RateLimitingQueue[string]
	status controllers.StatusWriter
	reg    informer.ResourceEventHandlerRegistration

	mu        sync.Mutex
	firstSeen map[string]seenAt // by Pod key
}

// seenAt is when the kubelet first saw the Pod with this uid.
type seenAt struct {
	uid string
	at  time.Time
}

// New builds a kubelet and registers its event handler.
func New(opts Options) (*Kubelet, error) {
	if opts.Client == nil || opts.Pods == nil {
		return nil, errors.New("kubelet: Options needs Client and Pods")
	}
	if opts.StartDelay <= 0 {
		opts.StartDelay = DefaultStartDelay
	}
	opts.Settings = opts.Settings.WithDefaults()
	if opts.NodeName == "" {
		opts.NodeName = "listwatch-node"
	}
	k := &Kubelet{
		opts:      opts,
		queue:     controllers.NewQueue[string]("kubelet", opts.Settings),
		firstSeen: map[string]seenAt{},
	}
	reg, err := opts.Pods.AddEventHandlerWithOptions(controllers.EnqueueHandler(k.queue), informer.HandlerOptions{Name: "kubelet"})
	if err != nil {
		k.queue.ShutDown() // its timer goroutine would outlive the failed New
		return nil, fmt.Errorf("kubelet: %w", err)
	}
	k.reg = reg
	return k, nil
}

// Run waits for the Pod cache, then reconciles until ctx ends.
func (k *Kubelet) Run(ctx context.Context) {
	if !informer.WaitForCacheSync(ctx, k.opts.Pods, k.reg) {
		k.queue.ShutDown()
		return
	}
	controllers.RunWorkers(ctx, "kubelet", k.queue, k.opts.Workers, k.reconcile, k.opts.Tracer)
}

// Queue exposes the work queue's metrics.
func (k *Kubelet) Queue() workqueue.Metrics { return k.queue.Metrics() }

func (k *Kubelet) reconcile(ctx context.Context, key string) error {
	pod, ok := k.opts.Pods.GetIndexer().GetByKey(key)
	if !ok {
		k.forget(key)
		return nil
	}
	var spec podSpec
	if err := json.Unmarshal(orEmpty(pod.Get("spec")), &spec); err != nil {
		k.opts.Tracer.Printf(narrate.Controller, "kubelet: %s: unreadable spec: %v", key, err)
		return nil
	}
	if spec.NodeName != "" && spec.NodeName != k.opts.NodeName {
		return nil
	}
	rc := k.opts.Client.Resource(Pods).Namespace(pod.Metadata.Namespace)
	if pod.Metadata.DeletionTimestamp != nil {
		// Graceful deletion on a real server waits for the kubelet to say
		// the containers are gone: we have none, so say it at once.
		k.forget(key)
		zero := int64(0)
		err := rc.Delete(ctx, pod.Metadata.Name, client.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &client.Preconditions{UID: pod.Metadata.UID}})
		if err != nil && !client.IsNotFound(err) && !client.IsConflict(err) {
			return fmt.Errorf("kubelet: finishing the deletion of %s: %w", key, err)
		}
		return nil
	}
	if isRunningAndReady(pod) {
		k.forget(key)
		return nil
	}
	if wait := k.opts.StartDelay - k.opts.Clock.Since(k.seen(pod)); wait > 0 {
		k.queue.AddAfter(key, wait)
		return nil
	}
	next := pod.DeepCopy()
	next.APIVersion, next.Kind = "v1", "Pod"
	raw, err := json.Marshal(runningStatus(spec, k.opts.Clock.Now()))
	if err != nil {
		return err
	}
	if err := next.Set("status", raw); err != nil {
		return err
	}
	if _, err := k.status.Update(ctx, rc, next); err != nil {
		if client.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("kubelet: status of %s: %w", key, err)
	}
	k.opts.Tracer.Printf(narrate.Controller, "kubelet: %s is Running and Ready", key)
	return nil
}

// seen returns when the kubelet first saw pod, recording now if never.
func (k *Kubelet) seen(pod *api.Object) time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	s, ok := k.firstSeen[pod.Key()]
	if !ok || s.uid != pod.Metadata.UID { // new, or a new Pod of the same name
		s = seenAt{uid: pod.Metadata.UID, at: k.opts.Clock.Now()}
		k.firstSeen[pod.Key()] = s
	}
	return s.at
}

func (k *Kubelet) forget(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.firstSeen, key)
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("{}")
	}
	return raw
}

// podSpec is the part of a Pod's spec the kubelet reads.
type podSpec struct {
	NodeName   string `json:"nodeName"`
	Containers []struct {
		Name  string `json:"name"`
		Image string `json:"image"`
	} `json:"containers"`
}

type condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastProbeTime      any    `json:"lastProbeTime"`
	LastTransitionTime string `json:"lastTransitionTime"`
}

type containerStatus struct {
	Name         string `json:"name"`
	Image        string `json:"image"`
	ImageID      string `json:"imageID"`
	Ready        bool   `json:"ready"`
	Started      bool   `json:"started"`
	RestartCount int    `json:"restartCount"`
	State        struct {
		Running struct {
			StartedAt string `json:"startedAt"`
		} `json:"running"`
	} `json:"state"`
}

type podStatus struct {
	Phase             string            `json:"phase"`
	Conditions        []condition       `json:"conditions"`
	HostIP            string            `json:"hostIP"`
	PodIP             string            `json:"podIP"`
	StartTime         string            `json:"startTime"`
	ContainerStatuses []containerStatus `json:"containerStatuses"`
}

// runningStatus is the status of a Pod whose containers all started and
// are ready, in the shape a real kubelet writes.
func runningStatus(spec podSpec, now time.Time) podStatus {
	ts := now.UTC().Format(time.RFC3339)
	st := podStatus{Phase: "Running", HostIP: "127.0.0.1", PodIP: "127.0.0.1", StartTime: ts}
	for _, t := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
		st.Conditions = append(st.Conditions, condition{Type: t, Status: "True", LastTransitionTime: ts})
	}
	for _, c := range spec.Containers {
		cs := containerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: true, Started: true}
		cs.State.Running.StartedAt = ts
		st.ContainerStatuses = append(st.ContainerStatuses, cs)
	}
	return st
}

// isRunningAndReady reports whether pod already says what we would write.
func isRunningAndReady(pod *api.Object) bool {
	var s struct {
		Phase      string      `json:"phase"`
		Conditions []condition `json:"conditions"`
	}
	if raw := pod.Get("status"); raw == nil || json.Unmarshal(raw, &s) != nil || s.Phase != "Running" {
		return false
	}
	for _, c := range s.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

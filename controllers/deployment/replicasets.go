package deployment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"listwatch/api"
	"listwatch/client"
	"listwatch/controllers"
	"listwatch/informer"
)

// The annotations of a Deployment's ReplicaSets (deploymentutil's
// RevisionAnnotation and friends). The revision is how `kubectl rollout
// history` numbers them and `rollout undo --to-revision` finds one.
const (
	revisionAnnotation        = "deployment.kubernetes.io/revision"
	revisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	desiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	maxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// annotationsToSkip are the Deployment's annotations not copied to its
// ReplicaSets (deploymentutil's annotationsToSkip): they are the
// ReplicaSet's own, or kubectl's.
var annotationsToSkip = []string{
	"kubectl.kubernetes.io/last-applied-configuration",
	revisionAnnotation, revisionHistoryAnnotation, desiredReplicasAnnotation, maxReplicasAnnotation,
	"deprecated.deployment.rollback.to",
}

// replicaSet is one of a Deployment's ReplicaSets, with the fields the
// controller reads parsed.
type replicaSet struct {
	obj      *api.Object
	replicas int32 // spec.replicas
	template json.RawMessage
	revision int64
	status   struct {
		Replicas          int32 `json:"replicas"`
		ReadyReplicas     int32 `json:"readyReplicas"`
		AvailableReplicas int32 `json:"availableReplicas"`
	}
}

func parseReplicaSet(o *api.Object) *replicaSet {
	rs := &replicaSet{obj: o}
	var s struct {
		Replicas *int32          `json:"replicas"`
		Template json.RawMessage `json:"template"`
	}
	_ = json.Unmarshal(o.Get("spec"), &s) // typed by the apiserver; absent is zero
	rs.replicas, rs.template = 1, s.Template
	if s.Replicas != nil {
		rs.replicas = *s.Replicas
	}
	_ = json.Unmarshal(o.Get("status"), &rs.status)
	rs.revision, _ = strconv.ParseInt(o.Metadata.Annotations[revisionAnnotation], 10, 64)
	return rs
}

// replicaSetsOf returns the ReplicaSets d controls, oldest first
// (controller.ReplicaSetsByCreationTimestamp). Unlike the real controller
// it does not adopt orphans that match d's selector.
func (c *Controller) replicaSetsOf(d *api.Object) ([]*replicaSet, error) {
	objs, err := c.opts.ReplicaSets.GetIndexer().ByIndex(informer.NamespaceIndex, d.Metadata.Namespace)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: listing replicasets from the cache: %w", d.Key(), err)
	}
	var out []*replicaSet
	for _, o := range objs {
		if ref, ok := controllers.ControllerOf(o); ok && ref.UID == d.Metadata.UID {
			out = append(out, parseReplicaSet(o))
		}
	}
	slices.SortFunc(out, func(a, b *replicaSet) int {
		if c := a.obj.Metadata.CreationTimestamp.Compare(b.obj.Metadata.CreationTimestamp); c != 0 {
			return c
		}
		return cmp.Compare(a.obj.Metadata.Name, b.obj.Metadata.Name)
	})
	return out, nil
}

// splitNewAndOld finds the new ReplicaSet, the oldest whose template is
// d's (FindNewReplicaSet), and the old ones.
func splitNewAndOld(s spec, all []*replicaSet) (newRS *replicaSet, old []*replicaSet) {
	for _, rs := range all {
		if newRS == nil && equalIgnoreHash(rs.template, s.Template) {
			newRS = rs
			continue
		}
		old = append(old, rs)
	}
	return newRS, old
}

func maxRevision(rss []*replicaSet) int64 {
	var m int64
	for _, rs := range rss {
		m = max(m, rs.revision)
	}
	return m
}

// newReplicaSetAnnotations are the annotations the new ReplicaSet must
// have (SetNewReplicaSetAnnotations): the Deployment's own, copied; the
// revision, one more than any old ReplicaSet's, with the revisions it had
// before kept in revision-history (a rollback makes an old ReplicaSet new
// again); and, on create, the replica counts.
func newReplicaSetAnnotations(d *api.Object, current map[string]string, revision int64) map[string]string {
	out := maps.Clone(current)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range d.Metadata.Annotations {
		if !slices.Contains(annotationsToSkip, k) {
			out[k] = v
		}
	}
	old, hadOld := out[revisionAnnotation]
	oldRev, _ := strconv.ParseInt(old, 10, 64)
	if oldRev < revision {
		out[revisionAnnotation] = strconv.FormatInt(revision, 10)
		if hadOld && old != "" {
			history := strings.Trim(out[revisionHistoryAnnotation]+","+old, ",")
			out[revisionHistoryAnnotation] = history
		}
	}
	return out
}

// setReplicasAnnotations records d's desired replicas and its maximum with
// surge on a ReplicaSet (SetReplicasAnnotations); true if they changed.
func setReplicasAnnotations(ann map[string]string, desired, maxReplicas int32) bool {
	d, m := strconv.Itoa(int(desired)), strconv.Itoa(int(maxReplicas))
	if ann[desiredReplicasAnnotation] == d && ann[maxReplicasAnnotation] == m {
		return false
	}
	ann[desiredReplicasAnnotation], ann[maxReplicasAnnotation] = d, m
	return true
}

// syncNewReplicaSet brings the new ReplicaSet's annotations up to date
// (its revision above every old one's, the Deployment's annotations).
func (c *Controller) syncNewReplicaSet(ctx context.Context, d *api.Object, newRS *replicaSet, revision int64) (*replicaSet, error) {
	want := newReplicaSetAnnotations(d, newRS.obj.Metadata.Annotations, revision)
	if maps.Equal(want, newRS.obj.Metadata.Annotations) {
		return newRS, nil
	}
	next := newRS.obj.DeepCopy()
	next.Metadata.Annotations = want
	return c.updateReplicaSet(ctx, next)
}

// createNewReplicaSet creates the ReplicaSet of d's current template
// (getNewReplicaSet with createIfNotExisted): named after d and the
// template's hash, selecting only Pods with that hash, with replicas
// Pods to start with.
func (c *Controller) createNewReplicaSet(ctx context.Context, d *api.Object, s spec, replicas int32, revision int64, collisionCount *int32) (*replicaSet, error) {
	hash := templateHash(s.Template, collisionCount)
	template, err := withHashLabel(s.Template, hash)
	if err != nil {
		return nil, err
	}
	selector := maps.Clone(s.Selector.MatchLabels)
	selector[templateHashLabel] = hash
	labels := maps.Clone(s.labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[templateHashLabel] = hash
	rs := &api.Object{APIVersion: "apps/v1", Kind: "ReplicaSet", Metadata: api.ObjectMeta{
		Name: d.Metadata.Name + "-" + hash, Namespace: d.Metadata.Namespace, Labels: labels,
		Annotations: newReplicaSetAnnotations(d, nil, revision),
	}}
	surge, _, _ := s.fenceposts()
	setReplicasAnnotations(rs.Metadata.Annotations, *s.Replicas, *s.Replicas+surge)
	owner := d.DeepCopy()
	owner.APIVersion, owner.Kind = apiVersion, kind
	if err := controllers.SetOwnerReferences(rs, []controllers.OwnerReference{controllers.ControllerRef(owner)}); err != nil {
		return nil, err
	}
	rsSpec, err := json.Marshal(map[string]any{"replicas": replicas, "minReadySeconds": s.MinReadySeconds,
		"selector": map[string]any{"matchLabels": selector}, "template": template})
	if err != nil {
		return nil, err
	}
	if err := rs.Set("spec", rsSpec); err != nil {
		return nil, err
	}
	created, err := c.opts.Client.Resource(ReplicaSets).Namespace(d.Metadata.Namespace).Create(ctx, rs)
	if client.IsAlreadyExists(err) {
		return c.existingNewReplicaSet(ctx, d, s, rs.Metadata.Name)
	}
	if err != nil {
		c.opts.Events.Eventf(controllers.RefOf(d, apiVersion, kind), controllers.EventTypeWarning, "ReplicaSetCreateError",
			"Failed to create new replica set %q: %v", rs.Metadata.Name, err)
		return nil, fmt.Errorf("deployment %s: creating replicaset %s: %w", d.Key(), rs.Metadata.Name, err)
	}
	if replicas > 0 {
		c.opts.Events.Eventf(controllers.RefOf(d, apiVersion, kind), controllers.EventTypeNormal, "ScalingReplicaSet",
			"Scaled up replica set %s from 0 to %d", created.Metadata.Name, replicas)
	}
	return parseReplicaSet(created), nil
}

// existingNewReplicaSet is the ReplicaSet a create found already there:
// ours if d controls it and it has d's template (a slow cache made us
// create it twice). Anything else is a hash collision, which the real
// controller resolves by bumping status.collisionCount; ours reports it.
func (c *Controller) existingNewReplicaSet(ctx context.Context, d *api.Object, s spec, name string) (*replicaSet, error) {
	o, err := c.opts.Client.Resource(ReplicaSets).Namespace(d.Metadata.Namespace).Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("deployment %s: replicaset %s: %w", d.Key(), name, err)
	}
	rs := parseReplicaSet(o)
	if ref, ok := controllers.ControllerOf(o); ok && ref.UID == d.Metadata.UID && equalIgnoreHash(rs.template, s.Template) {
		return rs, nil
	}
	return nil, fmt.Errorf("deployment %s: replicaset %s exists and is not this deployment's (a hash collision)", d.Key(), name)
}

// scaleReplicaSet sets rs's replicas (and its replica annotations),
// records the scaling as an Event on d (scaleReplicaSet in sync.go), and
// reports whether the size changed. rs is updated in place.
func (c *Controller) scaleReplicaSet(ctx context.Context, d *api.Object, s spec, rs *replicaSet, to int32) (bool, error) {
	surge, _, _ := s.fenceposts()
	next := rs.obj.DeepCopy()
	if next.Metadata.Annotations == nil {
		next.Metadata.Annotations = map[string]string{}
	}
	annChanged := setReplicasAnnotations(next.Metadata.Annotations, *s.Replicas, *s.Replicas+surge)
	if rs.replicas == to && !annChanged {
		return false, nil
	}
	if err := setSpecReplicas(next, to); err != nil {
		return false, err
	}
	updated, err := c.updateReplicaSet(ctx, next)
	if err != nil {
		return false, err
	}
	from := rs.replicas
	*rs = *updated
	if from == to {
		return false, nil // only the annotations
	}
	dir := "up"
	if to < from {
		dir = "down"
	}
	c.opts.Events.Eventf(controllers.RefOf(d, apiVersion, kind), controllers.EventTypeNormal, "ScalingReplicaSet",
		"Scaled %s replica set %s from %d to %d", dir, rs.obj.Metadata.Name, from, to)
	return true, nil
}

// setSpecReplicas sets spec.replicas, keeping the rest of spec.
func setSpecReplicas(o *api.Object, n int32) error {
	var s map[string]json.RawMessage
	if err := json.Unmarshal(o.Get("spec"), &s); err != nil {
		return fmt.Errorf("replicaset %s: spec: %w", o.Key(), err)
	}
	s["replicas"] = json.RawMessage(strconv.Itoa(int(n)))
	raw, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return o.Set("spec", raw)
}

// updateReplicaSet PUTs next at the resourceVersion it was read at.
func (c *Controller) updateReplicaSet(ctx context.Context, next *api.Object) (*replicaSet, error) {
	next.APIVersion, next.Kind = "apps/v1", "ReplicaSet"
	updated, err := c.opts.Client.Resource(ReplicaSets).Namespace(next.Metadata.Namespace).Update(ctx, next)
	if err != nil {
		return nil, fmt.Errorf("replicaset %s: %w", next.Key(), err)
	}
	return parseReplicaSet(updated), nil
}

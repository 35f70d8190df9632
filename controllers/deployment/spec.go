package deployment

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"listwatch/api"
)

// spec is the part of a Deployment's spec this controller reads.
type spec struct {
	Replicas *int32 `json:"replicas"`
	Selector *struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	// Template is kept as sent: it is copied into ReplicaSets whole.
	Template json.RawMessage `json:"template"`
	Strategy struct {
		Type          string `json:"type"`
		RollingUpdate *struct {
			MaxSurge       *intOrString `json:"maxSurge"`
			MaxUnavailable *intOrString `json:"maxUnavailable"`
		} `json:"rollingUpdate"`
	} `json:"strategy"`
	RevisionHistoryLimit *int32 `json:"revisionHistoryLimit"`
	MinReadySeconds      int32  `json:"minReadySeconds"`
	Paused               bool   `json:"paused"`

	// labels are the template's labels (parsed from Template).
	labels map[string]string
}

// intOrString is intstr.IntOrString: 1 or "25%".
type intOrString struct {
	raw json.RawMessage
}

func (v *intOrString) UnmarshalJSON(b []byte) error {
	v.raw = append(json.RawMessage(nil), b...)
	return nil
}

// scaled is intstr.GetScaledValueFromIntOrPercent: an int as is, a
// percentage of total rounded up or down.
func (v *intOrString) scaled(def string, total int32, roundUp bool) (int32, error) {
	s := def
	if v != nil {
		var n int32
		if err := json.Unmarshal(v.raw, &n); err == nil {
			return n, nil
		}
		if err := json.Unmarshal(v.raw, &s); err != nil {
			return 0, fmt.Errorf("not an int or a percentage: %s", v.raw)
		}
	}
	pct, err := strconv.Atoi(strings.TrimSuffix(s, "%"))
	if !strings.HasSuffix(s, "%") || err != nil {
		return 0, fmt.Errorf("invalid value %q: must be an int or a percentage", s)
	}
	f := float64(pct) * float64(total) / 100
	if roundUp {
		return int32(math.Ceil(f)), nil
	}
	return int32(math.Floor(f)), nil
}

// The defaults the apiserver gives an apps/v1 Deployment
// (pkg/apis/apps/v1/defaults.go SetDefaults_Deployment).
const (
	defaultMaxSurge             = "25%"
	defaultMaxUnavailable       = "25%"
	defaultRevisionHistoryLimit = 10
	recreate                    = "Recreate"
)

// readSpec parses a Deployment's spec, with the apiserver's defaults for
// what is missing, and checks what the apiserver's validation would
// (ours validates less): a selector that selects the template's labels.
func readSpec(d *api.Object) (spec, error) {
	var s spec
	raw := d.Get("spec")
	if raw == nil {
		return s, fmt.Errorf("deployment %s has no spec", d.Key())
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("spec of deployment %s: %w", d.Key(), err)
	}
	if s.Replicas == nil {
		one := int32(1)
		s.Replicas = &one
	}
	if *s.Replicas < 0 {
		return s, fmt.Errorf("deployment %s: spec.replicas %d is negative", d.Key(), *s.Replicas)
	}
	if s.RevisionHistoryLimit == nil {
		limit := int32(defaultRevisionHistoryLimit)
		s.RevisionHistoryLimit = &limit
	}
	var tmpl struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Spec json.RawMessage `json:"spec"`
	}
	if len(s.Template) == 0 || json.Unmarshal(s.Template, &tmpl) != nil || len(tmpl.Spec) == 0 {
		return s, fmt.Errorf("deployment %s has no spec.template.spec", d.Key())
	}
	s.labels = tmpl.Metadata.Labels
	if s.Selector == nil || len(s.Selector.MatchLabels) == 0 {
		return s, fmt.Errorf("deployment %s: spec.selector.matchLabels is empty", d.Key())
	}
	for k, v := range s.Selector.MatchLabels {
		if s.labels[k] != v {
			return s, fmt.Errorf("deployment %s: selector %s=%s does not match the template's labels", d.Key(), k, v)
		}
	}
	if _, _, err := s.fenceposts(); err != nil {
		return s, fmt.Errorf("deployment %s: spec.strategy.rollingUpdate: %w", d.Key(), err)
	}
	return s, nil
}

// fenceposts are maxSurge and maxUnavailable as numbers of Pods
// (deploymentutil.ResolveFenceposts): surge rounds up, unavailability
// down, and if both come to 0 one Pod may be unavailable. Recreate has
// neither.
func (s spec) fenceposts() (surge, unavailable int32, err error) {
	if s.Strategy.Type == recreate {
		return 0, 0, nil
	}
	var ms, mu *intOrString
	if ru := s.Strategy.RollingUpdate; ru != nil {
		ms, mu = ru.MaxSurge, ru.MaxUnavailable
	}
	if surge, err = ms.scaled(defaultMaxSurge, *s.Replicas, true); err != nil {
		return 0, 0, err
	}
	if unavailable, err = mu.scaled(defaultMaxUnavailable, *s.Replicas, false); err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return surge, min(unavailable, *s.Replicas), nil
}

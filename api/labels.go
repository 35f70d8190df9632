package api

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// LabelSelector selects objects by their labels: "app=web,tier!=db",
// "env in (prod,staging)", "release" (the key exists), "!canary" (it does
// not). A list or watch with ?labelSelector= returns only the objects it
// matches; the apiserver also uses it to turn label changes into ADDED and
// DELETED events for a watcher.
//
// The zero value is the empty selector and matches everything. A
// LabelSelector never changes after parsing, so it is safe to share between
// goroutines. It mirrors k8s.io/apimachinery/pkg/labels (its
// internalSelector); the grammar and every error message are Kubernetes'.
type LabelSelector struct {
	// reqs are sorted by key (stably, so two requirements on one key keep
	// their order), which makes String canonical.
	reqs []LabelRequirement
}

// LabelRequirement is one comma-separated term of a label selector.
type LabelRequirement struct {
	Key      string
	Operator Operator
	// Values are sorted and without duplicates: one value for =, == and !=
	// (possibly ""), one integer for gt and lt, one or more for in and
	// notin, none for exists and !.
	Values []string
}

// ParseLabelSelector parses a label selector. The grammar is Kubernetes':
//
//	selector    = requirement { "," requirement }
//	requirement = [ "!" ] KEY [ ( "=" | "==" | "!=" ) VALUE
//	                          | ( "in" | "notin" ) "(" VALUE { "," VALUE } ")"
//	                          | ( ">" | "<" ) INTEGER ]
//
// Whitespace (space, tab, CR, LF) may surround every token. KEY is a
// qualified name (IsQualifiedName) and VALUE a label value
// (IsValidLabelValue), possibly empty. The empty string selects everything.
//
// Errors wrap ErrInvalidSelector and read exactly as Kubernetes' do, e.g.
// for "app===demo": "unable to parse requirement: found '=', expected:
// identifier". Where Kubernetes would stop reading at a NUL byte, we treat
// it as an ordinary (and therefore invalid) character, so nothing in the
// input is silently ignored.
func ParseLabelSelector(s string) (LabelSelector, error) {
	reqs, err := parseLabelRequirements(s)
	if err != nil {
		return LabelSelector{}, err
	}
	slices.SortStableFunc(reqs, func(a, b LabelRequirement) int { return strings.Compare(a.Key, b.Key) })
	return LabelSelector{reqs: reqs}, nil
}

// LabelSelectorFromSet returns the selector "k1=v1,k2=v2,..." that matches
// objects carrying all of the given labels. Like Kubernetes'
// SelectorFromSet it does not validate them.
func LabelSelectorFromSet(set map[string]string) LabelSelector {
	reqs := make([]LabelRequirement, 0, len(set))
	for _, k := range slices.Sorted(maps.Keys(set)) {
		reqs = append(reqs, LabelRequirement{Key: k, Operator: OpEquals, Values: []string{set[k]}})
	}
	return LabelSelector{reqs: reqs}
}

// Matches reports whether labels satisfy every requirement. A nil map is an
// object without labels.
func (s LabelSelector) Matches(labels map[string]string) bool {
	for i := range s.reqs {
		if !s.reqs[i].Matches(labels) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector selects everything.
func (s LabelSelector) Empty() bool { return len(s.reqs) == 0 }

// String returns the selector in canonical form: requirements sorted by
// key, values sorted, the spacing Kubernetes uses ("a in (x,y),b!=z").
// Parsing it again gives the same selector. (Kubernetes sorts with an
// unstable sort, so with more than a dozen requirements on one key its
// order among them can differ from ours; the requirements are the same.)
func (s LabelSelector) String() string {
	var b strings.Builder
	for i := range s.reqs {
		if i > 0 {
			b.WriteByte(',')
		}
		s.reqs[i].appendTo(&b)
	}
	return b.String()
}

// Requirements returns a copy of the selector's requirements, sorted by key.
func (s LabelSelector) Requirements() []LabelRequirement {
	out := make([]LabelRequirement, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = LabelRequirement{Key: r.Key, Operator: r.Operator, Values: slices.Clone(r.Values)}
	}
	return out
}

// RequiresExactMatch reports whether the selector pins key to one value
// (key=v, key==v or key in (v)) and returns it. Indexes use it to look up
// candidates instead of scanning everything.
func (s LabelSelector) RequiresExactMatch(key string) (string, bool) {
	for _, r := range s.reqs {
		if r.Key != key {
			continue
		}
		switch r.Operator {
		case OpEquals, OpDoubleEquals, OpIn:
			if len(r.Values) == 1 {
				return r.Values[0], true
			}
		}
		return "", false
	}
	return "", false
}

// Matches reports whether labels satisfy this one requirement. Note that
// != and notin match an object that lacks the key altogether.
func (r *LabelRequirement) Matches(labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Operator {
	case OpEquals, OpDoubleEquals, OpIn:
		return ok && r.hasValue(v)
	case OpNotEquals, OpNotIn:
		return !ok || !r.hasValue(v)
	case OpExists:
		return ok
	case OpDoesNotExist:
		return !ok
	case OpGreaterThan, OpLessThan:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.Operator == OpGreaterThan {
			return have > want
		}
		return have < want
	}
	return false
}

// hasValue looks v up in the sorted Values by binary search, so a set of
// hundreds of values costs a watcher a handful of comparisons per event.
func (r *LabelRequirement) hasValue(v string) bool {
	_, found := slices.BinarySearch(r.Values, v)
	return found
}

// String returns the requirement as it is written in a selector.
func (r *LabelRequirement) String() string {
	var b strings.Builder
	r.appendTo(&b)
	return b.String()
}

func (r *LabelRequirement) appendTo(b *strings.Builder) {
	switch r.Operator {
	case OpExists:
		b.WriteString(r.Key)
		return
	case OpDoesNotExist:
		b.WriteString("!" + r.Key)
		return
	}
	b.WriteString(r.Key)
	switch r.Operator {
	case OpIn, OpNotIn:
		b.WriteString(" " + string(r.Operator) + " (")
		b.WriteString(strings.Join(r.Values, ","))
		b.WriteByte(')')
		return
	case OpGreaterThan:
		b.WriteByte('>')
	case OpLessThan:
		b.WriteByte('<')
	default: // =, ==, !=
		b.WriteString(string(r.Operator))
	}
	b.WriteString(strings.Join(r.Values, ","))
}

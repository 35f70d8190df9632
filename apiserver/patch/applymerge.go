package patch

// Merging an applied configuration into the live object, and removing
// what its manager gave up: structured-merge-diff's TypedValue.Merge
// (typed/merge.go) and Updater.prune (merge/update.go).

// mergeApplied merges cfg into live: objects member by member, map lists
// and sets element by element (an element in both is merged, one only in
// live is kept), everything else (scalars, atomic lists and objects)
// replaced by cfg's. A null in cfg removes the member, as the JSON merge
// patch the apply was before did.
func mergeApplied(live, cfg any, n node) any {
	switch c := cfg.(type) {
	case map[string]any:
		l, _ := live.(map[string]any)
		if n.atomicObject() {
			l = nil
		}
		out := make(map[string]any, len(l)+len(c))
		for k, v := range l {
			out[k] = deepCopy(v)
		}
		for k, v := range c {
			if v == nil {
				delete(out, k)
				continue
			}
			out[k] = mergeApplied(l[k], v, n.child(k))
		}
		return out
	case []any:
		l, ok := live.([]any)
		if !ok {
			return deepCopy(c)
		}
		rSteps, rOK := elementSteps(c, n)
		lSteps, lOK := elementSteps(l, n)
		if !rOK || !lOK {
			return deepCopy(c)
		}
		return mergeList(l, c, lSteps, rSteps, n.items())
	}
	return cfg
}

// mergeList merges two lists of named elements in structured-merge-diff's
// order (mergingWalker.visitListItems): live's elements in place, those
// also in cfg in cfg's order, cfg's new ones where cfg has them.
func mergeList(lhs, rhs []any, lSteps, rSteps []string, items node) []any {
	inL := map[string]int{}
	for i, s := range lSteps {
		if _, dup := inL[s]; !dup {
			inL[s] = i
		}
	}
	inR := map[string]bool{}
	var shared []string
	for _, s := range rSteps {
		inR[s] = true
		if _, ok := inL[s]; ok {
			shared = append(shared, s)
		}
	}
	merged := map[string]bool{}
	nextShared := func() string {
		if len(shared) == 0 {
			return ""
		}
		return shared[0]
	}
	takeR := func(ri int) any {
		s := rSteps[ri]
		merged[s] = true
		if len(shared) > 0 && shared[0] == s {
			shared = shared[1:]
		}
		var l any
		if li, ok := inL[s]; ok {
			l = lhs[li]
		}
		return mergeApplied(l, rhs[ri], items)
	}
	out := make([]any, 0, len(lhs)+len(rhs))
	for li, ri := 0, 0; li < len(lhs) || ri < len(rhs); {
		if li < len(lhs) && ri < len(rhs) {
			if lSteps[li] == rSteps[ri] {
				out = append(out, takeR(ri))
				li, ri = li+1, ri+1
				continue
			}
			if inR[lSteps[li]] && nextShared() != "" && nextShared() != lSteps[li] {
				li++ // shared, but not its turn: it comes from cfg's side
				continue
			}
		}
		if li < len(lhs) {
			if !inR[lSteps[li]] {
				out = append(out, deepCopy(lhs[li]))
				li++
				continue
			}
			if merged[lSteps[li]] {
				li++
				continue
			}
		}
		if ri < len(rhs) {
			out = append(out, takeR(ri))
			ri++
		}
	}
	return out
}

// prune removes from obj what the applier owned before (last) and no
// longer does (now), unless another manager owns it or something inside
// it.
func prune(obj map[string]any, last, now fieldSet, others []fieldSet) {
	for _, p := range last.paths() {
		if now.has(p) || now.hasWithin(p) || ownedWithin(others, p) {
			continue
		}
		removePath(obj, p)
	}
}

func ownedWithin(sets []fieldSet, p path) bool {
	for _, s := range sets {
		if s.hasWithin(p) || ownsAbove(s, p) {
			return true
		}
	}
	return false
}

// ownsAbove reports whether the set owns a path p is inside of.
func ownsAbove(s fieldSet, p path) bool {
	for i := 1; i < len(p); i++ {
		if s.has(p[:i]) {
			if n := s.nodeAt(p[:i]); len(n) == 0 {
				return true // a leaf: an atomic value p is part of
			}
		}
	}
	return false
}

// removePath removes the value at p: a member of an object, or a named
// element of a list.
func removePath(v any, p path) any {
	if len(p) == 0 {
		return v
	}
	step, rest := p[0], p[1:]
	switch c := v.(type) {
	case map[string]any:
		name, ok := cutPrefix(step, "f:")
		if !ok {
			return v
		}
		child, present := c[name]
		if !present {
			return v
		}
		if len(rest) == 0 {
			delete(c, name)
		} else {
			c[name] = removePath(child, rest)
		}
	case []any:
		for i, e := range c {
			if !elementIs(e, step) {
				continue
			}
			if len(rest) == 0 {
				return append(c[:i:i], c[i+1:]...)
			}
			c[i] = removePath(e, rest)
			return c
		}
	}
	return v
}

// elementIs reports whether a list element is the one a step names.
func elementIs(e any, step string) bool {
	if _, ok := cutPrefix(step, "v:"); ok {
		s, ok := valueStep(e)
		return ok && s == step
	}
	obj, ok := e.(map[string]any)
	if !ok {
		return false
	}
	keys, ok := cutPrefix(step, "k:")
	if !ok {
		return false
	}
	decoded, err := decodeJSON([]byte(keys))
	if err != nil {
		return false
	}
	want, _ := decoded.(map[string]any)
	for k, v := range want {
		if !sameValue(obj[k], v) {
			return false
		}
	}
	return true
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

func deepCopy(v any) any {
	switch c := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(c))
		for k, e := range c {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(c))
		for i, e := range c {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

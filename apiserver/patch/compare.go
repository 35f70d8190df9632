package patch

// What a write changed, field by field: structured-merge-diff's
// TypedValue.Compare (typed/compare.go). A field only in the new object
// is added, with everything inside it; one only in the old is removed,
// likewise; a scalar, atomic list or atomic object that differs is
// modified. Objects and named lists present on both sides are compared
// member by member, element by element.

// comparison is the three sets.
type comparison struct {
	added, modified, removed fieldSet
}

// compareObjects compares two objects of the kind s describes.
func compareObjects(old, cur map[string]any, s *Schema) comparison {
	c := comparison{added: fieldSet{}, modified: fieldSet{}, removed: fieldSet{}}
	root := s.rootNode()
	for _, k := range unionKeys(old, cur) {
		n := root.child(k)
		c.compare(path{"f:" + k}, old[k], cur[k], n)
	}
	stripMeta(c.added)
	stripMeta(c.modified)
	stripMeta(c.removed)
	return c
}

// compare compares the values at p.
func (c comparison) compare(p path, old, cur any, n node) {
	switch {
	case old == nil && cur == nil:
		return
	case old == nil:
		insertAll(c.added, p, cur, n)
		return
	case cur == nil:
		insertAll(c.removed, p, old, n)
		return
	}
	om, oIsMap := old.(map[string]any)
	cm, cIsMap := cur.(map[string]any)
	if oIsMap && cIsMap && !n.atomicObject() {
		for _, k := range unionKeys(om, cm) {
			c.compare(p.with("f:"+k), om[k], cm[k], n.child(k))
		}
		return
	}
	ol, oIsList := old.([]any)
	cl, cIsList := cur.([]any)
	if oIsList && cIsList {
		oSteps, oOK := elementSteps(ol, n)
		cSteps, cOK := elementSteps(cl, n)
		if oOK && cOK {
			c.compareElements(p, ol, cl, oSteps, cSteps, n.items())
			return
		}
	}
	if !sameValue(old, cur) {
		c.modified.insert(p)
	}
}

// compareElements compares two named lists element by element.
func (c comparison) compareElements(p path, old, cur []any, oSteps, cSteps []string, items node) {
	oldByStep := map[string]any{}
	for i, s := range oSteps {
		oldByStep[s] = old[i]
	}
	curByStep := map[string]any{}
	for i, s := range cSteps {
		curByStep[s] = cur[i]
	}
	for _, s := range oSteps {
		if _, kept := curByStep[s]; !kept {
			c.compare(p.with(s), oldByStep[s], nil, items)
		}
	}
	for _, s := range cSteps {
		c.compare(p.with(s), oldByStep[s], curByStep[s], items)
	}
}

// unionKeys lists the members of either object.
func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// insertAll adds p and every field inside v to fs: a value one side lacks
// is added or removed whole, each of its fields with it.
func insertAll(fs fieldSet, p path, v any, n node) {
	fs.insert(p)
	switch v := v.(type) {
	case map[string]any:
		if n.atomicObject() {
			return
		}
		for k, e := range v {
			insertAll(fs, p.with("f:"+k), e, n.child(k))
		}
	case []any:
		if steps, ok := elementSteps(v, n); ok {
			for i, e := range v {
				insertAll(fs, p.with(steps[i]), e, n.items())
			}
		}
	}
}

package store

import (
	"context"
	"slices"
	"strings"

	"listwatch/api"
)

// ListOptions selects what List returns.
type ListOptions struct {
	// Revision 0 reads the current state; N reads the state at revision N
	// (CompactedError if N is compacted, FutureRevisionError if N > current).
	Revision int64
	// StartKey, if set, is the first key considered (inclusive); paged lists
	// pass the key after the last one returned.
	StartKey string
	// Limit caps the number of items returned; 0 means no limit.
	Limit int
	// Filter, if set, keeps only matching objects; Limit counts kept ones.
	// It runs with the store's read lock held, so it must not call the store.
	Filter func(*api.Object) bool
}

// ListResult is one page of a List.
type ListResult struct {
	Items []*api.Object // in key order
	// Revision the page is consistent with (pass it back as
	// ListOptions.Revision to read the next page at the same revision).
	Revision int64
	// NextKey is the StartKey of the next page; empty when nothing follows.
	NextKey string
	// Remaining counts keys under the prefix after this page (before
	// filtering), the basis of metadata.remainingItemCount.
	Remaining int64
}

// List returns the objects whose keys start with prefix, in key order, and
// the revision they were read at. The objects are shared: read-only.
//
// A paged list (Limit > 0) stops after Limit kept objects; if any key
// follows, NextKey is the last returned key plus "\x00" (the smallest key
// after it, as etcd3's continue token uses) and Remaining counts the keys
// after the page. To read page two consistently with page one, pass
// Revision: the result's Revision, StartKey: its NextKey. That is how a
// Kubernetes continue token works: it holds exactly these two values.
func (s *Store) List(ctx context.Context, prefix string, opts ListOptions) (*ListResult, error) {
	if opts.Revision < 0 {
		return nil, invalid("negative revision %d", opts.Revision)
	}
	if opts.Limit < 0 {
		return nil, invalid("negative limit %d", opts.Limit)
	}
	if err := s.ctxErr(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	cur := s.rev.Load()
	switch rev := opts.Revision; {
	case rev == 0 || rev == cur:
		return s.listCurrentLocked(prefix, opts, cur), nil
	case rev > cur:
		return nil, &FutureRevisionError{Requested: rev, Current: cur}
	case rev < s.compacted:
		return nil, &CompactedError{Requested: rev, Compacted: s.compacted}
	default:
		return s.listPastLocked(prefix, opts, cur), nil
	}
}

// page collects one page of a list.
type page struct {
	opts ListOptions
	res  *ListResult
	last string // key of the last item kept
}

// add considers one object in key order and reports whether the page is full.
func (p *page) add(key string, obj *api.Object) (full bool) {
	if p.opts.Filter != nil && !p.opts.Filter(obj) {
		return false
	}
	p.res.Items = append(p.res.Items, obj)
	p.last = key
	return p.opts.Limit > 0 && len(p.res.Items) == p.opts.Limit
}

// finish records what follows a full page.
func (p *page) finish(remaining int) *ListResult {
	if remaining > 0 {
		p.res.NextKey = p.last + "\x00"
		p.res.Remaining = int64(remaining)
	}
	return p.res
}

// listCurrentLocked reads the current state: a range scan of the key index.
func (s *Store) listCurrentLocked(prefix string, opts ListOptions, rev int64) *ListResult {
	start, end := max(prefix, opts.StartKey), prefixEnd(prefix)
	size := s.keys.countRange(start, end)
	if opts.Limit > 0 {
		size = min(size, opts.Limit)
	}
	p := page{opts: opts, res: &ListResult{Items: make([]*api.Object, 0, size), Revision: rev}}
	for key := range s.keys.from(start) {
		if !strings.HasPrefix(key, prefix) {
			break
		}
		if p.add(key, s.objs[key].obj) {
			return p.finish(s.keys.countRange(key+"\x00", end))
		}
	}
	return p.res
}

// listPastLocked reads the state at opts.Revision by undoing, key by key, the
// history written after it: the state of a key at revision R is the
// PrevObject of its first event after R (nil, i.e. absent, if that event
// created it), or its current state if it has no event after R. Costs one
// pass over the events since R plus one over the keys in range.
func (s *Store) listPastLocked(prefix string, opts ListOptions, cur int64) *ListResult {
	at := opts.Revision
	start := max(prefix, opts.StartKey)
	past := map[string]*api.Object{} // key -> state at revision at; nil = absent
	for r := at + 1; r <= cur; r++ {
		ev := s.hist.at(r)
		if ev.Key < start || !strings.HasPrefix(ev.Key, prefix) {
			continue
		}
		if _, seen := past[ev.Key]; !seen {
			past[ev.Key] = ev.PrevObject
		}
	}
	// Keys deleted since revision at are no longer in the index.
	var gone []string
	for k, obj := range past {
		if _, ok := s.objs[k]; !ok && obj != nil {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)

	p := page{opts: opts, res: &ListResult{Items: []*api.Object{}, Revision: at}}
	full := false
	remaining := 0
	visit := func(key string, obj *api.Object) {
		switch {
		case obj == nil: // created after revision at
		case full:
			remaining++
		default:
			full = p.add(key, obj)
		}
	}
	// Merge the current keys and the deleted ones, in key order.
	for key := range s.keys.from(start) {
		if !strings.HasPrefix(key, prefix) {
			break
		}
		for len(gone) > 0 && gone[0] < key {
			visit(gone[0], past[gone[0]])
			gone = gone[1:]
		}
		obj, changed := past[key]
		if !changed {
			obj = s.objs[key].obj
		}
		visit(key, obj)
	}
	for _, key := range gone {
		visit(key, past[key])
	}
	return p.finish(remaining)
}

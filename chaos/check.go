package chaos

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"listwatch/api"
)

// The convergence checker: pure functions from what was recorded (the
// store's history, each handler's notifications, each cache's content) to
// a list of divergences, each one line naming who, which key and what is
// wrong. An empty list is a pass.

// checkHistory checks the ground truth itself: per key, revisions strictly
// increase, a key starts with Added, and after Added come Modified changes
// until a Deleted, after which only an Added may follow. A failure here is
// a bug in the store, not in the client.
func checkHistory(hist map[string][]change) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(hist)) {
		exists := false
		prev := int64(0)
		for _, c := range hist[key] {
			if c.rev <= prev {
				out = append(out, fmt.Sprintf("history %s: revision %d after %d", key, c.rev, prev))
			}
			prev = c.rev
			switch {
			case c.typ == api.Added && exists, c.typ != api.Added && !exists:
				out = append(out, fmt.Sprintf("history %s: %s at revision %d while the key %s", key, c.typ, c.rev, existence(exists)))
			}
			exists = c.typ != api.Deleted
		}
	}
	return out
}

func existence(exists bool) string {
	if exists {
		return "exists"
	}
	return "does not exist"
}

// finalState is what the history says exists at the end: key → the
// revision of its last change.
func finalState(hist map[string][]change) map[string]int64 {
	out := map[string]int64{}
	for key, cs := range hist {
		if len(cs) == 0 {
			continue
		}
		if last := cs[len(cs)-1]; last.typ != api.Deleted {
			out[key] = last.rev
		}
	}
	return out
}

// inNamespace keeps the keys of state in namespace ns ("" keeps all).
func inNamespace(state map[string]int64, ns string) map[string]int64 {
	out := map[string]int64{}
	for k, v := range state {
		if ns == "" || strings.HasPrefix(k, ns+"/") {
			out[k] = v
		}
	}
	return out
}

// diffState compares what a cache (or a handler's view) holds with what it
// should hold; each difference is one line, at most limit of them.
func diffState(who string, got, want map[string]int64, limit int) []string {
	var out []string
	keys := slices.Sorted(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case gok && !wok:
			out = append(out, fmt.Sprintf("%s %s: holds rv %d, but the key was deleted", who, k, g))
		case !gok && wok:
			out = append(out, fmt.Sprintf("%s %s: missing, the server has rv %d", who, k, w))
		case g != w:
			out = append(out, fmt.Sprintf("%s %s: holds rv %d, the server has rv %d", who, k, g, w))
		default:
			continue
		}
		if len(out) >= limit {
			out = append(out, fmt.Sprintf("%s: ... and maybe more differences", who))
			break
		}
	}
	return out
}

// keyHistory indexes one key's changes by revision.
type keyHistory struct {
	byRev   map[int64]api.EventType
	changes []change
}

func newKeyHistory(cs []change) keyHistory {
	h := keyHistory{byRev: make(map[int64]api.EventType, len(cs)), changes: cs}
	for _, c := range cs {
		h.byRev[c.rev] = c.typ
	}
	return h
}

// isState reports whether rv is a state the key really had: the revision
// of an Added or Modified change of this key.
func (h keyHistory) isState(rv int64) bool {
	t, ok := h.byRev[rv]
	return ok && t != api.Deleted
}

// deletionAfter is the revision of the key's first deletion after rv, or 0.
func (h keyHistory) deletionAfter(rv int64) int64 {
	for _, c := range h.changes {
		if c.rev > rv && c.typ == api.Deleted {
			return c.rev
		}
	}
	return 0
}

// checkSequence checks one handler's notifications for one key against
// that key's history. The rules are what a handler author relies on:
//
//   - an add comes only when the handler holds no object for the key, an
//     update or delete only when it holds one (no update after a delete
//     without a new add);
//   - every object handed over is a state the key really had, at that
//     resourceVersion;
//   - an update's old object is the one the handler was last given;
//   - resourceVersions never go backwards: an update's is at least the
//     last one (equal for a resync or an unchanged re-list), an add after
//     a delete is newer than the deletion;
//   - a delete names the deletion's revision and the history has a
//     deletion there; a tombstone (a deletion noticed at a re-list) needs
//     a deletion in the history after the last state the handler saw.
func checkSequence(who, key string, notes []note, cs []change) []string {
	h := newKeyHistory(cs)
	var out []string
	bad := func(i int, n note, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s %s: notification %d (%s rv %d): %s", who, key, i+1, n.kind, n.rv, fmt.Sprintf(format, args...)))
	}
	present := false
	cur := int64(0)   // the rv of the object the handler holds, if present
	floor := int64(0) // an add must be newer than this (the last deletion seen)
	for i, n := range notes {
		switch n.kind {
		case noteAdd:
			if present {
				bad(i, n, "add while the handler still holds rv %d", cur)
			}
			if !h.isState(n.rv) {
				bad(i, n, "the key never had resourceVersion %d", n.rv)
			}
			if n.rv <= floor || n.rv < cur {
				bad(i, n, "resourceVersion went backwards (last seen %d)", max(floor, cur))
			}
			present, cur = true, n.rv
		case noteUpdate:
			if !present {
				bad(i, n, "update of an object the handler does not hold (after a delete, without a new add)")
			}
			if present && n.oldRV != cur {
				bad(i, n, "old object has rv %d, but the handler was last given rv %d", n.oldRV, cur)
			}
			if !h.isState(n.rv) {
				bad(i, n, "the key never had resourceVersion %d", n.rv)
			}
			if n.rv < cur || n.rv <= floor {
				bad(i, n, "resourceVersion went backwards (last seen %d)", max(floor, cur))
			}
			present, cur = true, n.rv
		case noteDelete:
			if !present {
				bad(i, n, "delete of an object the handler does not hold")
			}
			if t, ok := h.byRev[n.rv]; !ok || t != api.Deleted {
				bad(i, n, "the key was not deleted at revision %d", n.rv)
			}
			if n.rv <= cur {
				bad(i, n, "deletion revision not after the last state seen (%d)", cur)
			}
			present, floor = false, max(floor, n.rv)
		case noteTombstone:
			if !present {
				bad(i, n, "tombstone for an object the handler does not hold")
			}
			del := h.deletionAfter(cur)
			if del == 0 {
				bad(i, n, "the key was never deleted after rv %d, the last state the handler saw", cur)
			}
			if n.rv >= 0 && n.rv < cur {
				bad(i, n, "tombstone's last known state is older than the last state seen (%d)", cur)
			}
			present, floor = false, max(floor, del, cur)
		}
	}
	return out
}

// checkHandler checks every key a handler was told about, plus its final
// view against the server's final state (want, already limited to the
// informer's namespace).
func checkHandler(who string, notes map[string][]note, view map[string]int64, hist map[string][]change, want map[string]int64, limit int) []string {
	var out []string
	for _, key := range slices.Sorted(maps.Keys(notes)) {
		out = append(out, checkSequence(who, key, notes[key], hist[key])...)
		if len(out) >= limit {
			return append(out[:limit], fmt.Sprintf("%s: ... and maybe more violations", who))
		}
	}
	return append(out, diffState(who+" view", view, want, limit)...)
}

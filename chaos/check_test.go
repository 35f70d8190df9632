package chaos

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// The checker must pass what a correct informer may do and catch each way
// a handler's view of a key can go wrong. The key's history in every case:
// created at 10, modified at 12 and 14, deleted at 15, created again at 20,
// modified at 22.
var keyHist = []change{
	{api.Added, 10}, {api.Modified, 12}, {api.Modified, 14}, {api.Deleted, 15}, {api.Added, 20}, {api.Modified, 22},
}

func add(rv int64) note                    { return note{kind: noteAdd, rv: rv} }
func update(old, rv int64) note            { return note{kind: noteUpdate, oldRV: old, rv: rv} }
func del(rv int64) note                    { return note{kind: noteDelete, rv: rv} }
func tombstone(last int64) note            { return note{kind: noteTombstone, rv: last} }
func seq(notes ...note) []note             { return notes }
func hist(cs ...change) []change           { return cs }
func ch(t api.EventType, rev int64) change { return change{t, rev} }

func TestCheckSequence(t *testing.T) {
	cases := []struct {
		name  string
		notes []note
		want  string // a substring of the first violation; "" for none
	}{
		{"every change", seq(add(10), update(10, 12), update(12, 14), del(15), add(20), update(20, 22)), ""},
		{"changes merged", seq(add(12), update(12, 22)), ""},
		{"seen only after the re-creation", seq(add(22)), ""},
		{"resync and unchanged re-list", seq(add(10), update(10, 10), update(10, 14), update(14, 14)), ""},
		{"deletion noticed at a re-list", seq(add(12), tombstone(12), add(22)), ""},
		{"re-list over a re-creation", seq(add(14), update(14, 20)), ""},
		{"tombstone without its last state", seq(add(14), tombstone(-1)), ""},
		{"update after a delete", seq(add(10), del(15), update(10, 20)), "update of an object the handler does not hold"},
		{"add while present", seq(add(10), add(12)), "add while the handler still holds rv 10"},
		{"delete while absent", seq(del(15)), "delete of an object the handler does not hold"},
		{"a state that never was", seq(add(11)), "the key never had resourceVersion 11"},
		{"going backwards", seq(add(12), update(12, 10)), "resourceVersion went backwards"},
		{"re-added older than the deletion", seq(add(14), del(15), add(12)), "went backwards"},
		{"wrong old object", seq(add(10), update(12, 14)), "old object has rv 12, but the handler was last given rv 10"},
		{"delete at no deletion", seq(add(10), del(14)), "the key was not deleted at revision 14"},
		{"tombstone but never deleted", seq(add(20), tombstone(20)), "never deleted after rv 20"},
		{"tombstone older than seen", seq(add(14), tombstone(12)), "older than the last state seen"},
		{"re-created before the deletion the tombstone stands for", seq(add(12), tombstone(12), add(14)), "went backwards"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkSequence("h", "ns/k", c.notes, keyHist)
			if c.want == "" {
				assert.Empty(t, got)
				return
			}
			require.NotEmpty(t, got, "violation %q not caught", c.want)
			assert.Contains(t, got[0], c.want)
			assert.Contains(t, got[0], "h ns/k: notification")
		})
	}
}

func TestCheckHistory(t *testing.T) {
	good := map[string][]change{"a": keyHist, "b": hist(ch(api.Added, 11))}
	assert.Empty(t, checkHistory(good))
	for name, h := range map[string][]change{
		"modified first":       hist(ch(api.Modified, 3)),
		"added twice":          hist(ch(api.Added, 3), ch(api.Added, 4)),
		"deleted twice":        hist(ch(api.Added, 3), ch(api.Deleted, 4), ch(api.Deleted, 5)),
		"revision not growing": hist(ch(api.Added, 3), ch(api.Modified, 3)),
	} {
		assert.NotEmpty(t, checkHistory(map[string][]change{"k": h}), name)
	}
}

func TestFinalStateAndDiff(t *testing.T) {
	h := map[string][]change{
		"ns-0/a": keyHist,
		"ns-0/b": hist(ch(api.Added, 11), ch(api.Deleted, 13)),
		"ns-1/c": hist(ch(api.Added, 16)),
	}
	want := finalState(h)
	assert.Equal(t, map[string]int64{"ns-0/a": 22, "ns-1/c": 16}, want)
	assert.Equal(t, map[string]int64{"ns-1/c": 16}, inNamespace(want, "ns-1"))

	assert.Empty(t, diffState("x", map[string]int64{"ns-0/a": 22, "ns-1/c": 16}, want, 10))
	got := diffState("x", map[string]int64{"ns-0/a": 20, "ns-0/b": 11}, want, 10)
	assert.Equal(t, []string{
		"x ns-0/a: holds rv 20, the server has rv 22",
		"x ns-0/b: holds rv 11, but the key was deleted",
		"x ns-1/c: missing, the server has rv 16",
	}, got)
	assert.Len(t, diffState("x", nil, want, 1), 2, "the limit, then a line saying there may be more")
}

func TestScheduleIsAPureFunctionOfTheSeed(t *testing.T) {
	d := 10 * time.Second
	a := schedule(7, d, DefaultFaultRates, time.Second)
	b := schedule(7, d, DefaultFaultRates, time.Second)
	assert.Equal(t, a, b, "same seed, same schedule")
	assert.NotEqual(t, a, schedule(8, d, DefaultFaultRates, time.Second), "another seed, another schedule")
	assert.True(t, slices.IsSortedFunc(a, func(x, y injection) int { return int(x.at - y.at) }))

	seen := map[FaultKind]int{}
	for _, in := range a {
		seen[in.kind]++
		assert.Less(t, in.at, d)
		assert.GreaterOrEqual(t, in.target, 0.0)
		assert.Less(t, in.target, 1.0)
	}
	for _, k := range FaultKinds() {
		assert.Positive(t, seen[k], "fault %s never scheduled", k)
	}

	// A rate so low its period is far beyond the run still fires once;
	// a zero rate never does; one fault's rate leaves the others alone.
	only := schedule(7, d, FaultRates{Kill: 0.001}, time.Second)
	require.Len(t, only, 1)
	assert.Equal(t, FaultKill, only[0].kind)
	var kills []injection
	for _, in := range a {
		if in.kind == FaultKill {
			kills = append(kills, in)
		}
	}
	rates := DefaultFaultRates
	rates.Stall = 0
	for _, in := range schedule(7, d, rates, time.Second) {
		assert.NotEqual(t, FaultStall, in.kind)
	}
	var kills2 []injection
	for _, in := range schedule(7, d, rates, time.Second) {
		if in.kind == FaultKill {
			kills2 = append(kills2, in)
		}
	}
	assert.Equal(t, kills, kills2)
}

func TestFaultKindNames(t *testing.T) {
	for _, k := range FaultKinds() {
		got, err := ParseFaultKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
		var r FaultRates
		r.SetRate(k, 0.5)
		assert.Equal(t, 0.5, r.Rate(k))
	}
	_, err := ParseFaultKind("meteor")
	assert.ErrorContains(t, err, `unknown fault "meteor"`)
	assert.Equal(t, "FaultKind(99)", FaultKind(99).String())
}

func TestConfigValidation(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultFaultRates, *cfg.Faults)
	assert.Greater(t, cfg.IdleWatchTimeout, cfg.BookmarkInterval)

	for name, c := range map[string]Config{
		"negative duration":       {Duration: -time.Second},
		"fewer keys than writers": {Keys: 2, Writers: 3},
		"idle timeout too short":  {BookmarkInterval: time.Second, IdleWatchTimeout: time.Second},
		"negative fault rate":     {Faults: &FaultRates{Kill: -1}},
		"negative history size":   {HistorySize: -1},
	} {
		_, err := c.withDefaults()
		assert.ErrorContains(t, err, "chaos: invalid Config", name)
	}
}

func TestOwnership(t *testing.T) {
	ns := []string{"ns-0", "ns-1", "ns-2"}
	keys := allKeys(40, 4, ns)
	seen := map[string]int{}
	for w := range 4 {
		owned := ownedBy(keys, w, 4)
		nss := map[string]bool{}
		for _, k := range owned {
			seen[k.String()]++
			nss[k.namespace] = true
		}
		assert.Len(t, owned, 10)
		assert.Len(t, nss, 3, "writer %d writes in every namespace", w)
	}
	assert.Len(t, seen, 40)
	for k, n := range seen {
		assert.Equal(t, 1, n, "%s has one owner", k)
	}
}

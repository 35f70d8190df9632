package api

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelectorLimits(t *testing.T) {
	terms := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf("k%d=v", i)
		}
		return strings.Join(parts, ",")
	}
	tests := []struct {
		name    string
		sel     string
		wantErr string
	}{
		{name: "ordinary", sel: "app=web,tier in (a,b)"},
		{name: "at the term limit", sel: terms(MaxSelectorTerms)},
		{name: "one term too many", sel: terms(MaxSelectorTerms + 1), wantErr: "Too many: 257 requirements, must have at most 256"},
		{name: "too long", sel: "a in (" + strings.Repeat("x,", MaxSelectorLength/2) + "y)", wantErr: "Too long: may not be more than 32768 bytes"},
		// The selector of docs/performance-limits.md: 400 KB, 57k terms.
		{name: "the 400 KB selector", sel: terms(57000), wantErr: "Too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, parse := range []func(string) error{
				func(s string) error { _, err := ParseLabelSelectorLimited(s); return err },
				func(s string) error { _, err := ParseFieldSelectorLimited(s); return err },
			} {
				err := parse(tt.sel)
				if tt.wantErr == "" {
					if strings.Contains(tt.sel, " in ") {
						continue // not a field selector
					}
					require.NoError(t, err)
					continue
				}
				require.ErrorIs(t, err, ErrSelectorTooLarge)
				require.ErrorIs(t, err, ErrInvalidSelector)
				assert.Contains(t, err.Error(), tt.wantErr)
			}
		})
	}
}

func TestLargeSetsMatchByValue(t *testing.T) {
	values := make([]string, 500)
	for i := range values {
		values[i] = fmt.Sprintf("pod-%03d", i)
	}
	sel, err := ParseLabelSelectorLimited("name in (" + strings.Join(values, ",") + "),zone notin (a,c)")
	require.NoError(t, err)
	assert.True(t, sel.Matches(map[string]string{"name": "pod-499"}))
	assert.True(t, sel.Matches(map[string]string{"name": "pod-000", "zone": "b"}))
	assert.False(t, sel.Matches(map[string]string{"name": "pod-500"}))
	assert.False(t, sel.Matches(map[string]string{"name": "pod-001", "zone": "c"}))
}

// FuzzSelectorLimits: the limited parsers agree with the plain ones on
// every selector within the limits and refuse the others with the
// checkable error; matching by binary search agrees with a linear scan.
func FuzzSelectorLimits(f *testing.F) {
	f.Add("app=web,tier in (a,b,c),!canary", "tier", "b")
	f.Add("a notin (z,y,x,w),b", "a", "w")
	f.Add(strings.Repeat("k=v,", 300), "k", "v")
	f.Fuzz(func(t *testing.T, s, key, value string) {
		plain, perr := ParseLabelSelector(s)
		limited, lerr := ParseLabelSelectorLimited(s)
		switch {
		case lerr == nil:
			require.NoError(t, perr)
			require.Equal(t, plain, limited)
		case perr == nil || len(s) > MaxSelectorLength:
			require.ErrorIs(t, lerr, ErrSelectorTooLarge)
			require.True(t, len(s) > MaxSelectorLength || len(plain.reqs) > MaxSelectorTerms)
		default:
			require.Equal(t, perr, lerr)
		}
		_, ferr := ParseFieldSelectorLimited(s)
		if ferr != nil {
			require.ErrorIs(t, ferr, ErrInvalidSelector)
		}
		if perr != nil {
			return
		}
		labels := map[string]string{key: value}
		for _, r := range plain.reqs {
			var want bool
			_, has := labels[r.Key]
			switch r.Operator {
			case OpEquals, OpDoubleEquals, OpIn:
				want = has && slices.Contains(r.Values, labels[r.Key])
			case OpNotEquals, OpNotIn:
				want = !has || !slices.Contains(r.Values, labels[r.Key])
			default:
				continue
			}
			assert.Equal(t, want, r.Matches(labels), "%s on %v", r.String(), labels)
		}
	})
}

// BenchmarkMatchAtTheLimits is about the worst a watcher's selector can
// cost per event now: 256 requirements, each a set, all matching. The
// 57,000-term selector of docs/performance-limits.md cost every event
// milliseconds for each watcher carrying it.
func BenchmarkMatchAtTheLimits(b *testing.B) {
	var parts []string
	for i := 0; i < MaxSelectorTerms; i++ {
		parts = append(parts, fmt.Sprintf("k%03d in (a,b,c,d,e,f,g,h,i,j)", i))
	}
	sel, err := ParseLabelSelectorLimited(strings.Join(parts, ","))
	if err != nil {
		b.Fatal(err)
	}
	labels := map[string]string{}
	for i := 0; i < MaxSelectorTerms; i++ {
		labels[fmt.Sprintf("k%03d", i)] = "j"
	}
	b.ReportAllocs()
	for b.Loop() {
		if !sel.Matches(labels) {
			b.Fatal("no match")
		}
	}
}

package store

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
)

// fixedNow is the clock of every test store: creationTimestamp is
// predictable, with a sub-second part the store must drop.
var fixedNow = time.Date(2024, 5, 1, 12, 30, 45, 123456789, time.FixedZone("CEST", 2*3600))

func newTestStore(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return fixedNow }
	}
	s := New(opts)
	t.Cleanup(s.Close)
	return s
}

// configMap builds a ConfigMap with one data entry.
func configMap(ns, name, value string) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Namespace: ns, Name: name}}
	if err := o.Set("data", []byte(`{"v":`+strconv.Quote(value)+`}`)); err != nil {
		panic(err)
	}
	return o
}

func cmKey(ns, name string) string { return "/registry/configmaps/" + ns + "/" + name }

// mustCreate creates a ConfigMap and returns the stored object.
func mustCreate(t testing.TB, s *Store, ns, name, value string) *api.Object {
	t.Helper()
	out, err := s.Create(context.Background(), cmKey(ns, name), configMap(ns, name, value))
	require.NoError(t, err)
	return out
}

func rv(t testing.TB, o *api.Object) int64 {
	t.Helper()
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	require.NoError(t, err, "resourceVersion %q", o.Metadata.ResourceVersion)
	return n
}

func dataOf(o *api.Object) string { return string(o.Get("data")) }

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// the store must be: on a busy machine under -race a correct one answers in
// far less, and a test that needs something to happen waits for it.
const safetyTimeout = 2 * time.Minute

// receive reads n events from w, failing the test if they take too long.
func receive(t testing.TB, w Watcher, n int) []Event {
	t.Helper()
	out := make([]Event, 0, n)
	timeout := time.After(safetyTimeout)
	for len(out) < n {
		select {
		case ev, ok := <-w.Events():
			require.True(t, ok, "watch ended after %d of %d events: %v", len(out), n, w.Err())
			out = append(out, ev)
		case <-timeout:
			require.FailNow(t, "timed out", "got %d of %d events", len(out), n)
		}
	}
	return out
}

// drainClosed reads w until its channel closes and returns what it read.
func drainClosed(t testing.TB, w Watcher) []Event {
	t.Helper()
	var out []Event
	timeout := time.After(safetyTimeout)
	for {
		select {
		case ev, ok := <-w.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			require.FailNow(t, "timed out waiting for the watch to end", "read %d events", len(out))
		}
	}
}

// requireConsecutive checks that events carry the revisions first, first+1, ...
func requireConsecutive(t testing.TB, evs []Event, first int64) {
	t.Helper()
	for i, ev := range evs {
		require.Equal(t, first+int64(i), ev.Revision, "event %d of %d", i, len(evs))
	}
}

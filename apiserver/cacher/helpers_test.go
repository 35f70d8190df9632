package cacher

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"listwatch/api"
	"listwatch/internal/fixtures"
	"listwatch/store"
)

const testPrefix = "/registry/configmaps/"

// fixture reads a recording of a real kube-apiserver from the repository's
// testdata/fixtures, failing the test if it is missing.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	return fixtures.Read(t, name)
}

// fixtureLines splits a .jsonl fixture into its lines (each with '\n').
func fixtureLines(t *testing.T, name string) [][]byte {
	t.Helper()
	b := fixture(t, name)
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	return lines
}

type env struct {
	t *testing.T
	s *store.Store
	c *Cacher
}

// newEnv starts a store and a cacher over it; both stop with the test.
func newEnv(t *testing.T, cfg Config, opts ...store.Options) *env {
	t.Helper()
	var so store.Options
	if len(opts) > 0 {
		so = opts[0]
	}
	s := store.New(so)
	cfg.Store = s
	if cfg.Prefix == "" {
		cfg.Prefix = testPrefix
	}
	if cfg.Kind == "" {
		cfg.Kind, cfg.APIVersion = "ConfigMap", "v1"
	}
	if cfg.Resource.Resource == "" {
		cfg.Resource = api.GroupResource{Resource: "configmaps"}
	}
	c, err := New(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		c.Stop()
		s.Close()
	})
	return &env{t: t, s: s, c: c}
}

func configMap(ns, name string, labels map[string]string, data string) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap",
		Metadata: api.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
	if data != "" {
		if err := o.Set("data", json.RawMessage(`{"k":`+strconv.Quote(data)+`}`)); err != nil {
			panic(err)
		}
	}
	return o
}

func key(ns, name string) string { return testPrefix + ns + "/" + name }

func (e *env) create(ns, name string, labels map[string]string, data string) *api.Object {
	e.t.Helper()
	o, err := e.s.Create(context.Background(), key(ns, name), configMap(ns, name, labels, data))
	require.NoError(e.t, err)
	return o
}

func (e *env) update(ns, name string, labels map[string]string, data string) *api.Object {
	e.t.Helper()
	o, err := e.s.Update(context.Background(), key(ns, name), configMap(ns, name, labels, data), store.Preconditions{})
	require.NoError(e.t, err)
	return o
}

func (e *env) delete(ns, name string) *api.Object {
	e.t.Helper()
	o, err := e.s.Delete(context.Background(), key(ns, name), store.Preconditions{})
	require.NoError(e.t, err)
	return o
}

func (e *env) watch(opts WatchOptions) *CacheWatcher {
	e.t.Helper()
	w, err := e.c.Watch(context.Background(), opts)
	require.NoError(e.t, err)
	e.t.Cleanup(w.Stop)
	return w
}

// safetyTimeout only turns a hang into a failure. It is no bound on how fast
// the cacher must be: on a busy machine under -race a correct one answers in
// far less, and a test that needs something to happen waits for it.
const safetyTimeout = 2 * time.Minute

// waitRev waits until the cacher has applied rev.
func (e *env) waitRev(rev int64) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { return e.c.Revision() >= rev }, safetyTimeout, time.Millisecond)
}

// frames takes exactly n frames from w.
func frames(t *testing.T, w *CacheWatcher, n int) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	var out [][]byte
	for len(out) < n {
		got, err := w.Next(ctx, nil)
		out = append(out, got...)
		require.NoError(t, err, "after %d of %d frames", len(out), n)
	}
	require.Len(t, out, n, "more frames than expected")
	return out
}

// ending takes n frames from w, the last of which ends the watch with
// the error it returns.
func ending(t *testing.T, w *CacheWatcher, n int) ([][]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), safetyTimeout)
	defer cancel()
	var out [][]byte
	for {
		got, err := w.Next(ctx, nil)
		out = append(out, got...)
		if err != nil {
			require.Len(t, out, n)
			return out, err
		}
	}
}

// events decodes n frames from w.
func events(t *testing.T, w *CacheWatcher, n int) []api.Event {
	t.Helper()
	return decode(t, frames(t, w, n))
}

func decode(t *testing.T, fs [][]byte) []api.Event {
	t.Helper()
	out := make([]api.Event, len(fs))
	for i, f := range fs {
		require.True(t, bytes.HasSuffix(f, []byte("\n")), "frame %q does not end in a newline", f)
		require.NoError(t, json.Unmarshal(f, &out[i]), "frame %q", f)
	}
	return out
}

// quiet asserts that w has nothing more to deliver: no initial events left
// to replay and no live frame queued. Call it when no write is on its way
// to the cache (after waitRev), so "nothing now" means "nothing at all"
// without waiting to see whether something turns up.
func quiet(t *testing.T, w *CacheWatcher) {
	t.Helper()
	require.False(t, w.Pending(), "unexpected frames pending")
	require.Zero(t, w.buffered(), "unexpected frames queued")
}

func rv(o *api.Object) int64 {
	n, err := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	if err != nil {
		panic(err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"listwatch/api"
	"listwatch/client"
)

// configMaps is the resource every writer writes and every informer
// watches.
var configMaps = api.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// configMapsPrefix is where the apiserver keeps ConfigMaps in its store.
const configMapsPrefix = "/registry/configmaps/"

// writerStats counts what one writer did.
type writerStats struct {
	creates, updates, deletes int64
	// retries counts requests repeated after a 429, 403, 5xx or a broken
	// connection (the faults reach writers too).
	retries int64
}

// writer owns some keys and writes to them through the API, as a
// controller would: it knows whether each of its keys exists, so every
// write it makes is valid (create an absent key; update or delete a
// present one), and with a fixed seed it makes the same writes in the same
// order every run. A write refused by a fault is retried until it is done.
type writer struct {
	index int
	rc    *client.ResourceClient
	keys  []keyRef
	// exists is the writer's knowledge of each of its keys.
	exists   []bool
	rng      *rand.Rand
	interval time.Duration
	seq      int
	pad      string
	stats    writerStats
}

// keyRef is one ConfigMap name.
type keyRef struct{ namespace, name string }

func (k keyRef) String() string { return k.namespace + "/" + k.name }

// allKeys names n ConfigMaps. Key i belongs to writer i % writers and
// lives in namespace (i / writers) % len(namespaces), so that every writer
// writes into every namespace.
func allKeys(n, writers int, namespaces []string) []keyRef {
	out := make([]keyRef, n)
	for i := range out {
		out[i] = keyRef{namespace: namespaces[(i/writers)%len(namespaces)], name: fmt.Sprintf("cm-%04d", i)}
	}
	return out
}

// ownedBy gives writer w of writers the keys it alone writes.
func ownedBy(keys []keyRef, w, writers int) []keyRef {
	var out []keyRef
	for i, k := range keys {
		if i%writers == w {
			out = append(out, k)
		}
	}
	return out
}

func newWriter(i int, rc *client.ResourceClient, keys []keyRef, seed uint64, interval time.Duration) *writer {
	return &writer{
		index: i, rc: rc, keys: keys, exists: make([]bool, len(keys)),
		rng: newRand(seed, streamWriter+uint64(i)), interval: interval,
		// A little padding makes each event the size of a small real
		// ConfigMap, so the byte counts of the socket buffers mean
		// something.
		pad: strings.Repeat("x", 200),
	}
}

// run writes until phase is done. Each request runs under ctx, not phase:
// a request cancelled in flight may still be committed by the server after
// the writers have stopped, and then the "final" state would not be final.
func (w *writer) run(ctx, phase context.Context) {
	t := time.NewTimer(w.interval)
	defer t.Stop()
	for phase.Err() == nil && ctx.Err() == nil {
		w.step(ctx, phase)
		t.Reset(w.interval)
		select {
		case <-phase.Done():
		case <-t.C:
		}
	}
}

// step makes one write: the key and the operation come from the writer's
// random stream; what the write is depends only on them and on whether
// the key exists, which the writer knows.
func (w *writer) step(ctx, phase context.Context) {
	i := w.rng.IntN(len(w.keys))
	roll := w.rng.Float64()
	w.seq++
	k := w.keys[i]
	switch {
	case !w.exists[i]:
		err := w.retry(phase, func() error {
			_, err := w.rc.Namespace(k.namespace).Create(ctx, w.object(k))
			return err
		})
		if err == nil || api.IsAlreadyExists(err) {
			// AlreadyExists: a retried create whose first attempt had
			// gone through after all.
			w.exists[i] = true
			w.stats.creates++
		}
	case roll < 0.7:
		err := w.retry(phase, func() error {
			_, err := w.rc.Namespace(k.namespace).Update(ctx, w.object(k))
			return err
		})
		switch {
		case err == nil:
			w.stats.updates++
		case api.IsNotFound(err):
			w.exists[i] = false
		}
	default:
		err := w.retry(phase, func() error {
			return w.rc.Namespace(k.namespace).Delete(ctx, k.name, client.DeleteOptions{})
		})
		if err == nil || api.IsNotFound(err) {
			w.exists[i] = false
			w.stats.deletes++
		}
	}
}

// object is the ConfigMap the writer writes next to k: its data names the
// writer and the write, so every update really changes the object.
func (w *writer) object(k keyRef) *api.Object {
	o := &api.Object{APIVersion: "v1", Kind: "ConfigMap", Metadata: api.ObjectMeta{Namespace: k.namespace, Name: k.name,
		Labels: map[string]string{"chaos/writer": fmt.Sprint(w.index)}}}
	data, _ := json.Marshal(map[string]string{"seq": fmt.Sprint(w.seq), "pad": w.pad})
	_ = o.Set("data", data) // valid JSON by construction
	return o
}

// retry repeats op while the server refuses it for a reason that passes
// (429, 403 from the fault switch, a 5xx, a broken connection), until the
// write phase is over. It returns op's last error.
func (w *writer) retry(phase context.Context, op func() error) error {
	for {
		err := op()
		if err == nil || !retriable(err) || phase.Err() != nil {
			return err
		}
		w.stats.retries++
		select {
		case <-phase.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// retriable reports whether a failed write should be tried again.
func retriable(err error) bool {
	if s, ok := api.StatusOf(err); ok {
		return s.Code == 429 || s.Code == 403 || s.Code >= 500
	}
	return true // a broken connection or a timeout: the outcome is unknown, try again
}

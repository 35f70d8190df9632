package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"
)

// ensureNamespace creates namespace ns unless it exists.
func ensureNamespace(ctx context.Context, t *target, ns string) error {
	client := t.client(nil)
	defer client.CloseIdleConnections()
	body := []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"` + ns + `"}}`)
	switch code := post(ctx, client, t.base+"/api/v1/namespaces", body); code {
	case http.StatusCreated, http.StatusConflict:
		return nil
	default:
		return fmt.Errorf("creating namespace %s: status %d", ns, code)
	}
}

// randomConfigMap is a ConfigMap named name whose one value is size
// letters and digits drawn at random (seeded by seed), so that it
// compresses about as little as base64 does rather than to nothing, as a
// repeated letter would when the server gzips a response.
func randomConfigMap(name string, seed, size int) []byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	data := make([]byte, size)
	for j := range data {
		data[j] = alphabet[rng.IntN(len(alphabet))]
	}
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"d":"%s"}}`, name, data)
}

// countObjects is how many objects the collection holds now, and the
// resourceVersion they were counted at: a consistent LIST of one item,
// plus the remainingItemCount the server gives with it.
func countObjects(ctx context.Context, t *target, coll string) (int, string, error) {
	client := t.client(nil)
	defer client.CloseIdleConnections()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, coll+"?limit=1", nil)
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	var l struct {
		Metadata struct {
			ResourceVersion    string `json:"resourceVersion"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("counting %s: the server answered %d", coll, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		return 0, "", fmt.Errorf("counting %s: %w", coll, err)
	}
	n := len(l.Items)
	if l.Metadata.RemainingItemCount != nil {
		n += int(*l.Metadata.RemainingItemCount)
	}
	if n == 0 {
		return 0, "", fmt.Errorf("%s is empty: run with -fill", coll)
	}
	return n, l.Metadata.ResourceVersion, nil
}

// nothingMatches is a label selector no storm object matches (a label key
// none of them carries): a LIST with it answers an empty list, at the cost
// of waiting for what the LIST must wait for, not of encoding every object.
const nothingMatches = "listwatch-load-never-set"

// awaitWatchCache returns once the server's watch cache of coll holds the
// state at resourceVersion rv, the revision the objects were counted at.
//
// The storm's informers LIST at resourceVersion 0, which both servers
// answer from the watch cache at once, with whatever it holds: a cache
// still behind the writes just made gives every informer that lists
// before it catches up fewer objects than were counted (a real informer
// would then receive the rest as watch events). A LIST "not older than" rv
// is the request that waits for the cache instead: kube-apiserver 1.37.2
// never sends it to etcd (k8s.io/apiserver v0.37.2
// pkg/storage/cacher/delegator/interface.go ShouldDelegateList) and its
// cacher answers it once the cache has reached rv, or after 3 s with a 504
// "Too large resource version" (watch_cache.go waitUntilFreshLocked, which
// "accept[s] arbitrarily stale result" at resourceVersion 0 only),
// as ours does (apiserver/cacher Cacher.List). A 504 or a 429 is retried
// after the server's Retry-After, until ctx ends.
func awaitWatchCache(ctx context.Context, t *target, coll, rv string) error {
	client := t.client(nil)
	defer client.CloseIdleConnections()
	q := url.Values{"resourceVersion": {rv}, "resourceVersionMatch": {"NotOlderThan"}, "labelSelector": {nothingMatches}}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, coll+"?"+q.Encode(), nil)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("waiting for the watch cache of %s to reach resourceVersion %s: %w", coll, rv, err)
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			return nil
		case http.StatusGatewayTimeout, http.StatusTooManyRequests:
			if !sleep(ctx, retryAfter(resp)) {
				return fmt.Errorf("waiting for the watch cache of %s to reach resourceVersion %s: %w", coll, rv, ctx.Err())
			}
		default:
			return fmt.Errorf("waiting for the watch cache of %s to reach resourceVersion %s: %s: %s", coll, rv, resp.Status, msg)
		}
	}
}

// markCounter counts a mark in a stream fed to it in pieces, including
// the occurrences split between two pieces.
type markCounter struct {
	mark []byte
	tail []byte // the last len(mark)-1 bytes fed
	n    int
}

func newMarkCounter(mark string) *markCounter { return &markCounter{mark: []byte(mark)} }

func (m *markCounter) feed(b []byte) {
	if len(b) == 0 {
		return
	}
	keep := len(m.mark) - 1
	// An occurrence split between the pieces lies within the tail and the
	// first keep bytes of b; one wholly inside either is counted apart.
	join := append(m.tail[:len(m.tail):len(m.tail)], b[:min(len(b), keep)]...)
	m.n += bytes.Count(join, m.mark) + bytes.Count(b, m.mark)
	if len(b) >= keep {
		m.tail = append(m.tail[:0], b[len(b)-keep:]...)
	} else {
		m.tail = append(m.tail[:0], join[max(0, len(join)-keep):]...)
	}
}

// durationsSummary is the median, the 99th percentile and the longest of
// ds, which are few enough to sort (the histogram's buckets stop at a
// minute, and a storm's informers can take longer).
func durationsSummary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(float64(len(s))*q))] }
	return fmt.Sprintf("p50 %v, p99 %v, max %v (%d informers)", at(0.5).Round(time.Millisecond),
		at(0.99).Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond), len(s))
}

// loadAverage is the first three fields of /proc/loadavg (Linux), or
// "unknown".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

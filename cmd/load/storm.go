package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// The sync storm: many informers start at once against a server that holds
// many objects, as when a controller manager restarts or a DaemonSet of
// agents rolls out. It is the story Kubernetes tells for watch-list
// (KEP-3157, "Consistent Reads from Cache" and "WatchList" feature gates):
// every informer that starts with a LIST makes the server hold that whole
// list in memory while it encodes it, all at the same time; an informer
// that starts with a watch-list receives the same objects as the events
// of one watch, streamed from the watch cache one at a time.
//
// Each informer here makes exactly the requests client-go v0.37.2's
// Reflector makes for it (tools/cache/reflector.go), on a connection of
// its own as a separate process would, and reads every byte, but keeps
// nothing: the server's work is the same, and the harness stays small next
// to the server it measures.
//
//   - list (Reflector.list, the WatchListClient gate off): a LIST with
//     limit=500 and resourceVersion=0 (relistResourceVersion; the pager's
//     page size, tools/pager), the next pages by their continue token if
//     the server paged it (a watch cache ignores the limit at
//     resourceVersion 0: storage/cacher/cacher.go computeListLimit), then
//     a watch from the list's resourceVersion with allowWatchBookmarks
//     (Reflector.watch). It has synced when its list is in.
//   - watchlist (Reflector.watchList, client-go v0.37.2's default): one
//     watch with sendInitialEvents=true, resourceVersionMatch=NotOlderThan,
//     allowWatchBookmarks and no resourceVersion, which the server answers
//     with an ADDED event per object and then a BOOKMARK annotated
//     k8s.io/initial-events-end; it has synced at that bookmark.
//
// Both read JSON (listwatch's client's default; client-go asks for
// protobuf for built-in kinds) and ask for gzip as Go's transport does.
//
// The storm starts once the watch cache holds every object counted
// (awaitWatchCache): a LIST at resourceVersion 0 gets what the cache holds
// at that moment, and a cache still behind the writes that filled the
// namespace would hand each informer fewer objects than were counted.

// stormNamespace holds the storm's objects, apart from everything else.
const stormNamespace = "sync-storm"

// stormNameMark starts every storm object's name, as it appears in JSON:
// counting it in a response counts the objects it carries.
const stormNameMark = `"name":"storm-`

// initialEventsEndMark is the annotation of the bookmark that ends a
// watch-list's initial events.
const initialEventsEndMark = `"k8s.io/initial-events-end":"true"`

// stormPageSize is client-go's pager's default page size (tools/pager
// pager.go defaultPageSize), which the Reflector's first LIST asks for.
const stormPageSize = 500

// stormWatchTimeout is the timeoutSeconds every watch asks for; client-go
// picks between 5 and 10 minutes (Reflector minWatchTimeout).
const stormWatchTimeout = "600"

func storm(ctx context.Context, t *target, c config, proc *procWatch) (report, error) {
	rep := report{scenario: fmt.Sprintf("storm: %d informers start at once, each by %s", c.informers, c.mode)}
	coll := t.base + "/api/v1/namespaces/" + stormNamespace + "/configmaps"
	if c.fill {
		if err := ensureNamespace(ctx, t, stormNamespace); err != nil {
			return rep, err
		}
		fill := c
		fill.writes, fill.writers = c.objects, max(c.writers, 8)
		begin := time.Now()
		codes := writeAll(ctx, t, coll, fill, func(i int) []byte { return randomConfigMap(fmt.Sprintf("storm-%06d", i), i, c.size) }, nil)
		rep.addf("created: %s ConfigMaps of %d B in %v", countsString(codes), c.size, time.Since(begin).Round(time.Millisecond))
	}
	want, rv, err := countObjects(ctx, t, coll)
	if err != nil {
		return rep, err
	}
	rep.addf("namespace %s holds %d ConfigMaps", stormNamespace, want)
	start := time.Now()
	if err := awaitWatchCache(ctx, t, coll, rv); err != nil {
		return rep, err
	}
	rep.addf("the watch cache reached their resourceVersion %s in %v", rv, time.Since(start).Round(time.Millisecond))
	rep.addf("load average before the storm: %s", loadAverage())
	before := proc.mark()

	results := runStorm(ctx, t, c, coll)
	err = summarizeStorm(&rep, results, want)
	rep.addf("load average after the storm: %s", loadAverage())
	if before > 0 {
		rep.addf("server RSS just before the storm: %.0f MiB (the peak below is the storm's)", float64(before)/(1<<20))
	}
	return rep, err
}

// summarizeStorm adds to rep what the informers saw, each informer that
// did not sync with want objects by itself, and returns an error if any.
// It runs once runStorm returned: every informer has stopped.
func summarizeStorm(rep *report, results []stormResult, want int) error {
	var synced []time.Duration
	var wire int64
	var wrong []string
	failed, short, retried, failures := 0, 0, 0, 0
	var firstErr error
	for i, r := range results {
		wire += r.wire
		failures += r.failures
		if r.failures > 0 {
			retried++
		}
		if firstErr == nil {
			firstErr = r.err
		}
		switch {
		case r.synced == 0:
			failed++
			wrong = append(wrong, fmt.Sprintf("informer %d never synced (%d failed attempts)", i, r.failures))
		case r.objects != want:
			short++
			wrong = append(wrong, fmt.Sprintf("informer %d synced after %v with %d objects (%s received)",
				i, r.synced.Round(time.Millisecond), r.objects, bytesString(r.wire)))
		default:
			synced = append(synced, r.synced)
		}
	}
	rep.addf("synced: %d of %d with every object (%d never synced, %d with a wrong count)",
		len(synced), len(results), failed, short)
	for _, w := range wrong {
		rep.addf("  %s", w)
	}
	rep.addf("failed attempts, each retried after a backoff: %d, by %d informers (first: %v)", failures, retried, firstErr)
	rep.addf("time to sync, from the start of the storm: %s", durationsSummary(synced))
	rep.addf("bytes on the wire: %s, %s per informer", bytesString(wire), bytesString(wire/int64(max(len(results), 1))))
	if failed+short > 0 {
		return fmt.Errorf("%d of %d informers did not sync with %d objects", failed+short, len(results), want)
	}
	return nil
}

// bytesString is n in MiB with one decimal, or in KiB or bytes when that
// would round to nothing.
func bytesString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d B", n)
	}
}

// stormResult is what one informer of the storm saw.
type stormResult struct {
	synced   time.Duration // from the storm's start; 0 until it synced
	objects  int           // in its last attempt
	wire     int64         // bytes received, as sent (compressed, if the server compressed)
	failures int           // attempts that failed and were retried
	err      error         // the first failure
}

// Backoff between an informer's failed attempts, as the Reflector's
// (tools/cache/reflector.go NewReflectorWithOptions: an exponential
// backoff manager from 800 ms to 30 s, factor 2, jitter 1.0).
const (
	stormBackoffInitial = 800 * time.Millisecond
	stormBackoffMax     = 30 * time.Second
)

// runWithRetries starts the informer by mode and, when an attempt fails
// before it synced (an error answer, a connection reset, a request
// timeout), starts over after a backoff, as a Reflector does, until ctx
// ends.
func (s *stormInformer) runWithRetries(ctx context.Context, mode string) {
	backoff := stormBackoffInitial
	for {
		s.res.objects = 0
		var err error
		if mode == "watchlist" {
			err = s.watchList(ctx)
		} else {
			err = s.listThenWatch(ctx)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		s.res.failures++
		if s.res.err == nil {
			s.res.err = err
		}
		jittered := backoff + time.Duration(rand.Int64N(int64(backoff)))
		if !sleep(ctx, jittered) {
			return
		}
		backoff = min(2*backoff, stormBackoffMax)
	}
}

// runStorm starts every informer at the same moment, waits until each has
// synced and opened its watch (or failed), then stops them all.
func runStorm(ctx context.Context, t *target, c config, coll string) []stormResult {
	results := make([]stormResult, c.informers)
	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	var ready, done sync.WaitGroup
	begin := make(chan struct{})
	var start time.Time
	for i := range results {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			cl := t.client(func(tr *http.Transport) { tr.DisableCompression = true }) // gzip, if asked, is ours to read
			defer cl.CloseIdleConnections()
			s := &stormInformer{client: cl, coll: coll, gzip: c.gzip, res: &results[i], ready: ready.Done}
			<-begin
			s.start = start
			s.runWithRetries(watchCtx, c.mode)
			s.markReady()
		}()
	}
	start = time.Now()
	close(begin)
	ready.Wait()
	stopWatches()
	done.Wait()
	return results
}

// stormInformer is one informer's requests.
type stormInformer struct {
	client    *http.Client
	coll      string
	gzip      bool
	start     time.Time
	res       *stormResult
	ready     func()
	readyOnce sync.Once
}

func (s *stormInformer) markReady() { s.readyOnce.Do(s.ready) }

// listThenWatch lists (page by page if the server pages), then watches
// from the list's revision until ctx ends.
func (s *stormInformer) listThenWatch(ctx context.Context) error {
	q := url.Values{"limit": {strconv.Itoa(stormPageSize)}, "resourceVersion": {"0"}}
	var rv string
	for {
		body, err := s.get(ctx, q)
		if err != nil {
			return err
		}
		meta, n, err := scanList(body)
		body.Close()
		if err != nil {
			return err
		}
		s.res.objects += n
		if meta.Continue == "" {
			rv = meta.ResourceVersion
			break
		}
		q = url.Values{"limit": {strconv.Itoa(stormPageSize)}, "continue": {meta.Continue}}
	}
	s.res.synced = time.Since(s.start)
	body, err := s.get(ctx, url.Values{"watch": {"true"}, "allowWatchBookmarks": {"true"},
		"resourceVersion": {rv}, "timeoutSeconds": {stormWatchTimeout}})
	if err != nil {
		return err
	}
	defer body.Close()
	s.markReady()
	_, _ = io.Copy(io.Discard, body) // until the storm ends
	return nil
}

// watchList opens the watch-list and reads its initial events until the
// bookmark that ends them, then goes on reading until ctx ends.
func (s *stormInformer) watchList(ctx context.Context) error {
	body, err := s.get(ctx, url.Values{"watch": {"true"}, "sendInitialEvents": {"true"},
		"resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"true"}, "timeoutSeconds": {stormWatchTimeout}})
	if err != nil {
		return err
	}
	defer body.Close()
	names, end := newMarkCounter(stormNameMark), newMarkCounter(initialEventsEndMark)
	buf := make([]byte, 32<<10)
	for end.n == 0 {
		n, err := body.Read(buf)
		names.feed(buf[:n])
		end.feed(buf[:n])
		if err != nil {
			return fmt.Errorf("watch-list ended before its initial-events-end bookmark: %w", err)
		}
	}
	s.res.synced = time.Since(s.start)
	s.res.objects = names.n
	s.markReady()
	_, _ = io.Copy(io.Discard, body)
	return nil
}

// get sends one GET of the collection with query q and returns the body
// once the server answered 200, decompressed if it was compressed; the
// bytes as received are counted into the result.
func (s *stormInformer) get(ctx context.Context, q url.Values) (io.ReadCloser, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.coll+"?"+q.Encode(), nil)
	req.Header.Set("Accept", "application/json")
	if s.gzip {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL.RawQuery, resp.Status, msg)
	}
	counted := &countingBody{ReadCloser: resp.Body, n: &s.res.wire}
	if resp.Header.Get("Content-Encoding") != "gzip" {
		return counted, nil
	}
	zr, err := gzip.NewReader(counted)
	if err != nil {
		counted.Close()
		return nil, fmt.Errorf("GET %s: gzip: %w", req.URL.RawQuery, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{zr, counted}, nil
}

// countingBody counts the bytes read through it.
type countingBody struct {
	io.ReadCloser
	n *int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	*c.n += int64(n)
	return n, err
}

// listHead is the list metadata a streamed JSON list starts with.
type listHead struct {
	ResourceVersion string `json:"resourceVersion"`
	Continue        string `json:"continue"`
}

// scanList reads a JSON list to its end without decoding its items: the
// metadata from its head (both servers write kind, apiVersion and
// metadata before items), and the number of storm objects in it.
func scanList(body io.Reader) (listHead, int, error) {
	var head []byte
	names := newMarkCounter(stormNameMark)
	buf := make([]byte, 32<<10)
	const headLimit = 64 << 10
	for {
		n, err := body.Read(buf)
		names.feed(buf[:n])
		if len(head) < headLimit {
			head = append(head, buf[:min(n, headLimit-len(head))]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return listHead{}, 0, err
		}
	}
	meta, err := parseListHead(head)
	return meta, names.n, err
}

// parseListHead decodes {"kind":...,"apiVersion":...,"metadata":{...} from
// the head of a list, stopping at "items".
func parseListHead(head []byte) (listHead, error) {
	dec := json.NewDecoder(bytes.NewReader(head))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return listHead{}, fmt.Errorf("a list starts with an object: %v", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return listHead{}, fmt.Errorf("list head: %w", err)
		}
		if key == "metadata" {
			var m listHead
			if err := dec.Decode(&m); err != nil {
				return listHead{}, fmt.Errorf("list metadata: %w", err)
			}
			return m, nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return listHead{}, fmt.Errorf("list head: %w", err)
		}
	}
	return listHead{}, errors.New("a list without metadata")
}

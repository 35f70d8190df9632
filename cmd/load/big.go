package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// puts: one ConfigMap of c.putSize bytes, then c.puts PUTs of it (each a
// little different, so each is a real write) from c.writers writers. What
// matters is the server's RSS: each version lives on in the store's history
// and the watch cache's ring until a budget in bytes drops it.
func puts(ctx context.Context, t *target, c config) (report, error) {
	rep := report{scenario: fmt.Sprintf("puts: %d PUTs of a %d B ConfigMap from %d writers", c.puts, c.putSize, c.writers)}
	name := "big-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	coll := t.base + "/api/v1/namespaces/default/configmaps"
	client := t.client(func(tr *http.Transport) { tr.MaxIdleConnsPerHost = c.writers })
	defer client.CloseIdleConnections()
	if code := post(ctx, client, coll, configMapJSON(name, c.putSize)); code != http.StatusCreated {
		return rep, fmt.Errorf("creating %s: status %d", name, code)
	}
	data := strings.Repeat("x", c.putSize-12)
	start := time.Now()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	next := make(chan int)
	for range c.writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				body := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name +
					`"},"data":{"d":"` + fmt.Sprintf("%011d-", i) + data + `"}}`)
				code := send(ctx, client, http.MethodPut, coll+"/"+name, body)
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < c.puts && ctx.Err() == nil; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	d := time.Since(start)
	rep.addf("PUTs: %v in %v (%.0f/s)", codes, d.Round(time.Millisecond), float64(c.puts)/d.Seconds())
	return rep, ctx.Err()
}

// lists: c.objects ConfigMaps of c.size random bytes, then c.lists LISTs of all of
// them at once, while one client GETs a single object every 50 ms. The
// server must keep its peak RSS bounded (each LIST streams; past the
// in-flight limit a LIST is answered 429) and keep answering small GETs.
// Each LIST is a consistent one (no resourceVersion), on a connection of
// its own, asks for c.accept (JSON, or protobuf as client-go's typed
// clients do), and asks for gzip when c.gzip is set, as client-go does.
func lists(ctx context.Context, t *target, c config, proc *procWatch) (report, error) {
	rep := report{scenario: fmt.Sprintf("lists: %d parallel LISTs of %d × %d B, Accept: %s", c.lists, c.objects, c.size, c.accept)}
	ns := "default"
	coll := t.base + "/api/v1/namespaces/" + ns + "/configmaps"
	run := "b" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	small1 := coll + "/" + run + "-0" // the small GET made meanwhile
	if c.fill {
		fill := c
		fill.writes, fill.writers = c.objects, max(c.writers, 8)
		start := time.Now()
		codes := writeAll(ctx, t, coll, fill, func(i int) []byte { return randomConfigMap(run+"-"+strconv.Itoa(i), i, c.size) }, nil)
		rep.addf("created: %v in %v", codes, time.Since(start).Round(time.Millisecond))
	} else {
		n, _, err := countObjects(ctx, t, coll)
		if err != nil {
			return rep, err
		}
		rep.addf("namespace %s holds %d ConfigMaps (not filled: -fill=false)", ns, n)
		small1 = coll + "?limit=1"
	}
	rep.addf("load average before the LISTs: %s", loadAverage())
	if before := proc.mark(); before > 0 {
		rep.addf("server RSS just before the LISTs: %.0f MiB (the peak below is theirs)", float64(before)/(1<<20))
	}

	var small histogram
	smallCtx, stopSmall := context.WithCancel(ctx)
	smallDone := make(chan struct{})
	go func() {
		defer close(smallDone)
		client := t.client(nil)
		defer client.CloseIdleConnections()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			s := time.Now()
			if send(smallCtx, client, http.MethodGet, small1, nil) == http.StatusOK {
				small.add(time.Since(s))
			}
			select {
			case <-smallCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	var mu sync.Mutex
	listCodes := map[int]int{}
	var listTime histogram
	var bytesRead int64
	cut := 0 // answers whose body ended in an error, not at its end
	var wg sync.WaitGroup
	start := time.Now()
	for range c.lists {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := t.client(func(tr *http.Transport) { tr.DisableCompression = !c.gzip })
			defer client.CloseIdleConnections()
			s := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, coll, nil)
			req.Header.Set("Accept", c.accept)
			resp, err := client.Do(req)
			code, n := 0, int64(0)
			if err == nil {
				n, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				code = resp.StatusCode
			}
			mu.Lock()
			listCodes[code]++
			bytesRead += n
			if code != 0 && err != nil {
				cut++
			}
			mu.Unlock()
			if code == http.StatusOK && err == nil {
				listTime.add(time.Since(s))
			}
		}()
	}
	wg.Wait()
	stopSmall()
	<-smallDone
	rep.addf("LISTs: %v in %v, %.0f MiB read", listCodes, time.Since(start).Round(time.Millisecond), float64(bytesRead)/(1<<20))
	rep.addf("answers cut short (the body ended in an error): %d", cut)
	rep.addf("LIST duration (whole 200s): %s", listTime.summary())
	rep.addf("small GETs meanwhile: %s", small.summary())
	rep.addf("load average after the LISTs: %s", loadAverage())
	return rep, ctx.Err()
}

// send makes one request and returns its status (0 on a transport error).
func send(ctx context.Context, client *http.Client, method, u string, body []byte) int {
	req, _ := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

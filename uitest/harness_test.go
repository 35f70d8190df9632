package uitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"listwatch/apiserver"
	"listwatch/internal/leakcheck"
	"listwatch/store"
)

// namespace is where the tests' objects live; the page watches it.
const namespace = "ui-test"

// appearWithin bounds the wait for a change to reach the page. Every wait
// ends as soon as the page shows what it waits for; the bound only turns a
// hang into a failure, so it is generous enough for a busy machine running
// a browser. How fast a change appears is measured, not asserted here.
const appearWithin = 2 * time.Minute

// recoverWithin bounds the wait for a recovery (the Reflector's first
// backoff is 0.8 to 1.6 s, then a list and a watch); like appearWithin, it
// only turns a hang into a failure.
const recoverWithin = 2 * time.Minute

// env is one apiserver (faults on) and one browser tab showing its page.
type env struct {
	t      *testing.T
	srv    *apiserver.Server
	http   *http.Client
	tab    context.Context
	cancel context.CancelFunc
}

// newEnv starts a server, creates the test namespace, opens the page on it
// and waits until the page's watch is open.
func newEnv(t *testing.T, query string) *env {
	t.Helper()
	// Registered first, so it runs last: after the tab and the server are
	// gone, nothing of this test may still run.
	t.Cleanup(leakcheck.Check(t))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // the server's life: the whole test
	// Revisions from the clock, as cmd/apiserver starts them: the page must
	// be readable with sixteen-digit resourceVersions.
	srv, err := apiserver.Start(ctx, apiserver.Config{EnableFaults: true, StartRevision: store.RevisionFromClock(time.Now())})
	require.NoError(t, err)
	tab, cancelTab := chromedp.NewContext(browserCtx)
	e := &env{t: t, srv: srv, http: &http.Client{Transport: &http.Transport{}}, tab: tab}
	e.cancel = func() {
		cancelTab()
		stopCtx, stop := context.WithTimeout(context.Background(), recoverWithin)
		defer stop()
		require.NoError(t, srv.Stop(stopCtx))
		e.http.CloseIdleConnections()
		cancel()
	}
	t.Cleanup(e.cancel)
	e.do("POST", "/api/v1/namespaces", fmt.Sprintf(`{"metadata":{"name":%q}}`, namespace), http.StatusCreated)
	require.NoError(t, chromedp.Do(tab,
		chromedp.EmulateViewport(viewportW, viewportH),
		chromedp.Navigate(srv.URL()+"/ui/?namespace="+namespace+query)))
	e.waitTimeline("watch opened from RV", recoverWithin)
	return e
}

// openTab opens another tab on the page, for the rest of the test.
func (e *env) openTab(query string) context.Context {
	e.t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	e.t.Cleanup(cancel)
	require.NoError(e.t, chromedp.Do(tab,
		chromedp.EmulateViewport(viewportW, viewportH),
		chromedp.Navigate(e.srv.URL()+"/ui/?namespace="+namespace+query)))
	return tab
}

// do sends a REST request and checks its status code.
func (e *env) do(method, path, body string, want int) []byte {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL()+path, strings.NewReader(body))
	require.NoError(e.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, want, resp.StatusCode, "%s %s: %s", method, path, b)
	return b
}

// createConfigMap creates name in ns over REST.
func (e *env) createConfigMap(ns, name string) {
	e.t.Helper()
	e.do("POST", "/api/v1/namespaces/"+ns+"/configmaps",
		fmt.Sprintf(`{"metadata":{"name":%q,"labels":{"app":"demo"}},"data":{"k":"v"}}`, name), http.StatusCreated)
}

// serverRows is the server's truth for the page's view: "ns/name@rv" of
// every configmap in the test namespace, sorted.
func (e *env) serverRows() []string {
	e.t.Helper()
	var list struct {
		Items []struct {
			Metadata struct{ Name, Namespace, ResourceVersion string }
		}
	}
	require.NoError(e.t, json.Unmarshal(e.do("GET", "/api/v1/namespaces/"+namespace+"/configmaps", "", http.StatusOK), &list))
	rows := []string{}
	for _, it := range list.Items {
		rows = append(rows, it.Metadata.Namespace+"/"+it.Metadata.Name+"@"+it.Metadata.ResourceVersion)
	}
	slices.Sort(rows)
	return rows
}

// tableRowsJS reads the page's table the way the room does: every row still
// shown (not the struck-through deleted ones), as "key@rv", sorted.
const tableRowsJS = `[...document.querySelectorAll('#objects tbody tr[data-key]:not([data-gone])')].map(tr => tr.dataset.key + '@' + tr.dataset.rv).sort()`

func (e *env) tableRows() []string {
	e.t.Helper()
	rows, err := chromedp.Run(e.tab, chromedp.Evaluate[[]string](tableRowsJS))
	require.NoError(e.t, err)
	return rows
}

// waitJS waits until the JavaScript expression is true in the page; Poll
// checks on every animation frame, so this returns as soon as it holds.
func (e *env) waitJS(expr string, within time.Duration, msg string) {
	e.t.Helper()
	_, err := chromedp.Run(e.tab, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(within)))
	if err != nil {
		e.t.Fatalf("%s: not within %v (%v)\ntimeline:\n%s", msg, within, err, strings.Join(e.timeline(), "\n"))
	}
}

// waitTableMatchesServer waits until the table shows exactly the server's
// objects at the server's resourceVersions.
func (e *env) waitTableMatchesServer(within time.Duration) {
	e.t.Helper()
	want := e.serverRows()
	b, _ := json.Marshal(want)
	e.waitJS(fmt.Sprintf(`JSON.stringify(%s) === %q`, tableRowsJS, string(b)), within,
		fmt.Sprintf("table shows %v", want))
	require.Equal(e.t, e.serverRows(), e.tableRows(), "the server did not change meanwhile")
}

// timelineHasJS is true once some timeline entry contains s.
func timelineHasJS(s string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('#timeline li .what')].some(x => x.textContent.includes(%q))`, s)
}

func (e *env) waitTimeline(s string, within time.Duration) {
	e.t.Helper()
	e.waitJS(timelineHasJS(s), within, fmt.Sprintf("timeline entry %q", s))
}

// timeline returns the timeline's entries, oldest first.
func (e *env) timeline() []string {
	lines, _ := chromedp.Run(e.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#timeline li')].map(li => li.textContent).reverse()`))
	return lines
}

// countTimeline counts the entries that contain s.
func (e *env) countTimeline(s string) int {
	n := 0
	for _, l := range e.timeline() {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}

// fault pulls a fault switch over HTTP, as the page's buttons do.
func (e *env) fault(name string) {
	e.t.Helper()
	e.do("POST", "/faults/"+name, "", http.StatusOK)
}

// curlFault pulls a fault switch as curl in a terminal does: with curl's
// User-Agent, so the page can say who.
func (e *env) curlFault(name string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.srv.URL()+"/faults/"+name, nil)
	require.NoError(e.t, err)
	req.Header.Set("User-Agent", curlAgent)
	resp, err := e.http.Do(req)
	require.NoError(e.t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode)
}

// curlAgent is the User-Agent curl sends.
const curlAgent = "curl/8.5.0"

// watchAs opens a chunked watch of path (with ?watch=1) as a client with
// the given User-Agent, reads it until the test ends, and waits for it to
// be open (its 200).
func (e *env) watchAs(path, userAgent string) {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL()+path, nil)
	require.NoError(e.t, err)
	req.Header.Set("User-Agent", userAgent)
	resp, err := e.http.Do(req)
	if err != nil {
		cancel()
		require.NoError(e.t, err)
	}
	require.Equal(e.t, http.StatusOK, resp.StatusCode, "GET %s", path)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-drained
		resp.Body.Close()
	})
}

// screenshot saves the viewport as name.png and checks it is a real
// 1280x720 picture. With -update-screenshots it goes to docs/images.
func (e *env) screenshot(name string) {
	e.t.Helper()
	// The server panel refreshes about once a second: wait until it shows
	// the store as it is now and the page's own watch, so the picture is
	// of one moment.
	var view struct {
		StoreRevision int64 `json:"storeRevision"`
	}
	require.NoError(e.t, json.Unmarshal(e.do("GET", "/debug/listwatch", "", http.StatusOK), &view))
	e.waitJS(fmt.Sprintf(`document.querySelector('#server-summary').dataset.storeRv === "%d" && !!document.querySelector('#watchers tr[data-own="true"]')`, view.StoreRevision),
		recoverWithin, "the server panel shows the current store and the page's watch")
	buf, err := chromedp.Run(e.tab, chromedp.CaptureScreenshot())
	require.NoError(e.t, err)
	img, err := png.Decode(bytes.NewReader(buf))
	require.NoError(e.t, err)
	require.Equal(e.t, viewportW, img.Bounds().Dx())
	require.Equal(e.t, viewportH, img.Bounds().Dy())
	dir := e.t.TempDir()
	if *updateScreenshots {
		dir = filepath.Join("..", "docs", "images")
		require.NoError(e.t, os.MkdirAll(dir, 0o755))
	}
	require.NoError(e.t, os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644))
}

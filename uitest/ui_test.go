package uitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreatedObjectsAppearAndDeletedRowsGo(t *testing.T) {
	e := newEnv(t, "")
	for _, name := range []string{"alpha", "beta", "gamma"} {
		e.createConfigMap(namespace, name)
	}
	// Within two seconds of the last write, the table is the server's.
	e.waitTableMatchesServer(appearWithin)
	e.waitTimeline("ADDED "+namespace+"/gamma RV", appearWithin)
	e.screenshot("ui-added")

	e.do("DELETE", "/api/v1/namespaces/"+namespace+"/configmaps/beta", "", http.StatusOK)
	e.waitJS(`!document.querySelector('#objects tr[data-key="`+namespace+`/beta"]')`, appearWithin, "the deleted row is gone")
	e.waitTableMatchesServer(appearWithin)
	e.waitTimeline("DELETED "+namespace+"/beta RV", appearWithin)
}

func TestPageCreatesEditsAndDeletes(t *testing.T) {
	e := newEnv(t, "")
	obj := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"from-page","namespace":%q},"data":{"greeting":"hello"}}`, namespace)
	require.NoError(t, chromedp.Do(e.tab,
		chromedp.SetValue(chromedp.CSS("#editor"), obj),
		chromedp.Click(chromedp.CSS("#create"))))
	e.waitTimeline("ADDED "+namespace+"/from-page", appearWithin)
	e.waitTableMatchesServer(appearWithin)

	// edit: load the row into the editor, change the data, update.
	require.NoError(t, chromedp.Do(e.tab,
		chromedp.Click(chromedp.CSS(`#objects tr[data-key="`+namespace+`/from-page"] button[title^="load"]`))))
	text, err := chromedp.Run(e.tab, chromedp.Value(chromedp.CSS("#editor")))
	require.NoError(t, err)
	require.Contains(t, text, `"hello"`)
	require.NoError(t, chromedp.Do(e.tab,
		chromedp.SetValue(chromedp.CSS("#editor"), strings.Replace(text, `"hello"`, `"bonjour"`, 1)),
		chromedp.Click(chromedp.CSS("#update"))))
	e.waitTimeline("MODIFIED "+namespace+"/from-page", appearWithin)
	var got struct{ Data map[string]string }
	require.NoError(t, json.Unmarshal(e.do("GET", "/api/v1/namespaces/"+namespace+"/configmaps/from-page", "", http.StatusOK), &got))
	assert.Equal(t, "bonjour", got.Data["greeting"])
	e.waitTableMatchesServer(appearWithin)

	require.NoError(t, chromedp.Do(e.tab,
		chromedp.Click(chromedp.CSS(`#objects tr[data-key="`+namespace+`/from-page"] button.danger`))))
	e.waitTimeline("DELETED "+namespace+"/from-page", appearWithin)
	e.do("GET", "/api/v1/namespaces/"+namespace+"/configmaps/from-page", "", http.StatusNotFound)
	e.waitTableMatchesServer(appearWithin)
}

// A click whose press and release straddle a redraw of the table still
// deletes. The table is redrawn whenever the store changes, and every
// 250 ms while a row fades; a busy machine, or a slow hand, can take
// longer than that between press and release. A row that shows the same
// object keeps its elements, so the release lands on the button pressed.
func TestClickAcrossARedrawDeletes(t *testing.T) {
	e := newEnv(t, "")
	e.createConfigMap(namespace, "pressed")
	e.waitTableMatchesServer(appearWithin)
	del := `#objects tr[data-key="` + namespace + `/pressed"] button.danger`
	require.NoError(t, chromedp.Do(e.tab, chromedp.ScrollIntoView(chromedp.CSS(del))))
	at, err := chromedp.Run(e.tab, chromedp.Evaluate[[]float64](fmt.Sprintf(
		`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, del)))
	require.NoError(t, err)
	require.Len(t, at, 2)
	require.NoError(t, chromedp.Do(e.tab, chromedp.MouseEvent(chromedp.MousePressed, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1))))
	// Between press and release, a change to another object redraws the
	// table: the page shows it once it has drawn it.
	e.createConfigMap(namespace, "redraw")
	e.waitTableMatchesServer(appearWithin)
	require.NoError(t, chromedp.Do(e.tab, chromedp.MouseEvent(chromedp.MouseReleased, at[0], at[1], chromedp.ButtonLeft, chromedp.ClickCount(1))))
	e.waitTimeline("DELETED "+namespace+"/pressed", appearWithin)
	e.do("GET", "/api/v1/namespaces/"+namespace+"/configmaps/pressed", "", http.StatusNotFound)
}

func TestKillWatchesRewatchesWithoutRelisting(t *testing.T) {
	e := newEnv(t, "")
	e.createConfigMap(namespace, "before")
	e.waitTableMatchesServer(appearWithin)
	lists := e.countTimeline("list at resourceVersion")

	// Through the page's own button, as in a workshop.
	require.NoError(t, chromedp.Do(e.tab, chromedp.Click(chromedp.CSS(`button[data-fault="kill-watches"]`))))
	e.waitTimeline("FAULT kill-watches", appearWithin)
	e.waitTimeline("re-watching from", recoverWithin)
	e.createConfigMap(namespace, "after")
	e.waitTableMatchesServer(recoverWithin)
	assert.Equal(t, lists, e.countTimeline("list at resourceVersion"), "a dropped watch is re-watched, not re-listed:\n%s",
		strings.Join(e.timeline(), "\n"))
	e.screenshot("ui-kill-watches")
	// The server panel has read the debug view since the switch was
	// answered (screenshot waits for that): the page's own switch is in
	// the timeline once, from its button, not again from the log.
	assert.Equal(t, 1, e.countTimeline("FAULT kill-watches"), "%s", strings.Join(e.timeline(), "\n"))
}

func TestCompactionMakesThePageRelist(t *testing.T) {
	e := newEnv(t, "")
	e.createConfigMap(namespace, "kept")
	e.createConfigMap(namespace, "doomed")
	e.waitTableMatchesServer(appearWithin)

	// Changes the page does not watch move the store's revision past the
	// page's last resourceVersion; compaction then makes that RV too old.
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"elsewhere"}}`, http.StatusCreated)
	e.createConfigMap("elsewhere", "unseen")
	e.fault("compact")
	e.fault("kill-watches")
	e.waitTimeline("410 Expired", recoverWithin)
	e.waitTimeline("re-listing", recoverWithin)
	// A change made while the page is between its 410 and its list: the
	// list brings it in.
	e.do("DELETE", "/api/v1/namespaces/"+namespace+"/configmaps/doomed", "", http.StatusOK)
	e.waitTimeline("listed", recoverWithin)
	e.waitTableMatchesServer(recoverWithin)
	e.screenshot("ui-relist-after-410")
}

func TestServerPanelMarksThePagesOwnWatch(t *testing.T) {
	e := newEnv(t, "")
	e.waitJS(`!!document.querySelector('#watchers tr[data-own="true"]')`, recoverWithin, "the server panel marks the page's watch")
	// Another client watches too, over chunked HTTP, as kubectl get -w does.
	e.watchAs("/api/v1/configmaps?watch=1&allowWatchBookmarks=true", "kubectl/v1.32.0 (linux/amd64)")
	for _, name := range []string{"one", "two"} {
		e.createConfigMap(namespace, name)
	}
	e.waitTableMatchesServer(appearWithin)

	e.waitJS(`document.querySelectorAll('#watchers tr[data-watcher]').length === 2`, recoverWithin, "the panel lists both watches")
	rows, err := chromedp.Run(e.tab, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll('#watchers tr[data-watcher]')].map(tr => [tr.dataset.own, tr.dataset.watcher.split('/')[0], tr.querySelector('.who .line').textContent, tr.querySelector('.who .sub').textContent, tr.querySelector('.watcher .sub').textContent.replace('this page', '')].join(' '))`))
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"true configmaps browser 127.0.0.1 · h1 ws " + namespace,
		"false configmaps kubectl/v1.32.0 127.0.0.1 · h1 chunked all namespaces"}, rows)
	id, err := chromedp.Run(e.tab, chromedp.Evaluate[string](`document.querySelector('#watchers tr[data-own="true"]').dataset.watcher`))
	require.NoError(t, err)

	var view struct {
		Caches []struct {
			Resource string `json:"resource"`
			Watchers []struct {
				ID          int64  `json:"id"`
				Namespace   string `json:"namespace"`
				Description string `json:"description"`
			} `json:"watchers"`
		} `json:"watchCaches"`
	}
	require.NoError(t, json.Unmarshal(e.do("GET", "/debug/listwatch", "", http.StatusOK), &view))
	found := false
	for _, c := range view.Caches {
		for _, w := range c.Watchers {
			if fmt.Sprintf("%s/%d", c.Resource, w.ID) == id {
				found = true
				assert.Equal(t, "configmaps", c.Resource)
				assert.Equal(t, namespace, w.Namespace)
				assert.Contains(t, w.Description, "Chrome", "the browser's User-Agent")
			}
		}
	}
	require.True(t, found, "watcher %s is in the debug view", id)
	// Every column of the watchers table shows at 1280 px, without
	// scrolling sideways.
	fits, err := chromedp.Run(e.tab, chromedp.Evaluate[bool](
		`(() => { const box = document.querySelector('#watchers').parentElement; return box.scrollWidth <= box.clientWidth; })()`))
	require.NoError(t, err)
	assert.True(t, fits, "the watchers table fits its panel")
	e.screenshot("ui-server-panel")
}

func TestWatchTimeoutEndsTheWatchAndThePageWatchesAgain(t *testing.T) {
	// timeout=2: the page asks for timeoutSeconds=2, as a workshop sets it.
	e := newEnv(t, "&timeout=2")
	lists := e.countTimeline("list at resourceVersion")
	e.waitTimeline("the server closed the websocket (1000)), re-watching from", recoverWithin)
	e.createConfigMap(namespace, "after-timeout")
	e.waitTableMatchesServer(recoverWithin)
	assert.Equal(t, lists, e.countTimeline("list at resourceVersion"), "a watch that ends cleanly is not a reason to re-list")
}

func TestStalledWatchIsCutByTheIdleTimer(t *testing.T) {
	// idle=3: the page cuts a watch that received nothing for 3 s, as the
	// Go client's IdleWatchTimeout does. A stalled watch stays open and
	// silent; without the cut, the change below would never arrive.
	e := newEnv(t, "&idle=3")
	e.fault("stall-watches")
	e.createConfigMap(namespace, "after-stall")
	e.waitTimeline("idle for 3s: connection presumed dead), re-watching from", recoverWithin)
	e.waitTableMatchesServer(recoverWithin)
}

func TestRefusedWatchIsRetriedUntilTheFaultEnds(t *testing.T) {
	e := newEnv(t, "")
	e.createConfigMap(namespace, "before") // an event, so the killed watch was not a very short one
	e.waitTableMatchesServer(appearWithin)
	opened := e.countTimeline("watch opened from RV")
	// The fault lasts until the test ends it, once the page has seen a
	// refusal: a fault of a fixed while could end before a busy machine's
	// page even tried again.
	e.do("POST", "/faults/fail-resource?resource=configmaps&code=429&duration=1h", "", http.StatusOK)
	e.fault("kill-watches")
	// The re-watch is refused (429) until the fault ends; the page backs
	// off and watches again from the same RV, without a list.
	e.waitTimeline("could not be opened", recoverWithin)
	e.do("POST", "/faults/fail-resource?resource=configmaps&code=429&duration=0s", "", http.StatusOK)
	e.waitJS(fmt.Sprintf(`[...document.querySelectorAll('#timeline li .what')].filter(x => x.textContent.startsWith("watch opened from RV")).length > %d`, opened),
		recoverWithin, "a watch opened again after the fault")
	assert.Equal(t, 1, e.countTimeline("list at resourceVersion"), "no re-list:\n%s", strings.Join(e.timeline(), "\n"))
	e.createConfigMap(namespace, "after-429")
	e.waitTableMatchesServer(appearWithin)
}

// Two tabs watching the same thing from the same RV: each marks only its
// own watch, found by the exact request it sent (they drew different
// timeouts, as two Reflectors almost always do).
func TestTwoTabsEachMarkTheirOwnWatch(t *testing.T) {
	e := newEnv(t, "&timeout=300")
	other := e.openTab("&timeout=301")
	ownIDs := func(tab context.Context) []string {
		t.Helper()
		_, err := chromedp.Run(tab, chromedp.Poll[bool](
			`document.querySelectorAll('#watchers tr[data-watcher]').length === 2 && document.querySelectorAll('#watchers tr[data-own="true"]').length === 1`,
			chromedp.WithPollingTimeout(recoverWithin)))
		require.NoError(t, err, "two watchers listed, one of them marked")
		ids, err := chromedp.Run(tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#watchers tr[data-own="true"]')].map(tr => tr.dataset.watcher)`))
		require.NoError(t, err)
		return ids
	}
	first, second := ownIDs(e.tab), ownIDs(other)
	require.Len(t, first, 1)
	require.Len(t, second, 1)
	assert.NotEqual(t, first[0], second[0])
}

// The workshop's "see it live" step 4: a stalled watch misses a delete;
// after compact and kill watches, the re-watch gets 410 and the re-list's
// Replace lights the row the page never heard go (DELETED, struck through,
// for a moment: a MutationObserver notes it, so a busy machine cannot miss
// it between two polls).
func TestStalledWatchMissesADeleteTheRelistFinds(t *testing.T) {
	e := newEnv(t, "")
	e.createConfigMap(namespace, "kept")
	e.createConfigMap(namespace, "doomed")
	e.waitTableMatchesServer(appearWithin)
	_, err := chromedp.Run(e.tab, chromedp.Evaluate[bool](`(() => {
  window.goneKeys = [];
  new MutationObserver(() => {
    for (const tr of document.querySelectorAll('#objects tbody tr[data-gone]')) window.goneKeys.push(tr.dataset.key);
  }).observe(document.querySelector('#objects'), { subtree: true, childList: true, attributes: true });
  return true;
})()`))
	require.NoError(t, err)

	e.fault("stall-watches")
	e.do("DELETE", "/api/v1/namespaces/"+namespace+"/configmaps/doomed", "", http.StatusOK)
	e.fault("compact")
	e.fault("kill-watches")
	for _, line := range []string{"ERROR 410 Expired", "410 Expired", "re-listing", `list at resourceVersion "`} {
		e.waitTimeline(line, recoverWithin)
	}
	e.waitJS(`window.goneKeys.includes("`+namespace+`/doomed")`, recoverWithin, "the re-list shows doomed as DELETED")
	e.waitTableMatchesServer(recoverWithin)
	assert.Zero(t, e.countTimeline("DELETED "+namespace+"/doomed"), "the stalled watch never delivered the delete")
}

// A workshop room on a projector at 1280x720: an attendee's object with a
// 30-character name, ten watchers of the room across three resources (two
// more in another attendee's namespace, left out of the page's view of
// its own), and faults switched with curl from a terminal.
func TestWorkshopRoomFitsTheProjector(t *testing.T) {
	e := newEnv(t, "")
	name := "feature-flags-production-eu-01"
	require.Len(t, name, 30)
	e.do("POST", "/api/v1/namespaces/"+namespace+"/configmaps", fmt.Sprintf(
		`{"metadata":{"name":%q,"labels":{"app":"feature-flags","tier":"production"}},"data":{"checkout":"new-flow","dark-mode":"rolled-out-gradually","search":"v2"}}`,
		name), http.StatusCreated)
	e.createConfigMap(namespace, "alpha")
	e.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"bob"}}`, http.StatusCreated)

	ns := "/api/v1/namespaces/" + namespace
	for _, w := range []struct{ path, agent string }{
		{ns + "/configmaps?watch=1", "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"},
		{ns + "/configmaps?watch=1&labelSelector=app%3Dfeature-flags", "rewatch/v0.1"},
		{ns + "/configmaps?watch=1&allowWatchBookmarks=true", "listwatch/v0.1 (tour)"},
		{"/api/v1/configmaps?watch=1", "controller-manager/v0.1"},
		{ns + "/secrets?watch=1", "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"},
		{ns + "/secrets?watch=1&allowWatchBookmarks=true", "Go-http-client/1.1"},
		{"/api/v1/secrets?watch=1", "controller-manager/v0.1"},
		{"/api/v1/namespaces?watch=1", "kubectl/v1.32.0 (linux/amd64) kubernetes/70d3cc9"},
		{"/api/v1/namespaces?watch=1&allowWatchBookmarks=true", "controller-manager/v0.1"},
		{"/api/v1/namespaces?watch=1&labelSelector=team", curlAgent},
		{"/api/v1/namespaces/bob/configmaps?watch=1", "rewatch/v0.1"},
		{"/api/v1/namespaces/bob/secrets?watch=1", "rewatch/v0.1"},
	} {
		e.watchAs(w.path, w.agent)
	}
	e.waitTableMatchesServer(appearWithin)
	e.waitJS(`document.querySelectorAll('#watchers tr[data-watcher]').length === 11 && document.querySelector('#watchers-hidden').dataset.hidden === "2"`,
		recoverWithin, "the panel shows the page's watch and the ten of its namespace and of all namespaces, and counts bob's two")

	ids, err := chromedp.Run(e.tab, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#watchers tr[data-watcher]')].map(tr => tr.dataset.watcher)`))
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, id := range ids {
		assert.False(t, seen[id], "watcher id %s shown twice: %v", id, ids)
		seen[id] = true
	}
	assert.Contains(t, ids, "secrets/1")
	assert.Contains(t, ids, "namespaces/1")

	problems, err := chromedp.Run(e.tab, chromedp.Evaluate[[]string](fitsJS))
	require.NoError(t, err)
	assert.Empty(t, problems, "at 1280x720")

	// A switch thrown with curl, as the workshop's terminals do: in the
	// timeline like the page's own buttons, with who threw it. Compaction
	// alone leaves the ring its events, but none can be replayed: the ring
	// column says so, and the window is one RV.
	e.curlFault("compact")
	e.waitTimeline("FAULT compact by "+curlAgent+" from 127.0.0.1 (compactedRevision=", appearWithin)
	e.waitJS(`document.querySelector('#caches tr[data-resource="configmaps"] td[data-ring]').dataset.ring.startsWith("0/")`,
		recoverWithin, "the ring shows no replayable event after the compaction")
	problems, err = chromedp.Run(e.tab, chromedp.Evaluate[[]string](fitsJS))
	require.NoError(t, err)
	assert.Empty(t, problems, "at 1280x720, with the fault in the timeline")
	e.screenshot("ui-workshop-room")
}

// fitsJS lists what does not fit the projector: a column or the page that
// scrolls sideways, an edit or del button outside its column, a name or a
// label or value that wraps or is cut, a watcher below its box's edge.
const fitsJS = `(() => {
  const bad = [];
  const root = document.documentElement;
  if (root.scrollWidth > root.clientWidth) bad.push("the page scrolls sideways");
  for (const box of document.querySelectorAll("section, .scroll")) {
    if (box.scrollWidth > box.clientWidth) bad.push((box.id || box.className) + " scrolls sideways: " + box.scrollWidth + " > " + box.clientWidth);
  }
  const col = document.querySelector("#informer").getBoundingClientRect();
  for (const b of document.querySelectorAll("#objects td.actions button")) {
    const r = b.getBoundingClientRect();
    if (r.width === 0 || r.left < col.left || r.right > col.right) bad.push("the " + b.textContent + " button is outside its column");
  }
  for (const p of document.querySelectorAll("#objects .name, #objects .piece")) {
    if (p.getClientRects().length !== 1) bad.push(p.textContent + " wraps");
    if (p.scrollWidth > p.clientWidth) bad.push(p.textContent + " is cut");
  }
  for (const w of document.querySelectorAll("#timeline .what .nb")) {
    if (w.getClientRects().length !== 1) bad.push("timeline: " + w.textContent + " wraps");
  }
  const tl = document.querySelector("#timeline");
  if (tl.scrollWidth > tl.clientWidth) bad.push("the timeline scrolls sideways");
  const box = document.querySelector("#watchers-box").getBoundingClientRect();
  for (const tr of document.querySelectorAll("#watchers tr[data-watcher]")) {
    if (tr.getBoundingClientRect().bottom > box.bottom + 1) bad.push("watcher " + tr.dataset.watcher + " is below the box's edge");
  }
  return bad;
})()`

// serverpanel.js: the server's side, live. About once a second it reads
// the debug view (GET /debug/listwatch, apiserver/debug.go) and draws each
// watch cache's window and every open watcher, marking the page's own.

import { request } from "./client.js";
import { clear, el, rvText, text } from "./dom.js";

export const DebugPath = "/debug/listwatch";
const refreshMs = 1000;

export class ServerPanel {
  // ownWatch() returns the Reflector's currentWatch (or null) and its
  // options, so the panel can tell which watcher is the page's.
  constructor(root, ownWatch, onState) {
    this.root = root;
    this.ownWatch = ownWatch;
    this.onState = onState || (() => {});
    this.stopped = false;
  }

  start() {
    const tick = async () => {
      if (this.stopped) return;
      try {
        this.render(await request("GET", DebugPath));
      } catch (err) {
        text(this.root.querySelector("#server-summary"), `debug view unavailable: ${err.message}`);
      }
      setTimeout(tick, refreshMs);
    };
    tick();
  }

  render(v) {
    this.onState(v);
    const summary = this.root.querySelector("#server-summary");
    summary.dataset.storeRv = String(v.storeRevision);
    text(summary,
      `store RV ${rvText(v.storeRevision)}, compacted at ${rvText(v.compactedRevision)}, ${v.watchesOpen} watch${v.watchesOpen === 1 ? "" : "es"} open`);
    summary.title = `store revision ${v.storeRevision}, compacted at ${v.compactedRevision}`;
    const own = this.ownWatch();
    this.renderCaches(v.watchCaches || [], own);
    this.renderWatchers(v.watchCaches || [], own);
  }

  // renderCaches draws one row per watch cache that has watchers, and the
  // page's own; the idle ones (a server has a dozen) share one line, so
  // the watchers below keep the room they need.
  renderCaches(caches, own) {
    const tbody = this.root.querySelector("#caches tbody");
    clear(tbody);
    const idle = [];
    for (const c of caches) {
      const selected = !!own && own.resource === c.resource;
      if (!selected && !(c.watchers || []).length) {
        idle.push(c.resource);
        continue;
      }
      tbody.append(cacheRow(c, selected));
    }
    if (idle.length) {
      tbody.append(el("tr", { class: "idle", title: idle.join(", ") },
        el("td", { colspan: "7", class: "meta" }, `${idle.length} more watch cache${idle.length === 1 ? "" : "s"} without watchers`)));
    }
  }

  // renderWatchers draws every open watcher, named resource/id (the id
  // counts within its resource, as a Kubernetes watch cache numbers its
  // watchers), with who opened it. When the page watches one namespace,
  // so does the list: that namespace's watchers and those of all
  // namespaces; the rest of the room's are counted in the heading.
  renderWatchers(caches, own) {
    const tbody = this.root.querySelector("#watchers tbody");
    clear(tbody);
    let shown = 0, hidden = 0;
    for (const c of caches) {
      for (const w of c.watchers || []) {
        if (own && own.namespace && w.namespace && w.namespace !== own.namespace) {
          hidden++;
          continue;
        }
        tbody.append(watcherRow(c.resource, w, isOwnWatch(own, c.resource, w)));
        shown++;
      }
    }
    if (!shown) tbody.append(el("tr", {}, el("td", { colspan: "5", class: "meta" }, "no open watches")));
    const note = this.root.querySelector("#watchers-hidden");
    note.dataset.hidden = String(hidden);
    text(note, hidden ? `, ${hidden} more in other namespaces` : "");
  }
}

// cacheRow is one watch cache: its window, how many of the ring's events
// can still be replayed, bytes, frames encoded, watchers too slow, 410s.
function cacheRow(c, selected) {
  // After a compaction the ring keeps its events, but a watch can be
  // replayed only from those after it: the figure is those.
  const replayable = c.replayable === undefined ? c.historyLen : c.replayable;
  const ringTitle = `${replayable} of the ring's ${c.historyLen} events can be replayed; it holds at most ${c.historyCap}`;
  return el("tr", { "data-resource": c.resource, class: selected ? "selected" : "" },
    // "customresourcedefinitions.apiextensions.k8s.io": the group on
    // its own, smaller, so a long one wraps instead of widening the table.
    el("td", { class: "resource", title: c.resource }, ...resourceName(c.resource)),
    // A watch may start from any RV in the window; an older one gets
    // 410 Expired. oldestReplayableRevision is the oldest event the
    // ring still holds, so a watch may start one before it.
    el("td", { class: "num", title: `${c.oldestReplayableRevision - 1} to ${c.revision}` }, windowOf(c)),
    el("td", { "data-ring": `${replayable}/${c.historyCap}` }, bar(c.historyCap ? replayable / c.historyCap : 0, `${replayable}/${c.historyCap}`, ringTitle)),
    el("td", { class: "num", title: c.historyMaxBytes ? `of at most ${bytes(c.historyMaxBytes)}` : "" }, bytes(c.historyBytes)),
    el("td", { class: "num", title: `${c.framesEncoded} frames` }, bytes(c.bytesEncoded)),
    el("td", { class: "num" + (c.closedTooSlow ? " warn" : "") }, String(c.closedTooSlow)),
    el("td", { class: "num" + (c.tooOldErrors ? " warn" : "") }, String(c.tooOldErrors)));
}

// watcherRow is one watcher: resource/id over what it watches (and the
// page's own marked); who (the
// client's user agent) over its address and how it is served (chunked or
// websocket); the last RV sent over the RV it started from; its queue and
// its bookmarks.
function watcherRow(resource, w, mine) {
  const id = `${resource}/${w.id}`;
  const watching = [w.namespace || "all namespaces", w.labelSelector, w.fieldSelector].filter(Boolean).join(" ");
  const via = (w.transport || "?").replace("websocket", "ws");
  const cap = w.bufferCap || 1;
  return el("tr", { class: mine ? "own" : "", "data-watcher": id, "data-own": mine ? "true" : "false",
    title: [w.description, w.remoteAddr, w.request].filter(Boolean).join("\n") },
  el("td", { class: "watcher" }, el("div", { class: "line" }, id),
    el("div", { class: "sub" }, mine ? el("span", { class: "own-badge" }, "this page") : "", watching)),
  el("td", { class: "who" }, el("div", { class: "line" }, shortAgent(w.description) || "?"),
    el("div", { class: "sub" }, [hostOf(w.remoteAddr), via].filter(Boolean).join(" · "))),
  el("td", { class: "num", title: `sent up to ${w.lastRevisionSent}, served from ${w.startRevision}` },
    el("div", { class: "line" }, rvText(w.lastRevisionSent)), el("div", { class: "sub" }, "from " + rvText(w.startRevision))),
  el("td", {}, bar(w.buffered / cap, `${w.buffered}/${w.bufferCap}`)),
  el("td", { class: "num" }, w.bookmarksSent === undefined ? "–" : String(w.bookmarksSent)));
}

// shortAgent names a client by its user agent's first word, the program
// and its version ("kubectl/v1.32.0", "curl/8.5.0"); every browser's
// starts with "Mozilla/5.0", so a browser is "browser".
export function shortAgent(ua) {
  if (!ua) return "";
  if (ua.startsWith("Mozilla/")) return "browser";
  return ua.split(" ")[0];
}

// hostOf is an address without its port ("127.0.0.1:53422", "[::1]:80").
export function hostOf(addr) {
  if (!addr) return "";
  const i = addr.lastIndexOf(":");
  return (i > 0 ? addr.slice(0, i) : addr).replace(/^\[|\]$/g, "");
}

// isOwnWatch finds the page's watch among the server's watchers by the
// exact request it sent (path and query, with its resourceVersion and its
// randomly drawn timeoutSeconds), which the debug view shows as "request".
// A server whose debug view has no requests is matched by what the watch
// asked for (resource, namespace, selector, starting RV) and the browser's
// User-Agent, which the server records as the description.
export function isOwnWatch(own, resource, w) {
  if (!own || !own.watch || !own.watch.openedAt) return false;
  if (w.request !== undefined) return w.request === own.watch.path;
  return resource === own.resource &&
    (w.namespace || "") === own.namespace &&
    (w.labelSelector || "").replace(/\s+/g, "") === own.labelSelector.replace(/\s+/g, "") &&
    String(w.startRevision) === own.watch.fromRV &&
    w.description === navigator.userAgent;
}

// resourceName is the resource, then its group on a line of its own. The
// group may break only before a dot (".apiextensions" / ".k8s.io"), never
// inside a word (".apiextensions.k8s.i" / "o").
function resourceName(gr) {
  const dot = gr.indexOf(".");
  if (dot < 0) return [gr];
  const parts = gr.slice(dot).split(/(?=\.)/).flatMap((p, i) => (i ? [el("wbr"), p] : [p]));
  return [gr.slice(0, dot), el("span", { class: "group" }, ...parts)];
}

function windowOf(c) {
  const from = c.oldestReplayableRevision - 1;
  const to = Math.max(c.revision, from);
  if (from === to) return rvText(to);
  // "…608615–616": the end only by the digits where it differs.
  const a = String(from), b = String(to);
  if (a.length === b.length && a.length > 9 && a.slice(0, -3) === b.slice(0, -3)) return `${rvText(a)}–${b.slice(-3)}`;
  return `${rvText(a)}–${rvText(b)}`;
}

function bar(fraction, label, title) {
  const f = Math.max(0, Math.min(1, fraction || 0));
  const inner = el("span", { class: "fill" + (f > 0.8 ? " hot" : "") });
  inner.style.width = `${(f * 100).toFixed(1)}%`;
  return el("span", { class: "bar", title: title || label }, inner, el("span", { class: "bar-label" }, label));
}

function bytes(n) {
  if (n === undefined || n === null) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

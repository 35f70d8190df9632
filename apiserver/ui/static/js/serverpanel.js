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
        const summary = this.root.querySelector("#server-summary");
    summary.dataset.storeRv = String(v.storeRevision);
    text(summary, `debug view unavailable: ${err.message}`);
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
    const caches = this.root.querySelector("#caches tbody");
    clear(caches);
    const own = this.ownWatch();
    const rows = [];
    for (const c of v.watchCaches || []) {
      const fill = c.historyCap ? c.historyLen / c.historyCap : 0;
      caches.append(el("tr", { "data-resource": c.resource, class: own && own.resource === c.resource ? "selected" : "" },
        // "customresourcedefinitions.apiextensions.k8s.io": the group on
        // its own, smaller, so a long one wraps instead of widening the table.
        el("td", { class: "resource", title: c.resource }, ...resourceName(c.resource)),
        // A watch may start from any RV in the window; an older one gets
        // 410 Expired. oldestReplayableRevision is the oldest event the
        // ring still holds, so a watch may start one before it.
        el("td", { class: "num", title: `${c.oldestReplayableRevision - 1} to ${c.revision}` }, windowOf(c)),
        el("td", {}, bar(fill, `${c.historyLen}/${c.historyCap}`)),
        el("td", { class: "num", title: c.historyMaxBytes ? `of at most ${bytes(c.historyMaxBytes)}` : "" }, bytes(c.historyBytes)),
        el("td", { class: "num", title: `${c.framesEncoded} frames` }, bytes(c.bytesEncoded)),
        el("td", { class: "num" + (c.closedTooSlow ? " warn" : "") }, String(c.closedTooSlow)),
        el("td", { class: "num" + (c.tooOldErrors ? " warn" : "") }, String(c.tooOldErrors))));
      for (const w of c.watchers || []) rows.push([c.resource, w]);
    }
    const watchers = this.root.querySelector("#watchers tbody");
    clear(watchers);
    for (const [resource, w] of rows) {
      const mine = isOwnWatch(own, resource, w);
      const watching = [resource, w.namespace ? "in " + w.namespace : "(all namespaces)", w.labelSelector, w.fieldSelector].filter(Boolean).join(" ");
      const cap = w.bufferCap || 1;
      watchers.append(el("tr", { class: mine ? "own" : "", "data-watcher": String(w.id), "data-own": mine ? "true" : "false", title: w.description || "" },
        el("td", { class: "num" }, String(w.id), mine ? el("span", { class: "own-badge" }, "this page") : ""),
        el("td", { title: w.transport || "" }, (w.transport || "?").replace("websocket", "ws")),
        el("td", {}, watching),
        el("td", { class: "num", title: String(w.startRevision) }, rvText(w.startRevision)),
        el("td", { class: "num", title: String(w.lastRevisionSent) }, rvText(w.lastRevisionSent)),
        el("td", {}, bar(w.buffered / cap, `${w.buffered}/${w.bufferCap}`)),
        el("td", { class: "num" }, w.bookmarksSent === undefined ? "–" : String(w.bookmarksSent))));
    }
    if (!rows.length) watchers.append(el("tr", {}, el("td", { colspan: "7", class: "meta" }, "no open watches")));
  }
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

function bar(fraction, label) {
  const f = Math.max(0, Math.min(1, fraction || 0));
  const inner = el("span", { class: "fill" + (f > 0.8 ? " hot" : "") });
  inner.style.width = `${(f * 100).toFixed(1)}%`;
  return el("span", { class: "bar", title: label }, inner, el("span", { class: "bar-label" }, label));
}

function bytes(n) {
  if (n === undefined || n === null) return "–";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

// reflector.js: the Reflector, in the browser. Read it next to the Go one:
// the names are the same, and each function says which Go function it is.
//
//   Reflector, run, listAndWatch     reflector/reflector.go
//   list                             reflector/list.go
//   watch, handleWatch               reflector/watch.go
//   isExpiredError, VeryShortWatch   reflector/errors.go
//   BackoffManager                   reflector/backoff.go
//
// It keeps a Store in step with one resource on the server: list, hand the
// list to store.replace, then watch from the list's resourceVersion and
// hand every event on; when a watch ends, watch again from the last
// resourceVersion seen; when the server answers 410 Expired, list again.
// Two things the Go Reflector does are left out because a page does not
// need them: paging (list() never sends a limit) and the periodic resync
// (there are no handlers to remind). The watch-list stream
// (sendInitialEvents) is left out too: this page lists, then watches.

import { isExpiredError, isTooManyRequests } from "./client.js";

// Options' defaults, reflector/options.go.
export const DefaultMinWatchTimeoutSeconds = 5 * 60;
export const DefaultMaxWatchTimeoutSeconds = 10 * 60;

// DefaultBackoff is client-go's reflector backoff (reflector/options.go).
export const DefaultBackoff = { initialMs: 800, factor: 2, jitter: 1, maxMs: 30000, resetAfterMs: 120000 };

// BackoffManager hands out the delays between attempts: exponential,
// capped, jittered, and forgiven after a quiet spell (reflector/backoff.go).
export class BackoffManager {
  constructor(cfg = DefaultBackoff) {
    this.cfg = cfg;
    this.base = cfg.initialMs;
    this.lastStep = 0;
  }

  next() {
    const now = Date.now();
    // A long quiet spell means the server is healthy again: start over.
    if (this.lastStep && now - this.lastStep > this.cfg.resetAfterMs) this.base = this.cfg.initialMs;
    this.lastStep = now;
    let d = this.base;
    this.base = Math.min(this.base * this.cfg.factor, this.cfg.maxMs);
    if (this.cfg.jitter > 0) d += Math.random() * this.cfg.jitter * d;
    return Math.round(d);
  }
}

// VeryShortWatchError: the server closed the watch within a second without
// a single event. Re-opening at once would spin, so back off and re-list.
export class VeryShortWatchError extends Error {
  constructor(name) {
    super(`${name}: very short watch: the watch closed within a second without any event`);
  }
}

// WatchOpenError: the websocket closed before the server accepted it. The
// Go Reflector would see the HTTP status here (a refused connection, 403,
// 429); a browser cannot read it, see watch().
export class WatchOpenError extends Error {}

// errStopRequested ends a watch because the page stopped the Reflector.
const errStopRequested = new Error("reflector: stop requested");

export class Reflector {
  // lw is a ListerWatcher (client.js ResourceClient); store gets replace,
  // add, update, delete (store.js); opts:
  //   name             for the timeline
  //   labelSelector    sent with every list and watch
  //   timeoutSeconds   fixed watch timeout; 0 draws one in [5, 10) minutes
  //   idleTimeoutMs    cut a watch silent this long (0: never)
  //   narrate          (entry) => void, the page's narrate.Tracer
  constructor(lw, store, opts = {}) {
    this.name = opts.name || "reflector";
    this.lw = lw;
    this.store = store;
    this.opts = opts;
    this.tr = opts.narrate || (() => {});
    this.backoff = new BackoffManager(opts.backoff);
    // lastSyncRV is the resourceVersion the Store is known to be
    // consistent with: the last list's, or the last event's.
    this.lastSyncRV = "";
    // lastSyncRVUnavailable is set when asking for lastSyncRV answered
    // 410: the next list then asks for "" (the latest).
    this.lastSyncRVUnavailable = false;
    // currentWatch describes the open watch, for the page's server panel
    // to find it in the debug view: {path, fromRV, openedAt}.
    this.currentWatch = null;
  }

  // lastSyncResourceVersion: the list's, then each event's and bookmark's.
  lastSyncResourceVersion() {
    return this.lastSyncRV;
  }

  setLastSyncResourceVersion(rv) {
    this.lastSyncRV = rv;
  }

  // relistResourceVersion is what the next list asks for: "0" the first
  // time (any state will do, the watch cache answers cheaply), the last
  // synced resourceVersion afterwards (never go back in time), and "" (the
  // latest) once that answered 410.
  relistResourceVersion() {
    if (this.lastSyncRVUnavailable) return "";
    if (this.lastSyncRV === "") return "0";
    return this.lastSyncRV;
  }

  // baseOptions carries the selectors every request sends.
  baseOptions() {
    return { labelSelector: this.opts.labelSelector || "" };
  }

  // watchTimeoutSeconds draws the watch's timeoutSeconds in [min, max),
  // spreading re-watches of many clients over time.
  watchTimeoutSeconds() {
    if (this.opts.timeoutSeconds > 0) return this.opts.timeoutSeconds;
    const lo = DefaultMinWatchTimeoutSeconds, hi = DefaultMaxWatchTimeoutSeconds;
    return Math.max(Math.floor(lo + Math.random() * (hi - lo)), 1);
  }

  // run lists and watches until signal aborts, backing off between
  // attempts (reflector.go Run).
  async run(signal) {
    this.tr({ kind: "conn", text: `${this.name}: starting` });
    while (!signal.aborted) {
      let err = null;
      try {
        await this.listAndWatch(signal);
      } catch (e) {
        err = e;
      }
      if (signal.aborted) break;
      if (err) this.tr({ kind: "error", text: `${this.name}: ${err.message}` });
      // Whatever ended listAndWatch (an error, a 410, a watch that would
      // not stay open), wait before listing again: a server in trouble
      // must not be hammered with full lists.
      const d = this.backoff.next();
      this.tr({ kind: "conn", text: `backoff ${(d / 1000).toFixed(1)}s, then re-list` });
      if (!(await sleep(d, signal))) break;
    }
    this.currentWatch = null;
    this.tr({ kind: "conn", text: `${this.name}: stopped` });
  }

  // listAndWatch does one round: list, hand it to the Store, then watch
  // until something requires a re-list (reflector.go ListAndWatch).
  async listAndWatch(signal) {
    await this.list(signal);
    await this.watch(signal);
  }

  // list fetches the whole resource and hands it to the Store with
  // replace (list.go list).
  async list(signal) {
    const rv = this.relistResourceVersion();
    const opts = { ...this.baseOptions(), resourceVersion: rv };
    this.tr({ kind: "list", text: `list at resourceVersion "${rv}"` });
    let list;
    try {
      list = await this.lw.list(opts, signal);
    } catch (err) {
      if (!isExpiredError(err)) throw new Error(`list at resourceVersion "${rv}": ${err.message}`, { cause: err });
      // The resourceVersion we asked for is gone: ask for the latest, a
      // consistent read at resourceVersion "".
      this.lastSyncRVUnavailable = true;
      this.tr({ kind: "error", text: `list at rv "${rv}": 410 Expired; re-list at rv "" (latest)` });
      opts.resourceVersion = this.relistResourceVersion();
      list = await this.lw.list(opts, signal);
    }
    this.lastSyncRVUnavailable = false;
    const items = (list.items || []).filter(Boolean);
    const listRV = list.metadata.resourceVersion;
    this.tr({ kind: "list", rv: listRV, text: `listed ${plural(items.length, "item")} at RV ${listRV} (asked for "${opts.resourceVersion}")` });
    this.store.replace(items, listRV);
    this.setLastSyncResourceVersion(listRV);
  }

  // watch opens watches one after the other, from the last resourceVersion
  // seen, until something requires a re-list (it then throws) or the page
  // stops the Reflector (it returns) (watch.go watch).
  async watch(signal) {
    for (;;) {
      if (signal.aborted) return;
      const start = Date.now();
      const fromRV = this.lastSyncResourceVersion();
      // A watch from "" or "0" starts with synthetic ADDED events whose
      // resourceVersions are no resume point; ours always starts from a
      // list's resourceVersion, but the rule is kept to read like Go.
      const propagateFromStart = fromRV !== "" && fromRV !== "0";
      const timeout = this.watchTimeoutSeconds();
      const opts = { ...this.baseOptions(), resourceVersion: fromRV, timeoutSeconds: timeout, allowWatchBookmarks: "true" };
      const w = this.lw.watch(opts, this.opts.idleTimeoutMs);
      const onAbort = () => w.stop();
      signal.addEventListener("abort", onAbort);
      this.currentWatch = { url: w.url, path: pathOf(w.url), fromRV, openedAt: null };
      try {
        if (!(await w.waitOpen())) {
          if (signal.aborted) return;
          // Go: lw.Watch returned an error. The browser does not say which,
          // so ask (client.js whyWatchFailed).
          this.currentWatch = null;
          const why = await this.lw.whyWatchFailed(opts, signal);
          if (signal.aborted) return;
          if (why && isExpiredError(why)) {
            this.tr({ kind: "error", text: `watch from RV ${fromRV}: ERROR ${why.status.code} ${why.status.reason}: ${why.message}` });
            this.tr({ kind: "error", text: `410 Expired (${why.message}), re-listing` });
            throw why;
          }
          if (why && !isTooManyRequests(why)) {
            this.tr({ kind: "error", text: `watch from RV ${fromRV} refused: ${why.status.code} ${why.message}; re-list` });
            throw why;
          }
          // isWatchErrorRetriable: a refused connection or a 429 (or an
          // upgrade that fails for no reason the server will tell) means
          // what we hold is still valid: wait and watch again from the
          // same place, without a costly re-list.
          const d = this.backoff.next();
          const reason = why ? `${why.status.code} ${why.message}` : w.endReason;
          this.tr({ kind: "error", text: `watch from RV ${fromRV} could not be opened (${reason}); backoff ${(d / 1000).toFixed(1)}s, then re-watch from ${fromRV} (no re-list)` });
          if (!(await sleep(d, signal))) return;
          continue;
        }
        this.currentWatch.openedAt = Date.now();
        this.tr({ kind: "conn", rv: fromRV, text: `watch opened from RV ${fromRV} over a websocket (timeoutSeconds=${timeout}, bookmarks on)` });

        let events;
        try {
          events = await this.handleWatch(start, w, (rv, pastInitialEvents) => {
            if (propagateFromStart || pastInitialEvents) this.setLastSyncResourceVersion(rv);
          }, signal);
        } catch (err) {
          if (err === errStopRequested) return;
          if (isTooManyRequests(err)) {
            const d = this.backoff.next();
            this.tr({ kind: "error", text: `watch closed: 429 too many requests; backoff ${(d / 1000).toFixed(1)}s, then re-watch from ${this.lastSyncRV} (no re-list)` });
            if (!(await sleep(d, signal))) return;
            continue;
          }
          if (isExpiredError(err)) {
            // The resourceVersion we were watching from has been
            // compacted: events are lost, only a re-list can recover.
            this.tr({ kind: "error", text: `410 Expired (${err.message}), re-listing` });
            throw err;
          }
          this.tr({ kind: "error", text: `watch closed: ${err.message}; re-list` });
          throw err;
        }
        // The server ended the watch cleanly (its timeoutSeconds ran out),
        // or the connection dropped (kill-watches): not an error, and no
        // reason to re-list. Watch again from the last resourceVersion
        // seen; the server replays whatever happened in between. This is
        // why an informer never "goes quiet after 30 minutes".
        const rv = this.lastSyncResourceVersion();
        this.tr({ kind: "conn", rv, text: `watch ended at RV ${rv} after ${plural(events, "event")} (${w.endReason}), re-watching from ${rv}` });
      } finally {
        signal.removeEventListener("abort", onAbort);
        w.stop();
      }
    }
  }

  // handleWatch feeds w's events into the store until the stream ends
  // (returns the number of events), an ERROR event arrives (throws its
  // Status) or the page stops (throws errStopRequested) (watch.go
  // handleWatch).
  async handleWatch(start, w, setRV, signal) {
    let events = 0;
    let pastInitialEvents = false;
    for (;;) {
      const ev = await w.next();
      if (signal.aborted) throw errStopRequested;
      if (ev === null) {
        if (events === 0 && Date.now() - start < 1000) throw new VeryShortWatchError(this.name);
        return events;
      }
      if (ev.type === "ERROR") {
        const st = ev.object || {};
        this.tr({ kind: "event", type: "ERROR", text: `ERROR ${st.code} ${st.reason}: ${st.message}` });
        const err = new Error(st.message || "watch ERROR event");
        err.status = st;
        throw err;
      }
      const obj = ev.object;
      if (!obj || !obj.metadata) {
        this.tr({ kind: "error", text: `${ev.type} event without an object, skipped` });
        continue;
      }
      const rv = obj.metadata.resourceVersion;
      const name = keyOf(obj);
      switch (ev.type) {
        case "ADDED":
          this.store.add(obj);
          break;
        case "MODIFIED":
          pastInitialEvents = true;
          this.store.update(obj);
          break;
        case "DELETED":
          pastInitialEvents = true;
          this.store.delete(obj);
          break;
        case "BOOKMARK":
          // Nothing changed; the server says "you are up to date to rv".
          // Remembering it makes the next watch start here.
          pastInitialEvents = true;
          break;
        default:
          this.tr({ kind: "error", text: `unknown watch event type "${ev.type}", skipped` });
          continue;
      }
      this.tr(ev.type === "BOOKMARK"
        ? { kind: "event", type: ev.type, rv, text: `BOOKMARK RV ${rv}` }
        : { kind: "event", type: ev.type, rv, name, text: `${ev.type} ${name} RV ${rv}` });
      if (rv) setRV(rv, pastInitialEvents);
      events++;
    }
  }
}

// keyOf is MetaNamespaceKeyFunc: "namespace/name", or "name" when
// cluster-scoped.
export function keyOf(obj) {
  const m = obj.metadata || {};
  return m.namespace ? `${m.namespace}/${m.name}` : m.name;
}

// sleep waits ms; false means the signal aborted first.
function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const t = setTimeout(() => { signal.removeEventListener("abort", onAbort); resolve(true); }, ms);
    const onAbort = () => { clearTimeout(t); resolve(false); };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function pathOf(url) {
  const u = new URL(url);
  return u.pathname + u.search;
}

// plural is "1 item", "2 items".
function plural(n, noun) {
  return n === 1 ? `1 ${noun}` : `${n} ${noun}s`;
}

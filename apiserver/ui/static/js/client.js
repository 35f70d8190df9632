// client.js: the REST client and the websocket StreamWatcher, the
// browser's version of the Go package client/ (client/resource.go,
// client/streamwatcher.go, client/websocket.go, client/idle.go).
//
// A browser cannot set headers on a WebSocket, and cannot read the HTTP
// status of a refused upgrade: it only learns that the socket closed. Both
// limits shape what the Reflector can tell apart (see watch() in
// reflector.js).

// StatusError is a Kubernetes Status the server answered with (api.Status
// in Go): code 410 reason "Expired" means "re-list".
export class StatusError extends Error {
  constructor(status) {
    super(status.message || `${status.code} ${status.reason}`);
    this.status = status;
  }
}

// isResourceExpired is api.IsResourceExpired || api.IsGone, the 410 that
// makes a Reflector re-list (reflector/errors.go isExpiredError).
export function isExpiredError(err) {
  const s = err && err.status;
  return !!s && s.code === 410 && (s.reason === "Expired" || s.reason === "Gone");
}

// isTooManyRequests is api.IsTooManyRequests: back off and retry.
export function isTooManyRequests(err) {
  return !!(err && err.status && err.status.code === 429);
}

// ResourceClient is one resource in one namespace ("" for all namespaces,
// or a cluster-scoped resource): the ListerWatcher a Reflector is given
// (reflector/listerwatcher.go), plus the writes the page's buttons make.
export class ResourceClient {
  // res is a discovery entry: {group, version, name, kind, namespaced}.
  constructor(res, namespace) {
    this.res = res;
    this.namespace = res.namespaced ? namespace : "";
  }

  // collectionPath is /api/v1/namespaces/{ns}/{resource} and the like,
  // exactly Kubernetes' paths (apiserver/routes.go).
  collectionPath(namespace = this.namespace) {
    const gv = this.res.group ? `/apis/${this.res.group}/${this.res.version}` : `/api/${this.res.version}`;
    const ns = this.res.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
    return `${gv}${ns}/${this.res.name}`;
  }

  objectPath(name, namespace = this.namespace) {
    return `${this.collectionPath(namespace)}/${encodeURIComponent(name)}`;
  }

  // list is ListerWatcher.List: one GET of the collection. The answer is
  // the whole list in one page: we never send a limit (see list() in
  // reflector.js).
  async list(opts, signal) {
    return request("GET", this.collectionPath() + query(opts), undefined, signal);
  }

  // watch is ListerWatcher.Watch: the same GET with ?watch=1, upgraded to
  // a websocket, as kube-apiserver serves browsers (fixture ws-watch.jsonl).
  watch(opts, idleTimeoutMs) {
    const url = new URL(this.collectionPath() + query({ ...opts, watch: "1" }), location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return new StreamWatcher(url.toString(), idleTimeoutMs);
  }

  // whyWatchFailed is asked when a websocket watch closed without opening.
  // A browser does not say why: the HTTP status of a refused upgrade is
  // hidden from JavaScript, and Firefox even hides a watch that was
  // accepted and ended at once (its one ERROR event and close frame
  // arriving with the 101). So it asks the server the same question over
  // plain HTTP, the chunked watch, and reads only the answer's start: a
  // Status for a refused request (403, 429), or the stream's first event
  // if that is an ERROR (410 Expired). It returns that as a StatusError,
  // or null when the server accepts the watch now. The Go Reflector gets
  // this from lw.Watch's error without asking twice.
  async whyWatchFailed(opts, signal) {
    const ctl = new AbortController();
    const stop = () => ctl.abort();
    signal.addEventListener("abort", stop, { once: true });
    const timer = setTimeout(stop, 2000);
    try {
      const resp = await fetch(this.collectionPath() + query({ ...opts, watch: "1" }), { signal: ctl.signal });
      if (!resp.ok) {
        let st;
        try { st = await resp.json(); } catch { st = { code: resp.status, message: resp.statusText }; }
        return new StatusError(st);
      }
      const reader = resp.body.getReader();
      let buf = "";
      const dec = new TextDecoder();
      while (!buf.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
      }
      const line = buf.split("\n")[0];
      if (line) {
        const ev = JSON.parse(line);
        if (ev.type === "ERROR") return new StatusError(ev.object || {});
      }
      return null;
    } catch {
      return null; // no answer within 2 s (a quiet, healthy watch) or no server
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      ctl.abort();
    }
  }

  create(obj) {
    const ns = obj.metadata && obj.metadata.namespace || this.namespace;
    return request("POST", this.collectionPath(ns), obj);
  }

  update(obj) {
    const ns = obj.metadata.namespace || this.namespace;
    return request("PUT", this.objectPath(obj.metadata.name, ns), obj);
  }

  delete(name, namespace) {
    return request("DELETE", this.objectPath(name, namespace));
  }
}

// query turns ListOptions into a query string, leaving out empty values.
export function query(opts) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(opts)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const s = q.toString();
  return s ? "?" + s : "";
}

// request sends one REST request and returns the decoded JSON body, or
// throws a StatusError carrying the server's Status.
export async function request(method, path, body, signal) {
  const init = { method, signal, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers["Content-Type"] = "application/json";
  }
  const resp = await fetch(path, init);
  const text = await resp.text();
  let decoded;
  try {
    decoded = text ? JSON.parse(text) : {};
  } catch {
    decoded = { kind: "Status", code: resp.status, reason: resp.statusText, message: text.trim() };
  }
  if (!resp.ok) {
    if (decoded.kind !== "Status") decoded = { kind: "Status", code: resp.status, message: text.trim() };
    throw new StatusError(decoded);
  }
  return decoded;
}

// StreamWatcher turns the websocket's messages into watch events, one per
// text message (each message is one JSON line of the chunked stream).
// next() resolves to the next event, or to null once the stream is over:
// the Go ResultChan closing. Like the Go StreamWatcher, a dropped
// connection (close code 1006, what kill-watches causes) and the server's
// clean close (1000, its timeout) both simply end the stream; the caller
// watches again from its last resourceVersion.
export class StreamWatcher {
  constructor(url, idleTimeoutMs) {
    this.url = url;
    this.queue = [];
    this.waiter = null;
    this.ended = false;
    // opened tells "the server never accepted the watch" (a refused
    // upgrade, which the browser reports only as a close) from "the watch
    // ran and ended".
    this.opened = false;
    this.closeCode = 0;
    this.endReason = "";
    this.idleTimeoutMs = idleTimeoutMs || 0;
    this.ws = new WebSocket(url);
    let resolveOpened;
    this.openedPromise = new Promise((resolve) => { resolveOpened = resolve; });
    const markOpened = () => {
      if (this.opened) return;
      this.opened = true;
      this.touch();
      resolveOpened(true);
    };
    this.ws.addEventListener("open", markOpened);
    this.ws.addEventListener("message", (m) => {
      // A message proves the server accepted the watch, even where a
      // browser reports no "open" first (seen in Firefox when the 101, one
      // message and the close frame arrive together: a 410 for a too-old
      // resourceVersion).
      markOpened();
      this.touch();
      let ev;
      try {
        ev = JSON.parse(m.data);
      } catch (e) {
        // client/streamwatcher.go decodeErrorStatus: an undecodable stream
        // is one ERROR event, then the end.
        ev = { type: "ERROR", object: { kind: "Status", code: 500, reason: "InternalError",
          message: "unable to decode an event from the watch stream: " + e.message } };
      }
      this.push(ev);
    });
    this.ws.addEventListener("close", (c) => {
      this.closeCode = c.code;
      if (!this.endReason) {
        this.endReason = c.code === 1000 ? "the server closed the websocket (1000)"
          : c.code === 1006 ? "the connection dropped (1006, no close frame)"
          : `websocket closed (${c.code}${c.reason ? " " + c.reason : ""})`;
      }
      this.finish();
      resolveOpened(false); // no-op once opened
    });
  }

  // touch restarts the idle timer (client/idle.go): a watch that receives
  // nothing at all for idleTimeoutMs is presumed half-open and cut, which
  // is how a client survives the stall-watches fault.
  touch() {
    if (!this.idleTimeoutMs) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      this.endReason = `idle for ${this.idleTimeoutMs / 1000}s: connection presumed dead`;
      this.stop();
    }, this.idleTimeoutMs);
  }

  push(ev) {
    if (this.ended) return;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(ev);
    } else {
      this.queue.push(ev);
    }
  }

  finish() {
    if (this.ended) return;
    clearTimeout(this.idleTimer);
    this.ended = true;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(null);
    }
  }

  // waitOpen resolves true once the server accepted the upgrade, false if
  // the socket closed first.
  waitOpen() {
    return this.openedPromise;
  }

  // next is a receive from ResultChan: the next event, or null at the end.
  next() {
    if (this.queue.length) return Promise.resolve(this.queue.shift());
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve) => { this.waiter = resolve; });
  }

  // stop is Watcher.Stop: close the websocket, end the stream; events not
  // yet read are dropped.
  stop() {
    this.queue = [];
    if (!this.endReason) this.endReason = "stopped by the client";
    try { this.ws.close(1000); } catch { /* already closed */ }
    this.finish();
  }
}

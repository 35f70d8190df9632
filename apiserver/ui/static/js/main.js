// main.js: the page. It discovers the resources, starts a Reflector for
// the chosen one (reflector.js) writing into a Store (store.js), draws the
// Store as a table and the Reflector's narration as a timeline, and runs
// the server panel (serverpanel.js). The buttons write through the REST
// API and pull the fault switches; the page then shows its own recovery.

import { ResourceClient, request, query } from "./client.js";
import { Reflector } from "./reflector.js";
import { Store } from "./store.js";
import { ServerPanel, hostOf, shortAgent } from "./serverpanel.js";
import { clear, el, rvText, shortenRVs, text } from "./dom.js";

const $ = (sel) => document.querySelector(sel);
const maxTimeline = 300;
// How long a row stays lit after a change, and a deleted row stays shown.
const highlightMs = 2500;
const deletedRowMs = 1500;

const state = {
  resources: [], // discovery entries
  reflector: null,
  abort: null,
  store: null,
  client: null,
  changed: new Map(), // key -> {type, at}
  options: null, // {resource, namespace, labelSelector}
  // The fault switches' log (the debug view's faults.switched): the last
  // sequence number put in the timeline (null until the first look), the
  // page's own switches (already there, from their button) and how many of
  // its requests are still unanswered.
  faultSeq: null,
  ownFaults: new Set(),
  faultsPending: 0,
  namespacesSeen: null, // the namespaces' watch cache's events, last seen
};

// discover reads the API's discovery documents (/api/v1, /apis, then each
// group's preferred version) and keeps the resources one can list and
// watch.
async function discover() {
  const out = [];
  const add = (group, version, list) => {
    for (const r of list.resources || []) {
      if (r.name.includes("/") || !(r.verbs || []).includes("watch")) continue;
      out.push({ group, version, name: r.name, kind: r.kind, namespaced: r.namespaced,
        id: group ? `${r.name}.${group}` : r.name });
    }
  };
  add("", "v1", await request("GET", "/api/v1"));
  const groups = await request("GET", "/apis");
  for (const g of groups.groups || []) {
    const v = g.preferredVersion.version;
    add(g.name, v, await request("GET", `/apis/${g.name}/${v}`));
  }
  return out;
}

async function loadNamespaces(selected) {
  const sel = $("#namespace");
  let names = [];
  try {
    const list = await request("GET", "/api/v1/namespaces");
    names = list.items.map((n) => n.metadata.name).sort();
  } catch (err) {
    narrate({ kind: "error", text: `listing namespaces: ${err.message}` });
  }
  if (selected && !names.includes(selected)) names.push(selected);
  clear(sel);
  sel.append(el("option", { value: "" }, "(all namespaces)"));
  for (const n of names) sel.append(el("option", { value: n }, n));
  sel.value = selected || "";
}

// narrate appends one entry to the timeline: the page's narrate.Tracer.
function narrate(entry) {
  const list = $("#timeline");
  const now = new Date();
  const time = now.toTimeString().slice(0, 8) + "." + String(now.getMilliseconds()).padStart(3, "0");
  const cls = ["t-" + entry.kind];
  if (entry.type) cls.push("t-" + entry.type.toLowerCase());
  list.prepend(el("li", { class: cls.join(" "), "data-kind": entry.kind, "data-type": entry.type || "", title: entry.text },
    el("time", {}, time), el("span", { class: "what" }, ...unbroken(shortenRVs(entry.text)))));
  while (list.childElementCount > maxTimeline) list.lastElementChild.remove();
  if (entry.kind === "conn" || entry.kind === "list" || entry.kind === "error") setStatus(entry);
}

// unbroken keeps every word with a hyphen or a slash in it (a key such as
// "alice/feature-flags-production", a user agent) on one line: the line
// breaks at the spaces between words, not inside one. A word longer than
// a column (a whole request URL) may still break anywhere.
function unbroken(line) {
  return line.split(/(\s+)/).map((w) => (w.length <= 40 && /[-/]/.test(w) ? el("span", { class: "nb" }, w) : w));
}

function setStatus(entry) {
  const s = $("#status");
  s.className = "status s-" + entry.kind;
  s.title = entry.text;
  text(s, shortenRVs(entry.text));
}

// onStoreChange lights up a row; the table is redrawn on the next frame.
function onStoreChange(type, key) {
  if (type !== "REPLACED") state.changed.set(key, { type, at: Date.now() });
  scheduleRender();
}

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => {
    renderPending = false;
    renderTable();
  });
}

function renderTable() {
  const tbody = $("#objects tbody");
  const now = Date.now();
  const rows = new Map(state.store ? state.store.list() : []);
  // Deleted objects stay a moment, struck through, so the room sees them go.
  const gone = [];
  for (const [key, c] of state.changed) {
    if (now - c.at > highlightMs) state.changed.delete(key);
    else if (c.type === "DELETED" && !rows.has(key) && now - c.at < deletedRowMs) gone.push(key);
  }
  const keys = [...rows.keys(), ...gone].sort();
  updateRows(tbody, keys, rows, now);
  $("#empty").hidden = keys.length > 0;
  const r = state.reflector;
  text($("#cache-summary"), state.store ? `${rows.size} object${rows.size === 1 ? "" : "s"}, lastSyncResourceVersion ${r ? rvText(r.lastSyncResourceVersion()) || "–" : "–"}` : "");
  if (state.changed.size) setTimeout(scheduleRender, 250);
}

// updateRows makes the table's rows those of keys, in order. A row that
// shows the same thing as before (rowShows) is kept, only its fade
// updated, and never taken out of the table: the table is redrawn every
// 250 ms while a row fades, and a click whose press and release straddle
// a redraw would otherwise be lost, its button replaced in between.
function updateRows(tbody, keys, rows, now) {
  const wanted = new Set(keys);
  const kept = new Map();
  for (const tr of [...tbody.children]) {
    const key = tr.dataset.key;
    if (wanted.has(key) && tr.dataset.shows === rowShows(rows.get(key))) kept.set(key, tr);
    else tr.remove();
  }
  let at = tbody.firstElementChild;
  for (const key of keys) {
    const c = state.changed.get(key);
    const tr = kept.get(key);
    if (tr) { // in its place already: keys are sorted, as they were last time
      showChange(tr, c, now);
      at = tr.nextElementSibling;
    } else {
      tbody.insertBefore(objectRow(key, rows.get(key), c, now), at);
    }
  }
}

// rowShows sums up what a row shows but for the light of its last change:
// the object's version (or that it is gone), whether the namespace is
// shown, and for which resource.
function rowShows(obj) {
  const o = state.options || {};
  return [obj ? obj.metadata.resourceVersion : "gone", o.namespace ? "" : "ns", o.resource].join("|");
}

// showChange lights a row in the colour of its last change, fading as the
// change ages (redrawn every 250 ms meanwhile), and names the change in
// the row's details; with no change (c undefined) the light is out.
function showChange(tr, c, now) {
  for (const type of ["ADDED", "MODIFIED", "DELETED"]) tr.classList.toggle("ev-" + type.toLowerCase(), !!c && c.type === type);
  tr.style.setProperty("--fade", c ? String(Math.max(0, 1 - (now - c.at) / highlightMs).toFixed(2)) : "0");
  if (!tr.dataset.gone) tr.dataset.change = c ? c.type : "";
  text(tr.querySelector(".chg"), c ? c.type + " " : "");
}

// objectRow is one row of the table: the object's name on its own line
// (whole, never cut inside a word), and under it, smaller, its last
// change, its namespace when the page watches all of them, its labels and
// what it holds, each piece kept on one line; then its RV and its buttons.
// A projector at 1280x720 fits a name of about 35 characters.
function objectRow(key, obj, c, now) {
  const cls = [];
  const slash = key.indexOf("/");
  const ns = slash >= 0 ? key.slice(0, slash) : "";
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  // The change's name ends in its own space, so that no space is left
  // before the first piece once the light is out (showChange).
  const chg = el("span", { class: "chg" });
  const details = [];
  if (ns && !(state.options && state.options.namespace)) details.push(el("span", { class: "piece ns", title: "namespace" }, ns));
  let tr;
  if (!obj) {
    cls.push("gone");
    tr = el("tr", { class: cls.join(" "), "data-key": key, "data-gone": "true" },
      el("td", { class: "obj" }, el("div", { class: "name", title: key }, name), el("div", { class: "details" }, chg, ...spaced(details))),
      el("td", {}, ""), el("td", {}, ""));
  } else {
    const m = obj.metadata;
    for (const [k, v] of Object.entries(m.labels || {})) details.push(piece("piece label", `${k}=${v}`));
    for (const p of summarize(obj)) details.push(piece("piece", p));
    const edit = el("button", { type: "button", class: "quiet", title: "load into the editor" }, "edit");
    edit.addEventListener("click", () => loadIntoEditor(obj));
    const del = el("button", { type: "button", class: "quiet danger", title: "DELETE this object" }, "del");
    del.addEventListener("click", () => deleteObject(obj));
    tr = el("tr", { class: cls.join(" "), "data-key": key, "data-rv": m.resourceVersion },
      el("td", { class: "obj" }, el("div", { class: "name", title: key }, name), el("div", { class: "details" }, chg, ...spaced(details))),
      el("td", { class: "num", title: m.resourceVersion }, rvText(m.resourceVersion)),
      el("td", { class: "actions" }, edit, del));
  }
  tr.dataset.shows = rowShows(obj);
  showChange(tr, c, now);
  return tr;
}

// piece is one label or one key=value, kept on one line; a longer one than
// the column is cut at its end (whole in its tooltip), never wrapped.
function piece(cls, s) {
  return el("span", { class: cls, title: s }, s);
}

// spaced puts a space between the pieces: the only places a line may break.
function spaced(items) {
  return items.flatMap((x, i) => (i ? [" ", x] : [x]));
}

// summarize shows what an object holds as key=value pieces: data keys and
// values for ConfigMaps, otherwise the spec's or data's fields; at most
// four, each at most 60 characters.
function summarize(obj) {
  const body = obj.data || obj.spec || obj.stringData || {};
  const cut = (s) => (s.length > 60 ? s.slice(0, 59) + "…" : s);
  const all = Object.entries(body).map(([k, v]) => cut(`${k}=${typeof v === "string" ? v : JSON.stringify(v)}`));
  return all.length > 4 ? [...all.slice(0, 4), `+${all.length - 4} more`] : all;
}

// start (re)starts the Reflector for the form's choice.
function start() {
  if (state.abort) state.abort.abort();
  const res = state.resources.find((r) => r.id === $("#resource").value);
  if (!res) return;
  const namespace = res.namespaced ? $("#namespace").value : "";
  $("#namespace").disabled = !res.namespaced;
  const labelSelector = $("#label").value.trim();
  const timeoutSeconds = parseInt($("#timeout").value, 10) || 0;
  const idleSeconds = parseInt($("#idle").value, 10) || 0;
  state.options = { resource: res.id, namespace, labelSelector };
  state.client = new ResourceClient(res, namespace);
  state.changed.clear();
  state.store = new Store(onStoreChange);
  state.reflector = new Reflector(state.client, state.store, {
    name: `${res.id}${namespace ? " in " + namespace : ""}${labelSelector ? " [" + labelSelector + "]" : ""}`,
    labelSelector, timeoutSeconds, idleTimeoutMs: idleSeconds * 1000, narrate,
  });
  state.abort = new AbortController();
  state.reflector.run(state.abort.signal);
  // The choice goes into the address, so a reload or a shared link comes
  // back to the same view.
  const q = query({ resource: res.id, namespace, labelSelector, timeout: timeoutSeconds || "", idle: idleSeconds || "" });
  history.replaceState(null, "", location.pathname + q);
  if (!$("#editor").value.trim() || $("#editor").dataset.template === "true") fillTemplate();
  renderTable();
}

// fillTemplate puts a new object of the chosen kind into the editor.
function fillTemplate() {
  const res = state.client.res;
  const n = Math.floor(Math.random() * 900 + 100);
  const obj = {
    apiVersion: res.group ? `${res.group}/${res.version}` : res.version,
    kind: res.kind,
    metadata: { name: `demo-${n}`, labels: { app: "demo" } },
  };
  if (res.namespaced) obj.metadata.namespace = state.client.namespace || "default";
  if (res.kind === "ConfigMap") obj.data = { greeting: "hello" };
  $("#editor").value = JSON.stringify(obj, null, 2);
  $("#editor").dataset.template = "true";
}

function loadIntoEditor(obj) {
  const copy = JSON.parse(JSON.stringify(obj));
  delete copy.metadata.managedFields;
  $("#editor").value = JSON.stringify(copy, null, 2);
  $("#editor").dataset.template = "false";
  $("#editor-box").open = true;
}

async function write(verb) {
  const out = $("#edit-result");
  let obj;
  try {
    obj = JSON.parse($("#editor").value);
  } catch (err) {
    text(out, `not JSON: ${err.message}`);
    return;
  }
  try {
    const got = verb === "create" ? await state.client.create(obj) : await state.client.update(obj);
    text(out, `${verb === "create" ? "created" : "updated"} ${got.metadata.name} at RV ${got.metadata.resourceVersion}`);
    if (verb === "create") fillTemplate();
    else loadIntoEditor(got);
  } catch (err) {
    text(out, `${err.status ? err.status.code + " " : ""}${err.message}`);
  }
}

async function deleteObject(obj) {
  const out = $("#edit-result");
  try {
    await state.client.delete(obj.metadata.name, obj.metadata.namespace);
    text(out, `deleted ${obj.metadata.name}`);
  } catch (err) {
    text(out, `${err.status ? err.status.code + " " : ""}${err.message}`);
  }
}

// pullFault POSTs a fault switch (apiserver/faults.go) and notes it in
// the timeline, so what the page does next reads as its consequence.
async function pullFault(btn) {
  const name = btn.dataset.fault;
  const q = {};
  if (btn.dataset.with === "duration") q.duration = $("#fault-duration").value.trim();
  if (name === "fail-resource") {
    const res = state.client.res;
    Object.assign(q, { resource: res.name, group: res.group, code: btn.dataset.code });
  }
  // Noted before it is sent: its effects may reach the page before the
  // answer does.
  narrate({ kind: "fault", text: `FAULT ${name}${q.duration ? " " + q.duration : ""}${q.code ? " " + q.code : ""}` });
  state.faultsPending++;
  try {
    const got = await request("POST", `/faults/${name}${query(q)}`);
    if (got.seq) state.ownFaults.add(got.seq);
    const detail = Object.entries(got).filter(([k]) => k !== "fault" && k !== "seq").map(([k, v]) => `${k}=${v}`).join(", ");
    text($("#fault-result"), `${name}: done${detail ? ", " + detail : ""}`);
  } catch (err) {
    text($("#fault-result"), `${name}: ${err.message}`);
  } finally {
    state.faultsPending--;
  }
}

// noteOthersFaults puts in the timeline the switches thrown by anyone else
// (curl in a terminal, another attendee's page), as the page's own buttons
// do, with who threw them. Those from before the page opened are not news.
// While one of the page's own requests is unanswered, a switch it does not
// know yet may be that one: it waits for the next look.
function noteOthersFaults(switched) {
  const last = switched.length ? switched[switched.length - 1].seq : 0;
  if (state.faultSeq === null || last < state.faultSeq) { // first look, or a restarted server
    state.faultSeq = last;
    return;
  }
  for (const s of switched) {
    if (s.seq <= state.faultSeq) continue;
    if (!state.ownFaults.has(s.seq) && state.faultsPending > 0) return;
    state.faultSeq = s.seq;
    if (state.ownFaults.delete(s.seq)) continue;
    const who = [shortAgent(s.userAgent), hostOf(s.remoteAddr) && "from " + hostOf(s.remoteAddr)].filter(Boolean).join(" ");
    narrate({ kind: "fault", text: `FAULT ${s.name}${who ? " by " + who : ""}${s.detail ? " (" + s.detail + ")" : ""}` });
  }
}

// noteNamespaces reloads the namespace choice when a namespace changed (an
// attendee created theirs: the namespaces' watch cache dispatched another
// event), unless the choice is being used.
function noteNamespaces(caches) {
  const c = caches.find((x) => x.resource === "namespaces");
  if (!c || c.eventsDispatched === state.namespacesSeen) return;
  const first = state.namespacesSeen === null;
  state.namespacesSeen = c.eventsDispatched;
  if (!first && document.activeElement !== $("#namespace")) loadNamespaces($("#namespace").value);
}

function ownWatch() {
  const r = state.reflector;
  if (!r || !state.options) return null;
  return { ...state.options, watch: r.currentWatch };
}

async function main() {
  const params = new URLSearchParams(location.search);
  try {
    state.resources = await discover();
  } catch (err) {
    narrate({ kind: "error", text: `discovery failed: ${err.message}` });
    return;
  }
  const rsel = $("#resource");
  for (const r of state.resources) rsel.append(el("option", { value: r.id }, r.id));
  rsel.value = state.resources.some((r) => r.id === params.get("resource")) ? params.get("resource") : "configmaps";
  await loadNamespaces(params.has("namespace") ? params.get("namespace") : "default");
  $("#label").value = params.get("labelSelector") || "";
  $("#timeout").value = params.get("timeout") || "";
  $("#idle").value = params.get("idle") || "";

  $("#pick").addEventListener("submit", (e) => { e.preventDefault(); start(); });
  rsel.addEventListener("change", () => { $("#editor").dataset.template = "true"; start(); });
  $("#namespace").addEventListener("change", () => { $("#editor").dataset.template = "true"; start(); });
  $("#create").addEventListener("click", () => write("create"));
  $("#update").addEventListener("click", () => write("update"));
  $("#template").addEventListener("click", fillTemplate);
  $("#clear").addEventListener("click", () => clear($("#timeline")));
  for (const b of document.querySelectorAll("[data-fault]")) b.addEventListener("click", () => pullFault(b));

  let faultsShown = null;
  new ServerPanel($("#server"), ownWatch, (v) => {
    if (faultsShown !== v.faultsOverHTTP) {
      faultsShown = v.faultsOverHTTP;
      $("#faults").hidden = !faultsShown;
      $("#no-faults").hidden = faultsShown;
    }
    noteOthersFaults((v.faults && v.faults.switched) || []);
    noteNamespaces(v.watchCaches || []);
  }).start();
  start();
}

main();

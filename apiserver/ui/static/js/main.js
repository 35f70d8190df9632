// main.js: the page. It discovers the resources, starts a Reflector for
// the chosen one (reflector.js) writing into a Store (store.js), draws the
// Store as a table and the Reflector's narration as a timeline, and runs
// the server panel (serverpanel.js). The buttons write through the REST
// API and pull the fault switches; the page then shows its own recovery.

import { ResourceClient, request, query } from "./client.js";
import { Reflector } from "./reflector.js";
import { Store } from "./store.js";
import { ServerPanel } from "./serverpanel.js";
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
    el("time", {}, time), el("span", { class: "what" }, shortenRVs(entry.text))));
  while (list.childElementCount > maxTimeline) list.lastElementChild.remove();
  if (entry.kind === "conn" || entry.kind === "list" || entry.kind === "error") setStatus(entry);
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
  clear(tbody);
  const now = Date.now();
  const rows = new Map(state.store ? state.store.list() : []);
  // Deleted objects stay a moment, struck through, so the room sees them go.
  const gone = [];
  for (const [key, c] of state.changed) {
    if (now - c.at > highlightMs) state.changed.delete(key);
    else if (c.type === "DELETED" && !rows.has(key) && now - c.at < deletedRowMs) gone.push(key);
  }
  const keys = [...rows.keys(), ...gone].sort();
  for (const key of keys) {
    const obj = rows.get(key);
    const c = state.changed.get(key);
    const cls = [];
    if (c) cls.push("ev-" + c.type.toLowerCase());
    // The light fades as the change ages (redrawn every 250 ms meanwhile).
    const fade = c ? String(Math.max(0, 1 - (now - c.at) / highlightMs).toFixed(2)) : "0";
    if (!obj) {
      cls.push("gone");
      const tr = el("tr", { class: cls.join(" "), "data-key": key, "data-gone": "true" },
        el("td", { class: "change" }, "DELETED"), el("td", { class: "key" }, key),
        el("td", {}, ""), el("td", {}, ""), el("td", {}, ""), el("td", {}, ""));
      tr.style.setProperty("--fade", fade);
      tbody.append(tr);
      continue;
    }
    const m = obj.metadata;
    const edit = el("button", { type: "button", class: "quiet", title: "load into the editor" }, "edit");
    edit.addEventListener("click", () => loadIntoEditor(obj));
    const del = el("button", { type: "button", class: "quiet danger", title: "DELETE this object" }, "del");
    del.addEventListener("click", () => deleteObject(obj));
    const tr = el("tr", { class: cls.join(" "), "data-key": key, "data-rv": m.resourceVersion, "data-change": c ? c.type : "" },
      el("td", { class: "change" }, c ? c.type : ""),
      el("td", { class: "key" }, key),
      el("td", { class: "num", title: m.resourceVersion }, rvText(m.resourceVersion)),
      el("td", { class: "labels" }, Object.entries(m.labels || {}).map(([k, v]) => `${k}=${v}`).join(", ")),
      el("td", { class: "content" }, summarize(obj)),
      el("td", { class: "actions" }, edit, del));
    tr.style.setProperty("--fade", fade);
    tbody.append(tr);
  }
  $("#empty").hidden = keys.length > 0;
  const r = state.reflector;
  text($("#cache-summary"), state.store ? `${rows.size} object${rows.size === 1 ? "" : "s"}, lastSyncResourceVersion ${r ? rvText(r.lastSyncResourceVersion()) || "–" : "–"}` : "");
  if (state.changed.size) setTimeout(scheduleRender, 250);
}

// summarize shows what an object holds in one line: data keys and values
// for ConfigMaps, otherwise the spec's or data's first fields.
function summarize(obj) {
  const body = obj.data || obj.spec || obj.stringData || {};
  const s = Object.entries(body).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ");
  return s.length > 60 ? s.slice(0, 59) + "…" : s;
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
  try {
    const got = await request("POST", `/faults/${name}${query(q)}`);
    const detail = Object.entries(got).filter(([k]) => k !== "fault").map(([k, v]) => `${k}=${v}`).join(", ");
    text($("#fault-result"), `${name}: done${detail ? ", " + detail : ""}`);
  } catch (err) {
    text($("#fault-result"), `${name}: ${err.message}`);
  }
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
  }).start();
  start();
}

main();

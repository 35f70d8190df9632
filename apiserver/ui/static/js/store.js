// store.js: the Store the Reflector writes into, the page's own cache of
// the server's objects. The Go Reflector hands its events to a Store
// (reflector/listerwatcher.go: Add, Update, Delete, Replace); in an
// informer that is a DeltaFIFO feeding an Indexer (fifo/, informer/). The
// page needs no queue, so this is the Indexer alone: a map by key, plus a
// note of what last happened to each key so the table can light it up.

import { keyOf } from "./reflector.js";

export class Store {
  // onChange(type, key, obj) is told every change: ADDED, MODIFIED,
  // DELETED, and REPLACED once after a list.
  constructor(onChange) {
    this.items = new Map();
    this.onChange = onChange || (() => {});
  }

  add(obj) {
    const key = keyOf(obj);
    // An ADDED for a key we hold is an update (a watch replayed it).
    const type = this.items.has(key) ? "MODIFIED" : "ADDED";
    this.items.set(key, obj);
    this.onChange(type, key, obj);
  }

  update(obj) {
    const key = keyOf(obj);
    this.items.set(key, obj);
    this.onChange("MODIFIED", key, obj);
  }

  delete(obj) {
    const key = keyOf(obj);
    this.items.delete(key);
    this.onChange("DELETED", key, obj);
  }

  // replace swaps the whole content for a list consistent at
  // resourceVersion. Like DeltaFIFO.Replace, it reports what the list
  // changed: keys gone since (DELETED, the deletes the Reflector missed
  // while it was not watching), new keys (ADDED) and changed ones
  // (MODIFIED), so a re-list after a 410 shows what the gap hid.
  replace(list, resourceVersion) {
    const next = new Map(list.map((o) => [keyOf(o), o]));
    for (const [key, old] of this.items) {
      if (!next.has(key)) this.onChange("DELETED", key, old);
    }
    for (const [key, obj] of next) {
      const old = this.items.get(key);
      if (!old) this.onChange("ADDED", key, obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.onChange("MODIFIED", key, obj);
    }
    this.items = next;
    this.onChange("REPLACED", resourceVersion, null);
  }

  // list returns the objects sorted by key, as the table shows them.
  list() {
    return [...this.items.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }
}

// dom.js: the three DOM helpers the page uses. Everything shown is set as
// text, never as HTML, so an object's name or label cannot inject markup.

// el builds an element with attributes and children (strings become text).
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== "" && v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === "" || c === undefined || c === null) continue;
    e.append(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return e;
}

// clear removes every child of e.
export function clear(e) {
  while (e.firstChild) e.removeChild(e.firstChild);
}

// text sets e's text.
export function text(e, s) {
  e.textContent = s;
}

// rvText shortens a long resourceVersion to its last six digits. cmd/apiserver
// starts revisions from the clock (16 digits, so that a restart makes old
// ones 410), and on a projector the digits that change are the last ones.
// Wherever it is used, the whole value is in the element's tooltip.
export function rvText(rv) {
  const s = rv === undefined || rv === null ? "" : String(rv);
  // U+2060 (word joiner) keeps the ellipsis on the digits' line.
  return s.length > 9 ? "…\u2060" + s.slice(-6) : s;
}

// shortenRVs applies rvText to every long number in a line of text.
export function shortenRVs(line) {
  return line.replace(/\b\d{10,}\b/g, rvText);
}

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

// ui.js — DOM helpers. Elements are built with createElement and textContent only: the page never
// parses markup from strings (the Content-Security-Policy's Trusted Types rule would refuse it).

import { W } from './words.js';

/// h('button', {class: 'primary', dataset: {action: 'confirm'}, onclick}, 'Continue')
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'class') el.className = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

let idCounter = 0;
export const uid = (p) => `${p}-${++idCounter}`;

/// A labelled input: returns {field (wrapper), input}.
export function field(label, attrs = {}) {
  const id = uid('f');
  const input = h('input', { id, ...attrs });
  return { field: h('div', { class: 'field' }, h('label', { for: id }, label), input), input };
}

/// A button with a stable data-action (tests and operators' monitoring drive the page by it).
export function button(text, action, onclick, { primary = false, extra = {} } = {}) {
  return h('button', { type: extra.type || 'button', class: primary ? 'primary' : 'secondary', dataset: { action, ...(extra.dataset || {}) }, onclick, ...(extra.attrs || {}) }, text);
}

/// A notice box: kind 'error' (role=alert) | 'warning' | 'info' (role=status).
export function notice(kind, ...lines) {
  const text = lines.flat().filter(Boolean);
  if (text.length === 0) return null;
  return h('div', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status', dataset: { notice: kind } },
    ...text.map((t) => h('p', {}, t)));
}

/// An image from base64 (JPEG or PNG) or a blob: URL, or a placeholder when there is none.
export function image(src, alt, cls = '') {
  if (!src) return h('div', { class: `image placeholder ${cls}`, role: 'img', 'aria-label': alt }, W.selfieConfirm.noImage);
  const url = src.startsWith('blob:') || src.startsWith('data:') ? src : `data:${src.startsWith('iVBOR') ? 'image/png' : 'image/jpeg'};base64,${src}`;
  return h('img', { class: `image ${cls}`, src: url, alt });
}

const root = () => document.getElementById('app');

/// Replaces the screen: <section data-screen=NAME> with its title focused, so keyboard and screen
/// reader users land on the new step. Returns the section.
export function show(name, { title, subtitle, closeAction, dataset = {} }, ...body) {
  const heading = h('h1', { id: uid('h'), tabindex: '-1' }, title);
  const header = h('header', { class: 'screen-header' }, heading, closeAction ? h('button', {
    type: 'button', class: 'close', dataset: { action: 'cancel' }, 'aria-label': W.close, onclick: closeAction,
  }, '×') : null);
  const section = h('section', { class: `screen screen-${name}`, dataset: { screen: name, ...dataset }, 'aria-labelledby': heading.id },
    header, subtitle ? h('p', { class: 'subtitle' }, subtitle) : null, ...body);
  const r = root();
  r.replaceChildren(section);
  r.removeAttribute('aria-busy');
  window.scrollTo(0, 0);
  heading.focus({ preventScroll: true });
  announce(title);
  return section;
}

/// Politely announces `text` in the page's live region (screen readers).
export function announce(text, assertive = false) {
  const el = document.getElementById(assertive ? 'alert-region' : 'status-region');
  if (!el) return;
  el.textContent = '';
  // A new text node in a later task is announced even when the text repeats.
  setTimeout(() => { el.textContent = text; }, 30);
}

/// Marks the current screen busy: every button disabled, the pressed one retitled.
export function busy(section, on, pressed, busyText = W.processing) {
  if (!section) return;
  section.setAttribute('aria-busy', on ? 'true' : 'false');
  for (const b of section.querySelectorAll('button, input, select')) {
    if (on) { b.dataset.wasDisabled = b.disabled ? '1' : ''; b.disabled = true; } else { b.disabled = b.dataset.wasDisabled === '1'; }
  }
  if (pressed) {
    if (on) { pressed.dataset.title = pressed.textContent; pressed.textContent = busyText; } else if (pressed.dataset.title) pressed.textContent = pressed.dataset.title;
  }
  if (on) announce(busyText);
}

/// Shows (or clears, with null) the banner of the current screen.
export function banner(section, node) {
  if (!section) return;
  let slot = section.querySelector(':scope > .banner-slot');
  if (!slot) {
    slot = h('div', { class: 'banner-slot' });
    const header = section.querySelector(':scope > .subtitle') || section.querySelector(':scope > header');
    header.after(slot);
  }
  slot.replaceChildren(...(node ? [node] : []));
  if (node) slot.scrollIntoView?.({ block: 'nearest' });
}

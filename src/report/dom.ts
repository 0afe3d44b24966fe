/**
 * DOM builders and number formats of the report panels. Every string goes in as text
 * (`append` of a string, `setAttribute`), never as markup, so trace names stay text.
 */

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Attribute values; `on<event>` keys take a listener instead. */
export type Attrs = Record<string, string | number | EventListener>;
/** A child of `h`: a node, text, or nothing (skipped). */
export type Child = Node | string | number | null | undefined;

/** `<tag ...attrs>children</tag>`; `class` sets the class name, `onclick` etc. add listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'class') {
      el.className = String(v);
    } else {
      el.setAttribute(k, String(v));
    }
  }
  for (const c of children) {
    if (c !== null && c !== undefined) {
      el.append(c instanceof Node ? c : String(c));
    }
  }
  return el;
}

/** An SVG element with attributes and optional text. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  text?: string
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) {
    el.setAttribute(k, String(v));
  }
  if (text !== undefined) {
    el.textContent = text;
  }
  return el;
}

/**
 * Milliseconds with two decimals, or `n/a`; below 0.01 ms in µs (a unit-test trace's 0.3 µs step
 * is not "0.00 ms"), as views/text.py `_ms` writes it.
 */
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) {
    return 'n/a';
  }
  const us = Math.round(v * 1e6) / 1000; // to the ns: float noise reads 0
  return us > 0 && us < 10 ? `${+us.toPrecision(3)} µs` : `${v.toFixed(2)} ms`;
}

/** Microseconds as µs below 1 ms, as ms above; empty when unknown. */
export function us(v: number | null | undefined): string {
  if (v === null || v === undefined) {
    return '';
  }
  return v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${Number(v).toFixed(1)} µs`;
}

/** A number with `d` decimals, or `n/a`. */
export function num(v: number | null | undefined, d = 1): string {
  return v === null || v === undefined ? 'n/a' : Number(v).toFixed(d);
}

/** A panel's "nothing to show" line. */
export function empty(text: string): HTMLParagraphElement {
  return h('p', { class: 'gpuprof-w-empty' }, text);
}

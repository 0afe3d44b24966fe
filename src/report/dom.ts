/**
 * DOM builders and number formats of the report panels. Every string goes in as text
 * (`append` of a string, `setAttribute`), never as markup, so trace names stay text.
 */
import { GB_DECIMALS, MISSING, MS_DECIMALS, US_BELOW_MS, US_DIGITS } from '../generated/units';

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
 * `v` rounded half away from zero at `digits` decimals on its shortest decimal form, as
 * jupyter_gpuprof/units.py `rounded` does (14.5 -> 15, 1.005 -> 1.01).
 */
export function rounded(v: number, digits: number): number {
  const a = Math.abs(v);
  // shifting the decimal point in the text (`1.005e2`) rounds the shortest form, not the binary
  // value; a number already written with an exponent is far from any half-way point
  const r = String(a).includes('e')
    ? Math.round(a * 10 ** digits) / 10 ** digits
    : Number(`${Math.round(Number(`${a}e${digits}`))}e-${digits}`);
  return v < 0 ? -r : r;
}

/**
 * A duration in ms as every surface writes it (jupyter_gpuprof/units.py `ms`, its constants
 * generated into src/generated/units.ts): two decimals, below 0.1 ms in µs.
 */
export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) {
    return MISSING;
  }
  const us = Math.round(v * 1e6) / 1000; // to the ns: float noise never decides the unit
  if (us !== 0 && Math.abs(us) < US_BELOW_MS * 1000) {
    return `${+us.toPrecision(US_DIGITS)} µs`;
  }
  return `${rounded(v, MS_DECIMALS).toLocaleString('en-US', {
    minimumFractionDigits: MS_DECIMALS,
    maximumFractionDigits: MS_DECIMALS
  })} ms`;
}

/** A share in % (jupyter_gpuprof/units.py `pct`): "42%", no space before the sign. */
export function pct(v: number | null | undefined, digits = 0): string {
  return v === null || v === undefined || !Number.isFinite(v)
    ? MISSING
    : `${rounded(v, digits).toFixed(digits)}%`;
}

/** A count per step (units.py `count`): "1.8", "2", "2,940"; one decimal unless whole. */
export function count(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) {
    return MISSING;
  }
  const r = rounded(v, 1);
  return r.toLocaleString('en-US', {
    minimumFractionDigits: Number.isInteger(r) ? 0 : 1,
    maximumFractionDigits: Number.isInteger(r) ? 0 : 1
  });
}

/** A change in % with its sign (units.py `signed_pct`): "+46.7%". */
export function signedPct(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) {
    return MISSING;
  }
  const r = rounded(v, digits);
  return `${r >= 0 ? '+' : ''}${r.toFixed(digits)}%`;
}

/** A plain figure rounded like every other (units.py `num`): a clock, a temperature. */
export function fig(v: number | null | undefined, digits = 0): string {
  return v === null || v === undefined || !Number.isFinite(v)
    ? MISSING
    : rounded(v, digits).toFixed(digits);
}

/** A size in bytes as decimal GB (jupyter_gpuprof/units.py `gb`). */
export function gb(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) {
    return MISSING;
  }
  return `${rounded(bytes / 1e9, GB_DECIMALS).toFixed(GB_DECIMALS)} GB`;
}

/** A duration given in µs, written like `ms`; empty when unknown. */
export function us(v: number | null | undefined): string {
  return v === null || v === undefined ? '' : ms(v / 1000);
}

/** A number with `d` decimals, or `n/a`. */
export function num(v: number | null | undefined, d = 1): string {
  return v === null || v === undefined ? 'n/a' : Number(v).toFixed(d);
}

/** A panel's "nothing to show" line. */
export function empty(text: string): HTMLParagraphElement {
  return h('p', { class: 'gpuprof-w-empty' }, text);
}

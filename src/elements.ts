/**
 * Tiny DOM builders: every string goes in through `textContent` or `setAttribute`, never as
 * markup, so names from traces (op and kernel names, run names) are always shown as text.
 */

/** `<tag class=...>text</tag>`; children appended in order. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string,
  ...children: Node[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  node.append(...children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes (values set as attributes, never parsed as markup). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | number> = {},
  text?: string
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    node.setAttribute(key, String(value));
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** A minimal toolbar button with a visible label (found by role and name in UI tests). */
export function button(label: string, onClick: () => void, className = ''): HTMLButtonElement {
  const node = h('button', `jp-Button jp-mod-styled jp-gpuprof-button ${className}`.trim(), label);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/** A table of rows; `cells` turns one row into its cell texts. */
export function table<T>(
  caption: string,
  headers: string[],
  rows: readonly T[],
  cells: (row: T) => string[],
  className = 'jp-gpuprof-table'
): HTMLTableElement {
  const head = h(
    'thead',
    '',
    undefined,
    h('tr', '', undefined, ...headers.map(t => h('th', '', t)))
  );
  const body = h(
    'tbody',
    '',
    undefined,
    ...rows.map(row => h('tr', '', undefined, ...cells(row).map(c => h('td', '', c))))
  );
  // every table says what it holds to a screen reader (the heading above says it on screen)
  return h('table', className, undefined, h('caption', 'gpuprof-w-sr', caption), head, body);
}

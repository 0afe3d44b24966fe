/**
 * A table sortable by any column from the mouse or the keyboard (Enter/Space on a focused
 * header), its headers announcing the sort to screen readers.
 */
import { h } from './dom';

/** One column: key, header (it names its unit and basis), how to read, sort and show a cell. */
export interface IColumn<R> {
  key: string;
  label: string;
  /** Text columns sort ascending first and align left. */
  text?: boolean;
  value(row: R): number | string;
  show?(row: R): string;
  title?(row: R): string;
  /** The cell's content when it is more than text (a name that expands to its full form). */
  cell?(row: R): Node;
}

/** `rows` sorted by column `col`, numbers numerically and text by locale. */
export function sortRows<R>(rows: readonly R[], col: IColumn<R>, desc: boolean): R[] {
  return rows.slice().sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    const c =
      typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
}

/**
 * A table element whose `draw(rows)` redraws its body; sorting redraws with the last rows.
 * `presorted`: the rows already come in `sortKey`'s order (the model's): drawn as given until
 * a header is clicked. `caption`: what the table lists, for screen readers (visually hidden: the
 * panel's heading already says it on screen).
 */
export function sortableTable<R>(
  cols: IColumn<R>[],
  sortKey: string,
  className = '',
  presorted = false,
  caption = ''
): { table: HTMLTableElement; draw(rows: readonly R[]): void } {
  let key = sortKey;
  let keep = presorted;
  let desc = !cols.find(c => c.key === key)?.text;
  let last: readonly R[] = [];
  const table = h('table', { class: `gpuprof-w-table ${className}`.trim() });
  const sortBy = (k: string) => {
    const col = cols.find(c => c.key === k)!;
    desc = key === k ? !desc : !col.text;
    keep = false;
    key = k;
    draw(last);
    (table.querySelector(`th[data-key="${k}"]`) as HTMLElement | null)?.focus();
  };
  const draw = (rows: readonly R[]) => {
    last = rows;
    const head = h(
      'tr',
      {},
      ...cols.map(c => {
        const on = c.key === key;
        const th = h(
          'th',
          {
            class: `${c.text ? 'n ' : ''}${on ? `sorted ${desc ? 'desc' : 'asc'}` : ''}`.trim(),
            'data-key': c.key,
            tabindex: 0,
            role: 'columnheader',
            'aria-sort': on ? (desc ? 'descending' : 'ascending') : 'none',
            onclick: () => sortBy(c.key),
            onkeydown: ((ev: KeyboardEvent) => {
              if (ev.key === 'Enter' || ev.key === ' ') {
                ev.preventDefault();
                sortBy(c.key);
              }
            }) as EventListener
          },
          c.label + (on ? (desc ? ' ▼' : ' ▲') : '')
        );
        return th;
      })
    );
    const col = cols.find(c => c.key === key)!;
    const body = (keep ? rows.slice() : sortRows(rows, col, desc)).map(r =>
      h(
        'tr',
        {},
        ...cols.map(c => {
          const shown = c.show ? c.show(r) : String(c.value(r));
          return h(
            'td',
            { class: c.text ? 'n' : '', title: c.title ? c.title(r) : shown },
            c.cell ? c.cell(r) : shown
          );
        })
      )
    );
    table.replaceChildren(
      ...(caption ? [h('caption', { class: 'gpuprof-w-sr' }, caption)] : []),
      h('thead', {}, head),
      h('tbody', {}, ...body)
    );
  };
  draw([]); // caption and header from the start: a table shown later is never bare
  return { table, draw };
}

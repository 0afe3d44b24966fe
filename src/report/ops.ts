/** The "Operators" panel: the op table, sortable by any column, filtered by name and side. */
import { empty, h, us } from './dom';
import { IOpRow, IReportSummary } from './summary';

/** Column key, header, and kind: `s` text, `n` count, `t` time in µs. */
const OP_COLS: [string, string, 's' | 'n' | 't'][] = [
  ['name', 'op', 's'],
  ['calls', 'calls', 'n'],
  ['cpu_total_us', 'CPU total', 't'],
  ['cpu_self_us', 'CPU self', 't'],
  ['cuda_total_us', 'CUDA total', 't'],
  ['cuda_self_us', 'CUDA self', 't'],
  ['input_dims', 'shapes', 's']
];

/** Which ops the side selector keeps. */
export type OpSide = 'all' | 'cuda' | 'cpu';

/** The rows shown for a name filter, side and sort (numbers numerically, text by locale). */
export function visibleOps(
  rows: readonly IOpRow[],
  filter: string,
  side: OpSide,
  key: string,
  desc: boolean
): IOpRow[] {
  let shown = rows.filter(r => String(r.name).toLowerCase().includes(filter.toLowerCase()));
  if (side === 'cuda') {
    shown = shown.filter(r => (r.cuda_total_us ?? 0) > 0);
  } else if (side === 'cpu') {
    shown = shown.filter(r => !((r.cuda_total_us ?? 0) > 0));
  }
  return shown.sort((a, b) => {
    const x = a[key] ?? '';
    const y = b[key] ?? '';
    const c =
      typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
    return desc ? -c : c;
  });
}

/** Filter box, side selector and the sortable table (CUDA total, descending, first). */
export function opsPanel(sm: IReportSummary): HTMLDivElement {
  const rows = (sm.ops ?? []).slice();
  const box = h('div');
  if (!rows.length) {
    box.append(empty('No operators were recorded.'));
    return box;
  }
  let key = 'cuda_total_us';
  let desc = true;
  const input = h('input', {
    type: 'search',
    placeholder: 'filter ops…',
    class: 'gpuprof-w-filter'
  });
  const select = h(
    'select',
    { class: 'gpuprof-w-side' },
    h('option', { value: 'all' }, 'all ops'),
    h('option', { value: 'cuda' }, 'ops with CUDA time'),
    h('option', { value: 'cpu' }, 'CPU-only ops')
  );
  const table = h('table', { class: 'gpuprof-w-table gpuprof-w-ops' });
  const sortBy = (k: string) => {
    desc = key === k ? !desc : k !== 'name';
    key = k;
    draw();
  };
  const draw = () => {
    const arrow = desc ? ' ▼' : ' ▲';
    const head = h(
      'tr',
      {},
      ...OP_COLS.map(([k, label]) =>
        h(
          'th',
          {
            class: k === key ? `sorted ${desc ? 'desc' : 'asc'}` : '',
            'data-key': k,
            onclick: () => sortBy(k)
          },
          label + (k === key ? arrow : '')
        )
      )
    );
    const shown = visibleOps(rows, input.value, select.value as OpSide, key, desc);
    const body = shown.map(r =>
      h(
        'tr',
        {},
        ...OP_COLS.map(([k, , kind]) => {
          const v = r[k];
          const text = kind === 't' ? us(v as number | null | undefined) : String(v ?? '');
          return h('td', { class: kind === 's' ? 'n' : '', title: String(v ?? '') }, text);
        })
      )
    );
    table.replaceChildren(h('thead', {}, head), h('tbody', {}, ...body));
  };
  input.addEventListener('input', draw);
  select.addEventListener('change', draw);
  draw();
  const hint = h(
    'span',
    { class: 'gpuprof-w-hint' },
    `${rows.length} ops (top by CUDA time; report.ops has all)`
  );
  box.append(h('div', { class: 'gpuprof-w-tools' }, input, select, hint), table);
  return box;
}

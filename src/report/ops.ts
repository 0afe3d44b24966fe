/**
 * The "Operators" panel: the summary's rows in the summary's order (host time first for a
 * host-side verdict, own device time first otherwise: `basis.ops_sorted_by`), with per-step /
 * per-call / % of step columns on the report's basis.
 */
import { IBasis } from './basis';
import { empty, h, us } from './dom';
import { IColumn, sortableTable } from './table';
import { IOpRow, IReportSummary } from './summary';

/** An op row with its self device time under the column key the table sorts by. */
export interface IFoldedOp extends IOpRow {
  device_self_us: number;
}

/** The summary's rows, in its order; autograd nodes were folded into their ops by Python. */
export function opRows(rows: readonly IOpRow[]): IFoldedOp[] {
  return rows.map(r => ({ ...r, device_self_us: r.cuda_self_us }));
}

/** Which ops the side selector keeps. */
export type OpSide = 'all' | 'cuda' | 'cpu';

/** The rows kept by a name filter and a side. */
export function filterOps(rows: readonly IFoldedOp[], filter: string, side: OpSide): IFoldedOp[] {
  const f = filter.toLowerCase();
  return rows.filter(r => {
    const device = r.cuda_total_us > 0;
    return (
      r.name.toLowerCase().includes(f) && (side === 'all' || (side === 'cuda' ? device : !device))
    );
  });
}

/** The column the summary's rows are ordered by (`basis.ops_sorted_by`, Python's decision). */
export function defaultOpSort(sm: IReportSummary): string {
  const key = sm.basis.ops_sorted_by ?? 'cuda_self_us';
  return key === 'cuda_self_us' ? 'device_self_us' : key;
}

/** The op columns on `basis`; `stepMs` (the step time) makes the % of step column. */
export function opColumns(basis: IBasis, stepMs: number | null): IColumn<IFoldedOp>[] {
  const t = (
    key: 'device_self_us' | 'cpu_self_us' | 'cpu_total_us' | 'cuda_total_us',
    label: string
  ) => {
    const host = key.startsWith('cpu');
    return {
      key,
      label: `${label} (${basis.title})`,
      value: (r: IFoldedOp) => (host ? basis.hostValue : basis.value)(r[key]),
      show: (r: IFoldedOp) => (host ? basis.host : basis.total)(r[key])
    };
  };
  const pct = (r: IFoldedOp) =>
    stepMs ? (100 * r.device_self_us) / basis.steps / 1000 / stepMs : 0;
  return [
    {
      key: 'name',
      label: 'op',
      text: true,
      value: r => r.name
    },
    { key: 'calls', label: 'calls', value: r => r.calls },
    t('device_self_us', 'self device'),
    {
      key: 'per_call',
      label: 'self device per call',
      value: r => r.device_self_us / Math.max(r.calls, 1),
      show: r => us(r.device_self_us / Math.max(r.calls, 1))
    },
    { key: 'pct', label: '% of step', value: pct, show: r => `${pct(r).toFixed(1)} %` },
    t('cpu_self_us', 'CPU self'),
    t('cpu_total_us', 'CPU total'),
    t('cuda_total_us', 'device incl. children'),
    { key: 'input_dims', label: 'shapes', text: true, value: r => r.input_dims }
  ];
}

/** Filter box, side selector and the sortable op table. */
export function opsPanel(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const rows = opRows(sm.ops);
  const box = h('div');
  if (!rows.length) {
    box.append(empty('No operators were recorded.'));
    return box;
  }
  // device time is the same with and without the profiler: its share is of the real step, as
  // the kernels' `pct_of_step` and the header's GPU busy are
  const stepMs = sm.basis.real_step_ms || sm.steps.median_ms || null;
  // the rows come in the order Python chose for this verdict: kept until a header is clicked
  const { table, draw } = sortableTable(
    opColumns(basis, stepMs),
    defaultOpSort(sm),
    'gpuprof-w-ops',
    true,
    'Operators of the profiled steps (sort: click or press Enter on a column header)'
  );
  const input = h('input', {
    type: 'search',
    placeholder: 'filter ops…',
    class: 'gpuprof-w-filter',
    'aria-label': 'filter ops'
  });
  const select = h(
    'select',
    { class: 'gpuprof-w-side', 'aria-label': 'which ops' },
    h('option', { value: 'all' }, 'all ops'),
    h('option', { value: 'cuda' }, 'ops with device time'),
    h('option', { value: 'cpu' }, 'CPU-only ops')
  );
  const redraw = () => draw(filterOps(rows, input.value, select.value as OpSide));
  input.addEventListener('input', redraw);
  select.addEventListener('change', redraw);
  redraw();
  const hint = h(
    'span',
    { class: 'gpuprof-w-hint' },
    `${rows.length} ops, autograd nodes folded into their ops; times ${basis.title}; % of the real step`
  );
  box.append(h('div', { class: 'gpuprof-w-tools' }, input, select, hint), table);
  return box;
}

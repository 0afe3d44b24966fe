/**
 * The "Operators" panel: self device time first, autograd wrappers folded into the op they
 * wrap, per-step / per-call / % of step columns on the report's basis; sorted by CPU time when
 * the verdict says the host or the input pipeline is the bottleneck.
 */
import { IBasis } from './basis';
import { empty, h, us } from './dom';
import { IColumn, sortableTable } from './table';
import { IOpRow, IReportSummary } from './summary';

/** PyTorch's autograd wrapper around a backward op: `<prefix><op>`. */
const WRAPPER = 'autograd::engine::evaluate_function: ';

/** An op row with its wrapper folded in and its self device time settled. */
export interface IFoldedOp extends IOpRow {
  device_self_us: number;
  wrapped: boolean;
}

/** Rows with each autograd wrapper merged into its op (a wrapper without its op takes the op's name). */
export function foldWrappers(rows: readonly IOpRow[]): IFoldedOp[] {
  const out = new Map<string, IFoldedOp>();
  const selfOf = (r: IOpRow) => Number(r.self_device_us ?? r.cuda_self_us ?? 0);
  for (const r of rows.filter(r => !String(r.name).startsWith(WRAPPER))) {
    out.set(String(r.name), { ...r, device_self_us: selfOf(r), wrapped: false });
  }
  for (const r of rows.filter(r => String(r.name).startsWith(WRAPPER))) {
    const name = String(r.name).slice(WRAPPER.length);
    const op = out.get(name);
    if (op) {
      // the wrapper's inclusive times are the op's again; only its own (self) time is extra
      op.cpu_self_us = (op.cpu_self_us ?? 0) + (r.cpu_self_us ?? 0);
      op.device_self_us += selfOf(r);
      op.wrapped = true;
    } else {
      out.set(name, { ...r, name, device_self_us: selfOf(r), wrapped: true });
    }
  }
  return Array.from(out.values());
}

/** Which ops the side selector keeps. */
export type OpSide = 'all' | 'cuda' | 'cpu';

/** The rows kept by a name filter and a side. */
export function filterOps(rows: readonly IFoldedOp[], filter: string, side: OpSide): IFoldedOp[] {
  const f = filter.toLowerCase();
  return rows.filter(r => {
    const device = (r.cuda_total_us ?? 0) > 0;
    return (
      String(r.name).toLowerCase().includes(f) &&
      (side === 'all' || (side === 'cuda' ? device : !device))
    );
  });
}

/** The column the table starts sorted by: CPU self when the host or input is the bottleneck. */
export function defaultOpSort(sm: IReportSummary): string {
  return ['input', 'host'].includes(sm.verdict?.category ?? '') ? 'cpu_self_us' : 'device_self_us';
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
      value: (r: IFoldedOp) => (host ? basis.hostValue : basis.value)(r[key] as number),
      show: (r: IFoldedOp) => (host ? basis.host : basis.total)(r[key] as number)
    };
  };
  const pct = (r: IFoldedOp) =>
    typeof r.pct_of_step === 'number'
      ? r.pct_of_step
      : stepMs
        ? (100 * r.device_self_us) / basis.steps / 1000 / stepMs
        : 0;
  return [
    {
      key: 'name',
      label: 'op',
      text: true,
      value: r => String(r.name),
      show: r => (r.wrapped ? `${r.name} (+ autograd wrapper)` : String(r.name))
    },
    { key: 'calls', label: 'calls', value: r => r.calls ?? 0 },
    t('device_self_us', 'self device'),
    {
      key: 'per_call',
      label: 'self device per call',
      value: r => r.device_self_us / Math.max(r.calls ?? 1, 1),
      show: r => us(r.device_self_us / Math.max(r.calls ?? 1, 1))
    },
    { key: 'pct', label: '% of step', value: pct, show: r => `${pct(r).toFixed(1)} %` },
    t('cpu_self_us', 'CPU self'),
    t('cpu_total_us', 'CPU total'),
    t('cuda_total_us', 'device incl. children'),
    { key: 'input_dims', label: 'shapes', text: true, value: r => String(r.input_dims ?? '') }
  ];
}

/** Filter box, side selector and the sortable op table. */
export function opsPanel(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const rows = foldWrappers(sm.ops ?? []);
  const box = h('div');
  if (!rows.length) {
    box.append(empty('No operators were recorded.'));
    return box;
  }
  // device time is the same with and without the profiler: its share is of the real step, as
  // the kernels' `pct_of_step` and the header's GPU busy are
  const stepMs = sm.basis?.real_step_ms || sm.steps?.median_ms || null;
  const { table, draw } = sortableTable(
    opColumns(basis, stepMs),
    defaultOpSort(sm),
    'gpuprof-w-ops'
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
    `${rows.length} ops, autograd wrappers folded; times ${basis.title}; % of the real step`
  );
  box.append(h('div', { class: 'gpuprof-w-tools' }, input, select, hint), table);
  return box;
}

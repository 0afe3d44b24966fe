/**
 * The "Operators" panel: the summary's rows in the summary's order (host time first for a
 * host-side verdict, own device time first otherwise: `basis.ops_sorted_by`), with per-step /
 * per-call / % of step columns on the report's basis.
 */
import { IBasis } from './basis';
import { count, empty, h, ms, pct, us } from './dom';
import { callsColumn, shareColumns } from './kernels';
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

/** Every input-shape list of an op with its calls ("[[64, 512]] ×1.8/step"), most first. */
export function shapeLines(r: IOpRow): string[] {
  const shapes = r.shapes ?? [];
  if (!shapes.length) {
    return r.input_dims ? [r.input_dims] : [];
  }
  return shapes.map(x => `${x.input_dims || '(no shapes)'} ×${count(x.calls_per_step)}/step`);
}

/** The kernels an op launched ("gemm_kernel ×2/step, 0.31 ms"), longest first. */
export function kernelLines(r: IOpRow): string[] {
  return (r.kernels ?? []).map(
    k => `${k.short_name || k.name} ×${count(k.calls_per_step)}/step, ${ms(k.ms_per_step)}`
  );
}

/** A cell that shows the first line and expands to all of them. */
function listCell(lines: string[], noun: string): Node {
  if (lines.length <= 1) {
    return document.createTextNode(lines[0] ?? '—');
  }
  return h(
    'details',
    { class: 'gpuprof-w-list' },
    h('summary', {}, `${lines[0]} (+${lines.length - 1} ${noun})`),
    h('ul', {}, ...lines.slice(1).map(line => h('li', {}, line)))
  );
}

/** The op columns on `basis`: calls per step, both shares, shapes and kernels from the model. */
export function opColumns(basis: IBasis): IColumn<IFoldedOp>[] {
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
  return [
    {
      key: 'name',
      label: 'op',
      text: true,
      value: r => r.name
    },
    callsColumn<IFoldedOp>(basis),
    t('device_self_us', 'self device'),
    {
      key: 'per_call',
      label: 'self device per call',
      value: r => r.cuda_us_per_call,
      show: r => us(r.cuda_us_per_call)
    },
    ...shareColumns<IFoldedOp>(
      r => r.pct_of_gpu,
      r => r.gpu_pct_of_step
    ),
    t('cpu_self_us', 'CPU self'),
    t('cpu_total_us', 'CPU total'),
    t('cuda_total_us', 'device incl. children'),
    {
      key: 'input_dims',
      label: 'input shapes',
      text: true,
      value: r => shapeLines(r).join('\n'),
      cell: r => listCell(shapeLines(r), 'shapes')
    },
    {
      key: 'kernels',
      label: 'kernels launched',
      text: true,
      value: r => kernelLines(r).join('\n'),
      cell: r => listCell(kernelLines(r), 'kernels')
    }
  ];
}

/** One row per (op, input shapes): what group-by-shape shows. */
export interface IShapeRow {
  name: string;
  input_dims: string;
  calls: number;
  calls_per_step: number;
  cuda_self_ms_per_step: number;
  pct_of_gpu: number | null;
}

/** The ops' rows split by input shapes (every shape the summary holds). */
export function shapeRows(rows: readonly IOpRow[]): IShapeRow[] {
  const out: IShapeRow[] = [];
  for (const r of rows) {
    for (const x of r.shapes ?? []) {
      out.push({
        name: r.name,
        input_dims: x.input_dims,
        calls: x.calls,
        calls_per_step: x.calls_per_step,
        cuda_self_ms_per_step: x.cuda_self_ms_per_step,
        pct_of_gpu: x.pct_of_gpu
      });
    }
  }
  return out;
}

/** The group-by-shape columns on `basis`. */
export function shapeColumns(basis: IBasis): IColumn<IShapeRow>[] {
  return [
    { key: 'name', label: 'op', text: true, value: r => r.name },
    { key: 'input_dims', label: 'input shapes', text: true, value: r => r.input_dims || '—' },
    callsColumn<IShapeRow>(basis),
    {
      key: 'cuda_self_ms_per_step',
      label: `self device (${basis.title})`,
      value: r => r.cuda_self_ms_per_step,
      show: r => basis.ms(r.cuda_self_ms_per_step)
    },
    {
      key: 'pct_of_gpu',
      label: '% of GPU time',
      value: r => r.pct_of_gpu ?? 0,
      show: r => pct(r.pct_of_gpu, 1)
    }
  ];
}

/** Filter box, side selector, group-by-shape switch and the sortable op table. */
export function opsPanel(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const rows = opRows(sm.ops);
  const box = h('div');
  if (!rows.length) {
    box.append(empty('No operators were recorded.'));
    return box;
  }
  // the rows come in the order Python chose for this verdict: kept until a header is clicked
  const byOp = sortableTable(
    opColumns(basis),
    defaultOpSort(sm),
    'gpuprof-w-ops',
    true,
    'Operators of the profiled steps (sort: click or press Enter on a column header)'
  );
  const byShape = sortableTable(
    shapeColumns(basis),
    'cuda_self_ms_per_step',
    'gpuprof-w-shapes',
    false,
    'Operators by input shape (sort: click or press Enter on a column header)'
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
  const group = h('input', { type: 'checkbox', class: 'gpuprof-w-byshape' });
  const groupLabel = h('label', {}, group, ' one row per input shape');
  const redraw = () => {
    const kept = filterOps(rows, input.value, select.value as OpSide);
    byOp.table.hidden = group.checked;
    byShape.table.hidden = !group.checked;
    if (group.checked) {
      byShape.draw(shapeRows(kept));
    } else {
      byOp.draw(kept);
    }
  };
  input.addEventListener('input', redraw);
  select.addEventListener('change', redraw);
  group.addEventListener('change', redraw);
  redraw();
  const hint = h(
    'span',
    { class: 'gpuprof-w-hint' },
    `${rows.length} ops, autograd nodes folded into their ops; times ${basis.title}; % of GPU time and % of the real step`
  );
  box.append(
    h('div', { class: 'gpuprof-w-tools' }, input, select, groupLabel, hint),
    byOp.table,
    byShape.table
  );
  return box;
}

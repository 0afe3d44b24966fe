/**
 * The "Kernels" panel: GPU time by kernel kind as bars, then every kernel the summary holds in
 * a sortable, scrolling table whose filter searches them all. Each figure is the summary's:
 * calls per step, % of GPU time and % of step, the Tensor-Core and launch-shape columns.
 */
import { IBasis } from './basis';
import { count, empty, h, pct, us } from './dom';
import { IColumn, sortableTable } from './table';
import { IKernelRow, IReportSummary } from './summary';

/** Whether a kernel runs on Tensor Cores, could (a matmul-like kind), or cannot. */
export function tensorCoreText(r: IKernelRow): string {
  if (r.tensor_core) {
    return 'yes';
  }
  return r.tensor_core_eligible ? 'no (eligible)' : '—';
}

/** Grid × block and occupancy as one cell ("65536×1×1 · 128×1×1 · 100%"), '—' without. */
export function launchText(r: IKernelRow): string {
  const parts = [r.grid, r.block].filter(Boolean);
  if (typeof r.occupancy_pct === 'number') {
    parts.push(`occ. ${pct(r.occupancy_pct)}`);
  }
  return parts.length ? parts.join(' · ') : '—';
}

/** A name cell: the short name, expanding to the full (template) name on click or Enter. */
export function nameCell(short: string, full: string): Node {
  if (!short || short === full) {
    return document.createTextNode(full);
  }
  return h(
    'details',
    { class: 'gpuprof-w-name' },
    h('summary', {}, short),
    h('code', { class: 'gpuprof-w-fullname' }, full)
  );
}

/** Calls as the basis counts them: per step ("1.8") or the profiled total. */
export function callsColumn<R extends { calls: number; calls_per_step?: number }>(
  basis: IBasis
): IColumn<R> {
  const perStep = basis.kind === 'step';
  return {
    key: 'calls',
    label: perStep ? 'calls/step' : `calls (total of ${basis.steps} steps)`,
    value: r => (perStep ? (r.calls_per_step ?? 0) : r.calls),
    show: r => count(perStep ? (r.calls_per_step ?? 0) : r.calls)
  };
}

/** The two shares every kernel and op row carries, labelled the same everywhere. */
export function shareColumns<R>(
  gpu: (r: R) => number | null | undefined,
  step: (r: R) => number | null | undefined
): IColumn<R>[] {
  return [
    {
      key: 'pct_of_gpu',
      label: '% of GPU time',
      value: r => gpu(r) ?? 0,
      show: r => pct(gpu(r), 1)
    },
    {
      key: 'pct_of_step',
      label: '% of step',
      value: r => step(r) ?? 0,
      show: r => pct(step(r), 1)
    }
  ];
}

/** Kernel table columns on `basis`. */
export function kernelColumns(basis: IBasis): IColumn<IKernelRow>[] {
  return [
    {
      key: 'name',
      label: 'kernel',
      text: true,
      value: r => r.short_name || r.name,
      title: r => r.name,
      cell: r => nameCell(r.short_name ?? '', r.name)
    },
    { key: 'kind', label: 'kind', text: true, value: r => r.kind },
    { key: 'tensor_core', label: 'Tensor Cores', text: true, value: tensorCoreText },
    callsColumn<IKernelRow>(basis),
    {
      key: 'total_us',
      label: `time (${basis.title})`,
      value: r => basis.value(r.total_us),
      show: r => basis.total(r.total_us)
    },
    {
      key: 'mean_us',
      label: 'mean per call',
      value: r => r.mean_us,
      show: r => us(r.mean_us)
    },
    ...shareColumns<IKernelRow>(
      r => r.pct_of_gpu,
      r => r.pct_of_step
    ),
    { key: 'launch', label: 'grid · block · occupancy', text: true, value: launchText },
    {
      key: 'ops',
      label: 'launched by',
      text: true,
      value: r => (r.ops ?? []).join(', '),
      show: r => (r.ops ?? []).join(', ') || '—'
    }
  ];
}

/** Horizontal bars of GPU time by kernel kind, text in the theme's colours. */
export function kindBars(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const kinds = sm.kernel_kinds.filter(k => k.total_us > 0);
  const top = Math.max(...kinds.map(k => k.total_us), 1);
  return h(
    'div',
    { class: 'gpuprof-w-bars', role: 'list' },
    ...kinds.map(k =>
      h(
        'div',
        { class: 'gpuprof-w-bar', role: 'listitem' },
        h(
          'span',
          { class: 'gpuprof-w-bar-label' },
          `${k.kind}${k.tensor_core ? ' (tensor core)' : ''}`
        ),
        h(
          'span',
          { class: 'gpuprof-w-bar-track' },
          h('span', {
            class: 'gpuprof-w-bar-fill',
            style: `width:${((100 * k.total_us) / top).toFixed(1)}%`
          })
        ),
        h('span', { class: 'gpuprof-w-bar-value' }, basis.total(k.total_us))
      )
    )
  );
}

/** The kernels a filter keeps: its text in the short or the full name, any case. */
export function filterKernels(rows: readonly IKernelRow[], filter: string): IKernelRow[] {
  const f = filter.toLowerCase();
  return rows.filter(
    r => r.name.toLowerCase().includes(f) || (r.short_name ?? '').toLowerCase().includes(f)
  );
}

/** What the table holds: the summary's label, and how many a filter kept. */
export function kernelCount(sm: IReportSummary, kept: number): string {
  const label = sm.kernel_table?.label ?? `${sm.kernels.length} kernels`;
  return kept === sm.kernels.length ? label : `${kept} match · ${label}`;
}

/** Kind bars, a filter box and the kernel table (by time, descending). */
export function kernelsPanel(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const rows = sm.kernels.slice();
  const box = h('div');
  if (sm.kernel_kinds.length) {
    box.append(h('h4', {}, `GPU time by kernel kind (${basis.title})`), kindBars(sm, basis));
  }
  if (!rows.length) {
    box.append(empty('No GPU kernels were recorded.'));
    return box;
  }
  const { table, draw } = sortableTable(
    kernelColumns(basis),
    'total_us',
    'gpuprof-w-kernels',
    false,
    'GPU kernels of the profiled steps (sort: click or press Enter on a column header)'
  );
  const input = h('input', {
    type: 'search',
    placeholder: 'filter kernels…',
    class: 'gpuprof-w-filter',
    'aria-label': 'filter kernels'
  });
  const hint = h('span', { class: 'gpuprof-w-hint gpuprof-w-kernel-count' });
  const redraw = () => {
    const kept = filterKernels(rows, input.value);
    hint.textContent = kernelCount(sm, kept.length);
    draw(kept);
  };
  input.addEventListener('input', redraw);
  redraw();
  box.append(h('div', { class: 'gpuprof-w-tools' }, input, hint), table);
  return box;
}

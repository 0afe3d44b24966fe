/** The "Kernels" panel: GPU time by kernel kind as bars, then every kernel in a sortable table. */
import { IBasis } from './basis';
import { empty, h, us } from './dom';
import { IColumn, sortableTable } from './table';
import { IKernelRow, IReportSummary } from './summary';

/** Kernel table columns on `basis`. */
export function kernelColumns(basis: IBasis): IColumn<IKernelRow>[] {
  return [
    { key: 'name', label: 'kernel', text: true, value: r => r.name },
    {
      key: 'kind',
      label: 'kind',
      text: true,
      value: r => `${r.kind}${r.tensor_core ? ' (tensor core)' : ''}`
    },
    {
      key: 'calls',
      label: `calls (${basis.kind === 'step' ? 'per step' : 'total'})`,
      value: r => basis.value(r.calls),
      show: r => basis.value(r.calls).toFixed(basis.kind === 'step' ? 1 : 0)
    },
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
    {
      key: 'pct_of_gpu',
      label: '% of GPU time',
      value: r => r.pct_of_gpu ?? 0,
      show: r => `${(r.pct_of_gpu ?? 0).toFixed(1)} %`
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
  const redraw = () =>
    draw(rows.filter(r => r.name.toLowerCase().includes(input.value.toLowerCase())));
  input.addEventListener('input', redraw);
  redraw();
  box.append(
    h(
      'div',
      { class: 'gpuprof-w-tools' },
      input,
      h('span', { class: 'gpuprof-w-hint' }, `${rows.length} kernels`)
    ),
    table
  );
  return box;
}

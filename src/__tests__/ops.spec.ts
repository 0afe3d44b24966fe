import { makeBasis } from '../report/basis';
import { defaultOpSort, filterOps, opRows, opsPanel } from '../report/ops';
import { IReportSummary } from '../report/summary';
import { IColumn, sortRows } from '../report/table';
import { opRow, PAYLOAD, sampleSummary } from './reportFixture';

const names = (panel: HTMLElement) =>
  Array.from(panel.querySelectorAll('tbody tr')).map(r => r.querySelector('td')?.textContent);
const gpuBound = (): IReportSummary => {
  const sm = sampleSummary();
  return { ...sm, verdict: { ...sm.verdict, category: 'compute', label: 'compute' } };
};
const panelOf = (sm: IReportSummary) => opsPanel(sm, makeBasis(sm, 'step'));

describe('operator table', () => {
  it('starts by self device time, per step, with calls/step, both shares, shapes and kernels', () => {
    const panel = panelOf(gpuBound());
    expect(names(panel)).toEqual(['aten::mm', 'aten::add', PAYLOAD]);
    const sorted = panel.querySelector('th.sorted') as HTMLElement;
    expect(sorted.dataset.key).toBe('device_self_us');
    expect(sorted.textContent).toBe('self device (ms per real step) ▼');
    expect(sorted.getAttribute('aria-sort')).toBe('descending');
    const first = Array.from(panel.querySelectorAll('tbody tr')[0].children).map(
      c => c.textContent
    );
    // 10 calls over 3 steps: 3.3 a step, never the 10 total beside per-step times; the shares
    // are the model's (30 % of GPU time, 10 % of the real step), the shapes all of them
    expect(first).toEqual([
      'aten::mm',
      '3.3',
      '1.00 ms',
      '0.30 ms',
      '30.0%',
      '10.0%',
      '6.67 µs',
      '16.7 µs',
      '1.00 ms',
      '[[4, 4]] ×2.3/step (+1 shapes)[[8, 8]] ×1/step',
      'ampere_sgemm ×3.3/step, 1.00 ms'
    ]);
    const heads = Array.from(panel.querySelectorAll('th')).map(th => th.dataset.key);
    expect(heads.slice(4, 6)).toEqual(['pct_of_gpu', 'pct_of_step']);
    expect(panel.querySelector('img')).toBeNull();
  });

  it("shows the model's shares, never its own: a changed step changes nothing here", () => {
    const sm = gpuBound();
    sm.ops = [{ ...sm.ops[0], gpu_pct_of_step: 25, pct_of_gpu: 40 }];
    sm.basis = { ...sm.basis, real_step_ms: 4 };
    const row = panelOf(sm).querySelectorAll('tbody tr')[0].children;
    expect([row[4].textContent, row[5].textContent]).toEqual(['40.0%', '25.0%']);
    expect(panelOf(sm).querySelector('.gpuprof-w-hint')?.textContent).toContain(
      '% of GPU time and % of the real step'
    );
  });

  it('groups by input shape: one row per shape with its calls per step and share', () => {
    const panel = panelOf(gpuBound());
    const box = panel.querySelector('input.gpuprof-w-byshape') as HTMLInputElement;
    box.checked = true;
    box.dispatchEvent(new Event('change'));
    const shapes = panel.querySelector('table.gpuprof-w-shapes') as HTMLTableElement;
    expect(shapes.hidden).toBe(false);
    expect((panel.querySelector('table.gpuprof-w-ops') as HTMLTableElement).hidden).toBe(true);
    const rows = Array.from(shapes.querySelectorAll('tbody tr')).map(r =>
      Array.from(r.children).map(c => c.textContent)
    );
    expect(rows).toEqual([
      ['aten::mm', '[[4, 4]]', '2.3', '0.70 ms', '21.0%'],
      ['aten::mm', '[[8, 8]]', '1', '0.30 ms', '9.0%']
    ]);
  });

  it('takes the profiler out of host times per real step, as Python does; totals stay profiled', () => {
    // 6 ms of host time over 3 profiled steps, each step profiled at twice the real length:
    // 2 ms per profiled step, 1 ms per real step (cpu_self_ms_per_step in Python)
    const sm = gpuBound();
    sm.basis = { ...sm.basis, profiled_scale: 2 };
    sm.ops = [
      opRow({
        name: 'aten::to',
        calls: 3,
        cpu_self_us: 6000,
        cpu_total_us: 6000,
        cuda_self_us: 0,
        cuda_total_us: 0,
        input_dims: ''
      })
    ];
    const cells = (kind: 'step' | 'total') =>
      Array.from(opsPanel(sm, makeBasis(sm, kind)).querySelectorAll('tbody tr')[0].children).map(
        c => c.textContent
      );
    expect(cells('step').slice(6, 8)).toEqual(['1.00 ms', '1.00 ms']);
    expect(cells('total').slice(6, 8)).toEqual(['6.00 ms', '6.00 ms']);
    // calls: per step on the step basis, the profiled total on the totals basis
    expect([cells('step')[1], cells('total')[1]]).toEqual(['1', '3']);
  });

  it("keeps the summary's order and marks the column Python ordered it by", () => {
    // a sync or input verdict: Python leads with host time (the culprit call first)
    const sm = sampleSummary();
    sm.basis = { ...sm.basis, ops_sorted_by: 'cpu_total_us' };
    expect(defaultOpSort(sm)).toBe('cpu_total_us');
    expect(defaultOpSort(gpuBound())).toBe('device_self_us');
    const given = sm.ops.map(o => o.name);
    const panel = panelOf(sm);
    expect(names(panel)).toEqual(given); // never re-sorted: the order is the model's
    expect((panel.querySelector('th.sorted') as HTMLElement).dataset.key).toBe('cpu_total_us');
  });

  it('shows totals of the profiled steps on the total basis', () => {
    const sm = gpuBound();
    const panel = opsPanel(sm, makeBasis(sm, 'total'));
    expect(panel.querySelector('th.sorted')?.textContent).toBe(
      'self device (ms, total of 3 profiled steps) ▼'
    );
    expect(panel.querySelectorAll('tbody tr')[0].children[2].textContent).toBe('3.00 ms');
  });

  it('sorts by a clicked header, flips on a second click, and names sort ascending first', () => {
    const panel = panelOf(gpuBound());
    (panel.querySelector('th[data-key="calls"]') as HTMLElement).click();
    expect(names(panel)).toEqual(['aten::add', 'aten::mm', PAYLOAD]);
    (panel.querySelector('th[data-key="calls"]') as HTMLElement).click();
    expect(names(panel)).toEqual([PAYLOAD, 'aten::mm', 'aten::add']);
    expect(panel.querySelector('th[data-key="calls"]')?.className).toBe('sorted asc');
    (panel.querySelector('th[data-key="name"]') as HTMLElement).click();
    expect(names(panel)).toEqual([PAYLOAD, 'aten::add', 'aten::mm']);
  });

  it('sorts from the keyboard: Enter and Space on a focused header, focus kept', () => {
    const panel = panelOf(gpuBound());
    document.body.append(panel);
    const key = (k: string, which: string) =>
      (panel.querySelector(`th[data-key="${k}"]`) as HTMLElement).dispatchEvent(
        new KeyboardEvent('keydown', { key: which, bubbles: true })
      );
    expect(panel.querySelector('th[data-key="calls"]')?.getAttribute('tabindex')).toBe('0');
    key('calls', 'Enter');
    expect(names(panel)).toEqual(['aten::add', 'aten::mm', PAYLOAD]);
    expect((document.activeElement as HTMLElement).dataset.key).toBe('calls');
    key('calls', ' ');
    expect(names(panel)).toEqual([PAYLOAD, 'aten::mm', 'aten::add']);
    key('calls', 'x');
    expect(names(panel)).toEqual([PAYLOAD, 'aten::mm', 'aten::add']);
    panel.remove();
  });

  it('filters by name (case-insensitive) and by device or CPU-only', () => {
    const panel = panelOf(gpuBound());
    const input = panel.querySelector('input.gpuprof-w-filter') as HTMLInputElement;
    input.value = 'ATEN::';
    input.dispatchEvent(new Event('input'));
    expect(names(panel)).toEqual(['aten::mm', 'aten::add']);
    input.value = '';
    input.dispatchEvent(new Event('input'));
    const side = panel.querySelector('select.gpuprof-w-side') as HTMLSelectElement;
    side.value = 'cpu';
    side.dispatchEvent(new Event('change'));
    expect(names(panel)).toEqual([PAYLOAD]);
    expect(filterOps(opRows(gpuBound().ops), '', 'cuda').map(r => r.name)).toEqual([
      'aten::mm',
      'aten::add'
    ]);
  });

  it('orders numbers numerically and text by locale', () => {
    const rows = [
      { name: 'b', calls: 10 },
      { name: 'a', calls: 9 },
      { name: 'C', calls: 100 }
    ];
    const calls: IColumn<(typeof rows)[0]> = { key: 'calls', label: '', value: r => r.calls };
    const name: IColumn<(typeof rows)[0]> = { key: 'name', label: '', value: r => r.name };
    expect(sortRows(rows, calls, false).map(r => r.calls)).toEqual([9, 10, 100]);
    expect(sortRows(rows, name, false).map(r => r.name)).toEqual(['a', 'b', 'C']);
  });
});

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
  it('starts by self device time, per step, with per-call and % of step columns', () => {
    const panel = panelOf(gpuBound());
    expect(names(panel)).toEqual(['aten::mm', 'aten::add', PAYLOAD]);
    const sorted = panel.querySelector('th.sorted') as HTMLElement;
    expect(sorted.dataset.key).toBe('device_self_us');
    expect(sorted.textContent).toBe('self device (ms per real step) ▼');
    expect(sorted.getAttribute('aria-sort')).toBe('descending');
    const first = Array.from(panel.querySelectorAll('tbody tr')[0].children).map(
      c => c.textContent
    );
    // 3000 µs over 3 profiled steps = 1 ms per step = 10.0 % of the 10 ms real step (not 8.3 %
    // of the 12 ms profiled one: device time is the same without the profiler)
    expect(first).toEqual([
      'aten::mm',
      '10',
      '1.00 ms',
      '0.30 ms',
      '10.0 %',
      '6.67 µs',
      '16.7 µs',
      '1.00 ms',
      '[[4, 4]]'
    ]);
    expect(panel.querySelector('img')).toBeNull();
  });

  it("takes the step of the summary's basis for the % of step", () => {
    const sm = gpuBound();
    sm.basis = { ...sm.basis, real_step_ms: 4 };
    const row = panelOf(sm).querySelectorAll('tbody tr')[0].children;
    expect(row[4].textContent).toBe('25.0 %');
    expect(panelOf(sm).querySelector('.gpuprof-w-hint')?.textContent).toContain(
      '% of the real step'
    );
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
    expect(cells('step').slice(5, 7)).toEqual(['1.00 ms', '1.00 ms']);
    expect(cells('total').slice(5, 7)).toEqual(['6.00 ms', '6.00 ms']);
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

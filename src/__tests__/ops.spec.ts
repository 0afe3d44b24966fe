import { opsPanel, visibleOps } from '../report/ops';
import { PAYLOAD, sampleSummary } from './reportFixture';

const names = (panel: HTMLElement) =>
  Array.from(panel.querySelectorAll('tbody tr')).map(r => r.querySelector('td')?.textContent);

describe('operator table', () => {
  it('starts sorted by CUDA total, descending, with times formatted', () => {
    const panel = opsPanel(sampleSummary());
    expect(names(panel)).toEqual(['aten::mm', 'aten::add', PAYLOAD]);
    const sorted = panel.querySelector('th.sorted') as HTMLElement;
    expect(sorted.dataset.key).toBe('cuda_total_us');
    expect(sorted.textContent).toBe('CUDA total ▼');
    const first = Array.from(panel.querySelectorAll('tbody tr')[0].children).map(
      c => c.textContent
    );
    expect(first).toEqual([
      'aten::mm',
      '10',
      '50.0 µs',
      '20.0 µs',
      '3.00 ms',
      '3.00 ms',
      '[[4, 4]]'
    ]);
    expect(panel.querySelector('img')).toBeNull();
    expect(panel.querySelector('.gpuprof-w-hint')?.textContent).toBe(
      '3 ops (top by CUDA time; report.ops has all)'
    );
  });

  it('sorts by a clicked header; a second click flips the order; names sort ascending first', () => {
    const panel = opsPanel(sampleSummary());
    (panel.querySelector('th[data-key="calls"]') as HTMLElement).click();
    expect(names(panel)).toEqual(['aten::add', 'aten::mm', PAYLOAD]);
    (panel.querySelector('th[data-key="calls"]') as HTMLElement).click();
    expect(names(panel)).toEqual([PAYLOAD, 'aten::mm', 'aten::add']);
    expect(panel.querySelector('th[data-key="calls"]')?.className).toBe('sorted asc');
    (panel.querySelector('th[data-key="name"]') as HTMLElement).click();
    expect(names(panel)).toEqual([PAYLOAD, 'aten::add', 'aten::mm']);
  });

  it('filters by name (case-insensitive) and by CUDA or CPU-only', () => {
    const panel = opsPanel(sampleSummary());
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
    side.value = 'cuda';
    side.dispatchEvent(new Event('change'));
    expect(names(panel)).toEqual(['aten::mm', 'aten::add']);
  });

  it('orders numbers numerically and text by locale', () => {
    const rows = [
      { name: 'b', calls: 10 },
      { name: 'a', calls: 9 },
      { name: 'C', calls: 100 }
    ];
    expect(visibleOps(rows, '', 'all', 'calls', false).map(r => r.calls)).toEqual([9, 10, 100]);
    expect(visibleOps(rows, '', 'all', 'name', false).map(r => r.name)).toEqual(['a', 'b', 'C']);
  });
});

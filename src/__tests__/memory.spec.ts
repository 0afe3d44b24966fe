import { makeBasis } from '../report/basis';
import { memorySections } from '../report/memory';
import { memoryLane, peakLabel } from '../report/memoryLane';
import { renderReport } from '../report/report';
import { timelinePanel } from '../report/timelinePanel';
import { LEFT } from '../report/timelineDrawing';
import { memoryBlocks, realSummary, summaryWithMemory } from './reportFixture';

/** The text of each body row of the table of class `cls` under `el`. */
function rows(el: Element, cls: string): string[][] {
  return Array.from(el.querySelectorAll(`table.${cls} tbody tr`)).map(tr =>
    Array.from(tr.querySelectorAll('td')).map(td => td.textContent ?? '')
  );
}

const PEAK =
  'peak 5.86 GB at 20.26 ms (backward): parameters 0.33 GB, optimizer state 0.66 GB, ' +
  'activations saved for backward 3.16 GB, temporaries 1.65 GB, model state (unnamed) 0.07 GB';

describe('memory over the step (GPT-2 recording)', () => {
  const sm = summaryWithMemory('gpt2');
  const over = memoryBlocks('gpt2').over_step!;

  it('draws the lane under the timeline, the peak marked and explained', () => {
    const panel = timelinePanel(sm, makeBasis(sm, 'step'));
    const tl = panel.querySelector('[data-chart="timeline"]')!;
    const lane = panel.querySelector('[data-chart="memory-lane"]')!;
    expect(lane).not.toBeNull();
    // under the timeline, in the same panel
    expect(tl.compareDocumentPosition(lane) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(peakLabel(over)).toBe(PEAK);
    const label = Array.from(lane.querySelectorAll('.gpuprof-w-mempeak-label'));
    expect(label.map(t => t.textContent).join(' ')).toBe(PEAK);
    expect(lane.getAttribute('aria-label')).toContain(PEAK);
    // one step of the line per point of the model's series
    const d = lane.querySelector('.gpuprof-w-memline')!.getAttribute('d')!;
    expect(d.split(' H').length).toBe(over.series_us.length);
    // the mark at the peak's time, the plot spanning the timeline's (LEFT .. width - 10)
    const span = over.series_us[over.series_us.length - 1] - over.series_us[0];
    const cx = LEFT + ((over.peak_us - over.series_us[0]) / span) * (900 - LEFT - 10);
    expect(Number(lane.querySelector('.gpuprof-w-mempeak circle')!.getAttribute('cx'))).toBeCloseTo(
      cx,
      6
    );
    expect(cx).toBeCloseTo(681.14, 1);
    const bands = Array.from(lane.querySelectorAll('.gpuprof-w-memphase'));
    expect(bands.map(b => b.getAttribute('class')!.split('-').pop())).toEqual(
      over.phases.map(p => p.name)
    );
    expect(bands.length).toBe(6);
  });

  it('lists the kinds at the peak, the top 3 lines and modules, and the priced fixes', () => {
    const el = memorySections(sm)!;
    expect(el.querySelector('h4')?.textContent).toBe('Memory over the step');
    expect(el.querySelector('.gpuprof-w-mempeak-text')?.textContent).toBe(
      'Peak 5.86 GB in backward, reserved 6.05 GB.'
    );
    expect(rows(el, 'gpuprof-w-memkinds')).toContainEqual([
      'activations saved for backward',
      '3.16 GB',
      '3.16 GB'
    ]);
    const [lines, modules] = Array.from(el.querySelectorAll('table.gpuprof-w-memholders'));
    expect(rows(lines.parentElement!, 'gpuprof-w-memholders')[0]).toEqual([
      '<script>:108',
      '3.16 GB',
      '130'
    ]);
    expect(lines.querySelectorAll('tbody tr').length).toBe(3);
    expect(modules.querySelector('tbody td')?.textContent).toBe('activations.py:66');
    expect(el.textContent).toContain('the batch could grow ×31.0');
    expect(rows(el, 'gpuprof-w-memfixes')).toEqual([
      [
        '2 micro-batches with gradient accumulation',
        '2.40 GB',
        'not priced: the same work in smaller kernels (a little slower per sample)',
        ''
      ],
      [
        'activation checkpointing of the 6 layers called at modeling_gpt2.py:608',
        '2.23 GB',
        "+29.20 ms (one extra forward of those layers: the forward's GPU time × their share " +
          "of saved activations (73%; the trace's forward kernels repeat no sequence 6 times); " +
          "GPU time: the step may pay host time too, the checkpoint's hooks and the " +
          "recompute's launches (--try checkpoint measures it))",
        '--try checkpoint'
      ],
      [
        'bf16 activations (autocast)',
        '1.58 GB',
        'not priced here: bf16 matmuls are faster; the precision finding prices them ' +
          '(at most: half the saved activations (no graph recorded))',
        '--try amp'
      ]
    ]);
    expect(el.querySelector('.gpuprof-w-oom')).toBeNull();
  });

  it('shows in the whole report (widget and sidebar) and not without a history', () => {
    expect(renderReport(sm).querySelector('[data-chart="memory-lane"]')).not.toBeNull();
    const plain = realSummary();
    expect(memorySections(plain)).toBeNull();
    expect(timelinePanel(plain, makeBasis(plain, 'step')).querySelector('.gpuprof-w-memory')).toBe(
      null
    );
  });

  it('keeps a lane of one point drawable', () => {
    const one = { ...over, series_us: [over.peak_us], series_bytes: [over.peak_bytes], phases: [] };
    const lane = memoryLane(one);
    expect(lane.querySelector('.gpuprof-w-memline')!.getAttribute('d')).not.toContain('NaN');
    expect(lane.querySelector('.gpuprof-w-mempeak-head')?.textContent).toBe(
      'peak 5.86 GB at 0.00 ms (backward):'
    );
  });
});

describe('out-of-memory post-mortem (OOM recording)', () => {
  const sm = summaryWithMemory('oom');

  it('says what was allocated, the 3 largest blocks with their lines and the fix', () => {
    const el = timelinePanel(sm, makeBasis(sm, 'step')).querySelector('.gpuprof-w-oom')!;
    expect(el.querySelector('h4')?.textContent).toBe('Out of memory');
    expect(el.querySelector('p')?.textContent).toBe(
      '0.20 GB requested with 8.86 GB allocated of 9.01 GB allowed ' +
        '(reserved 8.86 GB, largest free block 0.00 GB).'
    );
    expect(rows(el, 'gpuprof-w-oomtop')).toEqual([
      ['0.81 GB', '<script>:203', 'modeling_gpt2.py:239 › pytorch_utils.py:119'],
      ['0.81 GB', '<script>:203', 'modeling_gpt2.py:240 › activations.py:66'],
      ['0.81 GB', '<script>:203', 'modeling_gpt2.py:240 › activations.py:66']
    ]);
    expect(rows(el, 'gpuprof-w-memfixes')).toEqual([
      [
        '16 micro-batches with gradient accumulation',
        '74.81 GB',
        'not priced: the same work in smaller kernels',
        ''
      ]
    ]);
  });

  it('comes before the step it cut short', () => {
    const el = memorySections(sm)!;
    expect(el.firstElementChild?.className).toBe('gpuprof-w-oom');
    expect(el.querySelector('.gpuprof-w-memory')).not.toBeNull();
  });
});

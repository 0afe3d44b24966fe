import { ms } from '../report/dom';
import { banner } from '../report/header';
import { PANELS, renderReport } from '../report/report';
import render, { IWidgetModel } from '../report/widget';
import { IReportSummary } from '../report/summary';
import { emptySummary, noSteps, PAYLOAD, sampleSummary, summaryWith } from './reportFixture';

const text = (root: Element, selector: string) => root.querySelector(selector)?.textContent ?? null;

describe('renderReport', () => {
  it('draws the head: title, statistics, verdict, and no banner for a finished GPU run', () => {
    const root = renderReport(sampleSummary());
    expect(root.className).toBe('gpuprof-w');
    expect(text(root, '.gpuprof-w-title')).toBe('GPU profile — tiny run');
    expect(text(root, '.gpuprof-w-stats')).toBe(
      'Step time (unprofiled baseline, n=5): median 10.00 ms, p95 12.50 ms, IQR 1.25 ms, 1 outlier(s) · GPU busy 35% real / 40% under profiler'
    );
    expect(text(root, '.gpuprof-w-head .gpuprof-w-verdict')).toBe(
      'Verdict: input (high confidence) — The GPU waits for data.'
    );
    expect(root.querySelector('.gpuprof-w-banner')).toBeNull();
  });

  it('shows six tabs, the step panel first, and switches panels on click', () => {
    const root = renderReport(sampleSummary());
    const tabs = Array.from(root.querySelectorAll<HTMLButtonElement>('.gpuprof-w-tab'));
    expect(tabs.map(t => t.textContent)).toEqual([
      'Step time',
      'GPU timeline',
      'Operators',
      'Kernels',
      'Transfers & syncs',
      'Next steps'
    ]);
    const visible = () =>
      Array.from(root.querySelectorAll<HTMLElement>('.gpuprof-w-panel'))
        .filter(p => !p.hidden)
        .map(p => p.className);
    expect(visible()).toEqual(['gpuprof-w-panel gpuprof-w-panel-steps']);
    expect(tabs[0].getAttribute('aria-selected')).toBe('true');
    tabs[2].click();
    expect(visible()).toEqual(['gpuprof-w-panel gpuprof-w-panel-ops']);
    expect(tabs.map(t => t.getAttribute('aria-selected'))).toEqual([
      'false',
      'false',
      'true',
      'false',
      'false',
      'false'
    ]);
    expect(PANELS.map(p => p[0])).toEqual([
      'steps',
      'timeline',
      'ops',
      'kernels',
      'transfers',
      'next'
    ]);
  });

  it('warns about CPU-only runs, failed cells and step-less captures', () => {
    const sm = sampleSummary();
    const cpu: IReportSummary = { ...sm, gpu: { ...sm.gpu, available: false } };
    expect(banner(cpu)).toContain('GPU metrics unavailable');
    const failed: IReportSummary = {
      ...sm,
      source: { ...sm.source, status: 'failed', error: 'ValueError: bad' }
    };
    expect(banner(failed)).toBe('Partial report: the profiled code raised (ValueError: bad).');
    const root = renderReport(
      summaryWith({
        gpu: { ...sm.gpu, available: false },
        steps: noSteps(),
        verdict: {
          category: null,
          label: 'unavailable',
          summary: '',
          confidence: 'low',
          reasons: []
        }
      })
    );
    const banners = Array.from(root.querySelectorAll('.gpuprof-w-banner')).map(b => b.textContent);
    expect(banners[0]).toContain('GPU metrics unavailable');
    expect(banners[1]).toContain('No training steps found');
    expect(root.querySelector('.gpuprof-w-stats')).toBeNull();
    expect(text(root, '.gpuprof-w-head .gpuprof-w-verdict')).toBe(
      'Verdict: unavailable (low confidence) — '
    );
  });

  it('writes a microsecond step in µs, never "0.00 ms" (as the text report does)', () => {
    expect(ms(0.0003)).toBe('0.3 µs');
    expect(ms(0.0045)).toBe('4.5 µs');
    expect(ms(1e-17)).toBe('0.00 ms'); // float noise is zero
    expect(ms(12.5)).toBe('12.50 ms');
    const sm = sampleSummary();
    sm.steps = { ...sm.steps, median_ms: 0.0003, p95_ms: 0.0003 };
    expect(text(renderReport(sm), '.gpuprof-w-stats')).toContain('median 0.3 µs, p95 0.3 µs');
  });

  it('draws an empty summary with every panel saying what is missing', () => {
    const root = renderReport(emptySummary());
    const empties = Array.from(root.querySelectorAll('.gpuprof-w-empty')).map(e => e.textContent);
    expect(empties).toEqual([
      'No step times were recorded.',
      'No timeline: the trace holds no events in the profiled window.',
      'No operators were recorded.',
      'No GPU kernels were recorded.',
      'No host↔device copies recorded.'
    ]);
    expect(text(root, '.gpuprof-w-panel-next')).toContain('No findings worth acting on.');
  });

  it('keeps trace names as text, never markup', () => {
    const sm = sampleSummary();
    sm.source = { ...sm.source, name: PAYLOAD };
    sm.verdict = {
      ...sm.verdict,
      category: PAYLOAD,
      label: PAYLOAD,
      summary: PAYLOAD,
      reasons: [PAYLOAD]
    };
    const root = renderReport(sm);
    expect(root.querySelector('img')).toBeNull();
    expect(root.querySelector('[onerror]')).toBeNull();
    expect(text(root, '.gpuprof-w-title')).toBe(`GPU profile — ${PAYLOAD}`);
  });
});

describe('steps panel', () => {
  it('states the baseline figures, the data pipeline share and the profiler cost', () => {
    const panel = renderReport(sampleSummary()).querySelector(
      '.gpuprof-w-panel-steps'
    ) as HTMLElement;
    const lines = Array.from(panel.querySelectorAll('p')).map(p => p.textContent);
    expect(lines).toEqual([
      // steps numbered 1..n as everywhere (the model's outlier_steps), not the 0-based index
      'Baseline median 10.00 ms, p95 12.50 ms, min 9.00 ms, max 13.00 ms; outliers: step 5.',
      'Data pipeline: 42% of the host timeline (5.0 ms per profiled step).',
      "Profiled steps: median 12.00 ms = 1.20× the baseline (the profiler's own cost)."
    ]);
    expect(panel.querySelector('.gpuprof-w-chart')).toBeNull();
  });

  it('draws the step chart itself, one panel per series on its own scale', () => {
    const root = renderReport(sampleSummary());
    const titles = Array.from(root.querySelectorAll('.gpuprof-w-series-title')).map(
      t => t.textContent
    );
    expect(titles).toEqual(['baseline (n=5)', 'profiled (n=3)']);
    expect(root.querySelectorAll('.gpuprof-w-series-baseline circle')).toHaveLength(5);
    expect(text(root, '.gpuprof-w-charttitle')).toContain('ms per step');
    // the median line is the summary's statistic, never one the chart computes again
    const base = sampleSummary();
    base.steps = { ...base.steps, baseline: { ...base.steps.baseline, median_ms: 11.11 } };
    expect(text(renderReport(base), '.gpuprof-w-series-baseline')).toContain('median 11.11 ms');
    // each panel's dots span its own height: the profiled steps do not squash the baseline
    const ys = (key: string) =>
      Array.from(root.querySelectorAll(`.gpuprof-w-series-${key} circle`)).map(c =>
        Number(c.getAttribute('cy'))
      );
    const spread = (v: number[]) => Math.max(...v) - Math.min(...v);
    const slow = sampleSummary();
    slow.steps = { ...slow.steps, profiled_ms: [60, 61, 62] };
    const slowRoot = renderReport(slow);
    const slowYs = Array.from(slowRoot.querySelectorAll('.gpuprof-w-series-baseline circle')).map(
      c => Number(c.getAttribute('cy'))
    );
    expect(spread(ys('baseline'))).toBeGreaterThan(100);
    expect(spread(slowYs)).toBeGreaterThan(100);
  });

  it('says when profiling cost nothing visible or made steps faster', () => {
    const sm = sampleSummary();
    sm.steps = { ...sm.steps, profiler_inflation: 1.0 };
    expect(text(renderReport(sm), '.gpuprof-w-panel-steps')).toContain(
      '(no visible profiler cost).'
    );
    sm.steps = { ...sm.steps, profiler_inflation: 0.9 };
    expect(text(renderReport(sm), '.gpuprof-w-panel-steps')).toContain(
      '(steps overlap less without per-step syncs).'
    );
  });
});

describe('transfers and next-steps panels', () => {
  it('tabulates copies and the sync callers', () => {
    const panel = renderReport(sampleSummary()).querySelector(
      '.gpuprof-w-panel-transfers'
    ) as HTMLElement;
    const rows = Array.from(panel.querySelectorAll('table')[0].querySelectorAll('tr')).map(r =>
      Array.from(r.children).map(c => c.textContent)
    );
    expect(rows).toEqual([
      [
        'direction',
        'memory',
        'copies/step',
        'MB (total)',
        'time (ms per real step)',
        'GB/s',
        'blocking'
      ],
      ['HtoD', 'pageable', '1', '4.00', '0.13 ms', '10.3', '3']
    ]);
    // the cost per real step Python settled (not the profiled idle after the calls, 0.50 ms)
    expect(text(panel, 'h4')).toBe(
      'Sync calls: 6 in 3 profiled steps (2 per step); GPU idle they cause (ms per real step): 0.75 ms'
    );
    expect(
      Array.from(panel.querySelectorAll('table')[1].querySelectorAll('td')).map(c => c.textContent)
    ).toEqual(['loss.item()', '1', '0.75 ms']); // calls per step beside ms per step
  });

  it('lists the verdict reasons and each finding with its fix', () => {
    const panel = renderReport(sampleSummary()).querySelector(
      '.gpuprof-w-panel-next'
    ) as HTMLElement;
    expect(
      Array.from(panel.querySelectorAll('.gpuprof-w-verdict li')).map(l => l.textContent)
    ).toEqual(['r1', 'r2']);
    const item = panel.querySelector('.gpuprof-w-findings li') as HTMLElement;
    expect(text(item, 'b')).toBe('[input] Use more DataLoader workers');
    // the model's one line: the cost, the step, the predicted step and the gain together
    expect(text(item, '.gpuprof-w-costline')).toBe(
      'costs 5.00 ms of the 10.00 ms step; predicted step 10.00 ms → 5.84 ms, gain ≈42%'
    );
    expect(text(item, '.gpuprof-w-evidence')).toBe('input 5 ms per step');
    expect(text(item, 'pre')).toBe('DataLoader(ds, num_workers=4)');
    // how to measure the fix first: the `--try` names the summary gives the finding
    expect(text(item, '.gpuprof-w-try')).toBe(
      'Measure it first: %%gpuprofile --try loader (a cell) or jupyter gpuprof run --try loader -- python train.py (a script)'
    );
  });

  it('offers no try where no --try fix applies a finding', () => {
    const sm = sampleSummary();
    sm.findings[0].try_fixes = [];
    const panel = renderReport(sm).querySelector('.gpuprof-w-panel-next') as HTMLElement;
    expect(panel.querySelector('.gpuprof-w-try')).toBeNull();
  });

  it('copies a fix through the textarea fallback outside a secure context', () => {
    jest.useFakeTimers();
    let copied = '';
    document.execCommand = jest.fn(() => {
      copied = document.querySelector('textarea')?.value ?? '';
      return true;
    });
    const root = renderReport(sampleSummary());
    document.body.append(root);
    const button = root.querySelector('.gpuprof-w-copy') as HTMLButtonElement;
    button.click();
    expect(document.execCommand).toHaveBeenCalledWith('copy');
    expect(copied).toBe('DataLoader(ds, num_workers=4)');
    expect(button.textContent).toBe('Copied');
    expect(document.querySelector('textarea')).toBeNull();
    jest.advanceTimersByTime(1600);
    expect(button.textContent).toBe('Copy');
    root.remove();
    jest.useRealTimers();
  });
});

describe('widget entry', () => {
  it('renders the summary and the charts from the model, and redraws on change', () => {
    let summary = sampleSummary();
    const listeners: Record<string, () => void> = {};
    const model: IWidgetModel = {
      get: () => summary,
      on: (event, cb) => {
        listeners[event] = cb;
      }
    };
    const el = document.createElement('div');
    render.render({ model, el });
    expect(el.querySelectorAll('.gpuprof-w')).toHaveLength(1);
    expect(el.querySelector('.gpuprof-w-panel-steps .gpuprof-w-stepchart')).not.toBeNull();
    summary = sampleSummary();
    summary.verdict = { ...summary.verdict, category: 'sync', label: 'sync' };
    listeners['change:summary']();
    expect(el.querySelectorAll('.gpuprof-w')).toHaveLength(1);
    expect(text(el, '.gpuprof-w-head .gpuprof-w-verdict')).toContain('Verdict: sync');
  });

  it('hides the static copy in the output above, once the output area holds the widget', () => {
    jest.useFakeTimers();
    const area = document.createElement('div');
    const child = (inner: string) => {
      const c = document.createElement('div');
      c.className = 'jp-OutputArea-child';
      c.innerHTML = inner;
      area.append(c);
      return c;
    };
    const text = child('<pre>gpuprofile: done</pre>');
    const copy = child("<div class='gpuprof-static'>static report</div>");
    const host = child('');
    const model: IWidgetModel = { get: () => sampleSummary(), on: () => undefined };
    const el = document.createElement('div');
    render.render({ model, el });
    expect(copy.style.display).toBe('');
    host.append(el); // the output area attaches the view after render
    jest.runOnlyPendingTimers();
    expect(copy.style.display).toBe('none');
    expect(text.style.display).toBe('');
    jest.useRealTimers();
  });

  it('leaves the output above alone when it is not a static report', () => {
    const area = document.createElement('div');
    area.innerHTML =
      "<div class='jp-OutputArea-child'><pre>print</pre></div><div class='jp-OutputArea-child'></div>";
    const el = document.createElement('div');
    area.lastElementChild!.append(el);
    render.render({ model: { get: () => sampleSummary(), on: () => undefined }, el });
    expect((area.firstElementChild as HTMLElement).style.display).toBe('');
  });
});

describe('one sync cost', () => {
  /** The sample run with a sync finding whose cost is the summary's sync cost. */
  function syncRun(): IReportSummary {
    const sm = sampleSummary();
    sm.gpu = {
      ...sm.gpu,
      idle_by_cause_ms: { input: 5, transfer: 0, sync: 2.536, launch: 0, host: 0 }
    };
    sm.syncs = {
      count: 66,
      per_step: 13.2,
      cost_ms_per_step: 2.536,
      // after the calls the profiled GPU idles 0.42 ms: not what the finding prices
      top: [{ caller: 'aten::item', calls: 65, gpu_idle_after_us: 421.9, cost_ms_per_step: 2.536 }]
    };
    sm.findings = [
      {
        id: 'host-syncs',
        category: 'sync',
        title: 'Syncs',
        evidence: '',
        fix: 'x',
        expected_gain_pct: 25.4,
        cost_ms: 2.536,
        data: {}
      }
    ];
    return sm;
  }

  it.each([
    ['step', '2.54 ms'],
    ['total', '7.61 ms']
  ])('reads the same in the timeline, the sync table and next steps (%s basis)', (kind, shown) => {
    const root = renderReport(syncRun());
    (root.querySelector(`[data-basis="${kind}"]`) as HTMLButtonElement).click();
    const busy = text(root, '.gpuprof-w-panel-timeline .gpuprof-w-busy') ?? '';
    expect(busy).toContain(`sync ${shown}`);
    const syncs = root.querySelector('.gpuprof-w-panel-transfers') as HTMLElement;
    expect(text(syncs, '.gpuprof-w-syncs')).toContain(`: ${shown}`);
    expect(text(syncs, '.gpuprof-w-synctable td:last-child')).toBe(shown);
    expect(text(root, '.gpuprof-w-panel-next .gpuprof-w-findings li')).toContain(`costs ${shown},`);
  });
});

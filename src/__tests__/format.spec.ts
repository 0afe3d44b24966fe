import { IRunListing } from '../api';
import {
  formatCreated,
  formatDeltaMs,
  formatMs,
  formatPct,
  formatRun,
  formatStatus,
  parseTags
} from '../format';

const base: IRunListing = {
  id: '20261129-191322-mlp',
  name: 'mlp',
  created: '2026-11-29T19:13:22.512+00:00',
  status: 'complete',
  verdict: null,
  error: null
};

describe('formatCreated', () => {
  it('keeps the run’s own date and minute', () => {
    expect(formatCreated('2026-11-29T19:13:22.512+00:00')).toBe('2026-11-29 19:13');
    expect(formatCreated('2026-01-02 03:04:05')).toBe('2026-01-02 03:04');
  });

  it('passes odd values through and blanks missing ones', () => {
    expect(formatCreated('yesterday')).toBe('yesterday');
    expect(formatCreated(null)).toBe('');
  });
});

describe('formatRun', () => {
  it('formats a complete run with its verdict', () => {
    expect(formatRun({ ...base, verdict: 'GPU-bound' })).toEqual({
      id: base.id,
      title: 'mlp',
      when: '2026-11-29 19:13',
      status: 'complete',
      statusLabel: 'complete',
      verdict: 'GPU-bound',
      badge: '',
      gpu: '',
      steps: '',
      tags: [],
      warning: '',
      tooltip: base.id
    });
  });

  it("passes the server's warning through, and into the tooltip", () => {
    const row = formatRun({ ...base, warning: 'meta.json: tries[0] ignored' });
    expect(row.warning).toBe('meta.json: tries[0] ignored');
    expect(row.tooltip).toBe(`${base.id}\nwarning: meta.json: tries[0] ignored`);
    expect(formatRun({ ...base, warning: null }).warning).toBe('');
  });

  it('names a broken run by its folder and shows the error in the tooltip', () => {
    const row = formatRun({
      ...base,
      name: '',
      created: null,
      status: 'broken',
      error: 'meta.json: Expecting value'
    });
    expect(row.title).toBe(base.id);
    expect(row.when).toBe('');
    expect(row.verdict).toBe('');
    expect(row.tooltip).toBe(`${base.id}\nerror: meta.json: Expecting value`);
  });
});

describe('formatStatus', () => {
  it('counts runs in words', () => {
    expect(formatStatus('0.1.0', '/srv/runs', 1)).toBe(
      'Server extension 0.1.0 · 1 run in /srv/runs'
    );
    expect(formatStatus('0.1.0', '/srv/runs', 3)).toBe(
      'Server extension 0.1.0 · 3 runs in /srv/runs'
    );
  });
});

describe('run rows of the run browser', () => {
  it('shows GPU, median/p95, badge and tags; a running run reads "in progress"', () => {
    const row = formatRun({
      ...base,
      status: 'running',
      gpu: 'NVIDIA H200',
      median_ms: 46.519,
      p95_ms: 47.37,
      verdict: 'fp32 matmuls',
      verdict_category: 'precision',
      tags: ['baseline']
    });
    expect(row.statusLabel).toBe('in progress');
    expect(row.steps).toBe('median 46.52 ms · p95 47.37 ms');
    expect(row.badge).toBe('precision');
    expect(row.gpu).toBe('NVIDIA H200');
    expect(row.tags).toEqual(['baseline']);
  });

  it('formats numbers and signed changes', () => {
    expect(formatMs(null)).toBe('–');
    expect(formatPct(-60.534)).toBe('−60.5%');
    expect(formatPct(3.14)).toBe('+3.1%');
    expect(formatDeltaMs(-28.16)).toBe('−28.16 ms');
    expect(formatDeltaMs(undefined)).toBe('–');
  });

  it('parses comma-separated tags', () => {
    expect(parseTags(' a, b ,, c ')).toEqual(['a', 'b', 'c']);
    expect(parseTags('')).toEqual([]);
  });
});

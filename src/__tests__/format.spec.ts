import { IRunListing } from '../api';
import { formatCreated, formatRun, formatStatus } from '../format';

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
      verdict: 'GPU-bound',
      tooltip: base.id
    });
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
    expect(formatStatus('0.1.0', '/srv/runs', 1)).toBe('Server extension 0.1.0 · 1 run in /srv/runs');
    expect(formatStatus('0.1.0', '/srv/runs', 3)).toBe('Server extension 0.1.0 · 3 runs in /srv/runs');
  });
});

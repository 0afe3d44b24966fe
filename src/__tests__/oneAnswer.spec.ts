/// <reference types="node" />
/**
 * The front end shows the numbers Python decided, never its own: the p95 of the steps 1…30
 * and the straggler of two two-rank runs, as `tests/report/test_one_answer.py` checks them in
 * `tests/data/expected/one_answer.json` (the magic line, the summary, the run list's row).
 */
import * as fs from 'fs';
import * as path from 'path';

import { IRankRow, IRunListing } from '../api';
import { rankChart, straggler } from '../charts';
import { formatMs, formatRun } from '../format';
import { banner } from '../report/header';
import { renderReport } from '../report/report';
import { IGpu, ISteps, IVerdict } from '../report/summary';
import { sampleSummary, summaryWith } from './reportFixture';

interface IOneAnswer {
  p95_ms: number;
  magic_line: string;
  listing_before: IRunListing;
  listing_after: IRunListing;
  summary_steps: ISteps;
  stragglers: Record<string, { verdict: string; ranks: IRankRow[] }>;
  /** The banner Python writes for a trace without GPU activity, and the blocks it reads it from. */
  no_gpu_banners: Record<string, { banner: string; gpu: IGpu; verdict: IVerdict }>;
}

const FIXTURE = path.join(__dirname, '..', '..', 'tests', 'data', 'expected', 'one_answer.json');
const answer = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as IOneAnswer;

describe('one p95 on every surface', () => {
  it('is the one number Python printed, listed and summarised', () => {
    expect(answer.p95_ms).toBeCloseTo(28.55, 9);
    expect(answer.magic_line).toContain('p95 28.550 ms');
    expect(answer.listing_before.p95_ms).toBeCloseTo(answer.p95_ms, 9);
    expect(answer.listing_after.p95_ms).toBeCloseTo(answer.p95_ms, 9);
    expect(answer.summary_steps.p95_ms).toBeCloseTo(answer.p95_ms, 9);
  });

  it('is what the run list row and the report header show', () => {
    const shown = `p95 ${formatMs(answer.p95_ms)}`;
    expect(formatRun(answer.listing_before).steps).toContain(shown);
    expect(formatRun(answer.listing_after).steps).toContain(shown);
    const root = renderReport({ ...sampleSummary(), steps: answer.summary_steps });
    const stats = root.querySelector('.gpuprof-w-stats')?.textContent ?? '';
    expect(stats).toContain('p95 28.55 ms');
  });
});

describe('one straggler decision', () => {
  it('names no rank where the advice names none, though one rank is a little late', () => {
    const run = answer.stragglers['ddp_workload_comm'];
    expect(run.verdict).not.toBe('straggler');
    expect(run.ranks.some(r => (r.extra_ms ?? 0) > 0)).toBe(true);
    expect(straggler(run.ranks)).toBeNull();
    expect(rankChart(run.ranks).textContent).not.toContain('⚠');
  });

  it('names the rank the advice names', () => {
    const run = answer.stragglers['ddp2_heavy1'];
    expect(run.verdict).toBe('straggler');
    expect(straggler(run.ranks)).toBe(1);
    expect(rankChart(run.ranks).textContent).toContain('rank 1 ⚠');
    expect(rankChart(run.ranks).textContent).not.toContain('rank 0 ⚠');
  });
});

describe('one banner for a trace without GPU activity', () => {
  it('says what an MTIA or range-profiler trace holds, as Python does, and CPU-only only for CPU-only', () => {
    const cases = answer.no_gpu_banners;
    expect(Object.keys(cases).sort()).toEqual(['cpu_only', 'mtia', 'range_profiler']);
    for (const [name, c] of Object.entries(cases)) {
      const sm = summaryWith({ gpu: c.gpu, verdict: c.verdict });
      expect(banner(sm)).toBe(c.banner);
      expect(banner(sm)?.includes('CPU-only')).toBe(name === 'cpu_only');
      const shown = renderReport(sm).querySelector('.gpuprof-w-banner')?.textContent;
      expect(shown).toBe(c.banner);
    }
  });
});

/// <reference types="node" />
/**
 * The widget says what the text report says, on every committed real trace: the verdict's
 * label, the median and p95, the findings and their gains, GPU busy, peak memory and the order
 * of the operator table. `tests/views/test_parity.py` writes each fixture's summary and the facts the
 * Python text report states into tests/data/expected/parity.json; here the widget's own code
 * renders the summary and the same facts are read from the DOM. A panel that decides a label,
 * an order or a unit of its own fails here.
 */
import * as fs from 'fs';
import * as path from 'path';

import { renderReport } from '../report/report';
import { IReportSummary } from '../report/summary';

interface IFacts {
  verdict_label: string;
  median: string;
  p95: string;
  findings: [string, string][];
  whatif: string[];
  measured: string[];
  tries: string[];
  stack?: string[];
  stack_code?: string[];
  one_time: string[];
  step: string | null;
  stalls: string | null;
  busy: string | null;
  peak: string | null;
  ops?: string[];
}

const CASES = JSON.parse(
  fs.readFileSync(
    path.join(__dirname, '..', '..', 'tests', 'data', 'expected', 'parity.json'),
    'utf8'
  )
) as { name: string; summary: IReportSummary; facts: IFacts }[];

const textOf = (root: Element, selector: string) => root.querySelector(selector)?.textContent ?? '';

describe('the widget reads as the text report', () => {
  it('covers every committed fixture', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(16);
  });

  it.each(CASES.map(c => [c.name, c] as const))('%s', (_name, c) => {
    const root = renderReport(c.summary);
    const f = c.facts;
    expect(textOf(root, '.gpuprof-w-head .gpuprof-w-verdict b')).toBe(
      `Verdict: ${f.verdict_label}`
    );
    const stats = textOf(root, '.gpuprof-w-stats');
    expect(stats).toContain(`median ${f.median},`);
    expect(stats).toContain(`p95 ${f.p95},`);
    expect(root.querySelector('.gpuprof-w-stepdef')?.textContent ?? null).toBe(f.step);
    expect(root.querySelector('.gpuprof-w-spikes')?.textContent ?? null).toBe(f.stalls);
    if (f.busy) {
      expect(stats).toContain(f.busy);
    }
    if (f.peak) {
      expect(stats).toContain(f.peak);
    }
    const findings = Array.from(
      root.querySelectorAll('.gpuprof-w-panel-next .gpuprof-w-findings > li')
    );
    expect(findings.map(li => li.querySelector('b')?.textContent)).toEqual(
      f.findings.map(x => x[0])
    );
    // the cost and the gain in the model's one line, the predicted step that reconciles them kept
    expect(findings.map(li => li.querySelector('.gpuprof-w-costline')?.textContent)).toEqual(
      f.findings.map(x => x[1])
    );
    const texts = (selector: string) =>
      Array.from(root.querySelectorAll(selector)).map(e => e.textContent ?? '');
    expect(texts('.gpuprof-w-panel-next .gpuprof-w-whatif')).toEqual(f.whatif);
    expect(texts('.gpuprof-w-panel-next .gpuprof-w-measured')).toEqual(f.measured);
    expect(texts('.gpuprof-w-panel-next .gpuprof-w-onetime')).toEqual(f.one_time);
    const tried = textOf(root, '.gpuprof-w-panel-next .gpuprof-w-tries');
    expect(tried ? tried.split('\n') : []).toEqual(f.tries);
    const stacked = textOf(root, '.gpuprof-w-panel-next .gpuprof-w-stack-lines');
    expect(stacked ? stacked.split('\n') : []).toEqual(f.stack ?? []);
    const code = textOf(root, '.gpuprof-w-panel-next .gpuprof-w-stack-code pre');
    expect(code ? code.split('\n') : []).toEqual(f.stack_code ?? []);
    const ops = Array.from(root.querySelectorAll('.gpuprof-w-panel-ops tbody tr')).map(
      tr => tr.querySelector('td')?.textContent ?? ''
    );
    (f.ops ?? []).forEach((name, i) => expect(ops[i]?.startsWith(name)).toBe(true));
  });
});

/**
 * The main-area comparison of two runs: overlaid step-time distributions, the median change
 * with its confidence interval and a real-vs-noise verdict, op and kernel-kind deltas, and
 * verdicts and findings before vs after.
 */
import { Widget } from '@lumino/widgets';

import { GpuProfApi, ICompareSide, IComparison, IDeltaRow } from './api';
import { distributionWithData } from './charts';
import { h, table } from './elements';
import { formatDeltaMs, formatMs, formatPct } from './format';
import { pct, signedPct } from './report/dom';

/** The one-line statement of the step-time change, e.g. for the headline and tests. */
export function changeLine(c: IComparison): string {
  const s = c.steps;
  if (s.delta_ms === null) {
    return `Median ${formatMs(s.median_before_ms)} → ${formatMs(s.median_after_ms)}: ${s.verdict}`;
  }
  const ci = `${Math.round(s.confidence * 100)}% CI [${formatDeltaMs(s.ci_low_ms)}, ${formatDeltaMs(s.ci_high_ms)}]`;
  const p = s.p_value === null ? '' : `, p = ${s.p_value.toPrecision(2)}`;
  return (
    `Median ${formatMs(s.median_before_ms)} → ${formatMs(s.median_after_ms)}: ` +
    `${formatDeltaMs(s.delta_ms)} (${formatPct(s.delta_pct)}), ${ci}${p}`
  );
}

/** What the before run predicted for the findings the after run resolved, beside the gain
 * measured (report/comparison.py `prediction_line`), or null where nothing was predicted. */
export function predictionLine(c: IComparison): string | null {
  const p = c.prediction;
  const priced = (p?.resolved ?? []).filter(f => typeof f.expected_gain_pct === 'number');
  if (!p || !priced.length) {
    return null;
  }
  const said = priced
    .map(
      f =>
        `[${f.category}] ≈${pct(f.expected_gain_pct)}` +
        (typeof f.measured_gain_pct === 'number'
          ? ` (its try measured ${pct(f.measured_gain_pct)})`
          : '')
    )
    .join('; ');
  const gain = p.measured_gain_pct;
  if (gain === null) {
    return `Predicted by the before run: ${said}; measured here: ${p.verdict}`;
  }
  const ci =
    p.ci_low_gain_pct !== null && p.ci_high_gain_pct !== null
      ? ` 95% CI [${signedPct(p.ci_low_gain_pct)}, ${signedPct(p.ci_high_gain_pct)}]`
      : '';
  return `Predicted by the before run: ${said}; measured here: gain ${signedPct(gain)}${ci} (${p.verdict})`;
}

/** What the step change means, in one sentence: the comparison's own headline (real, noise,
 * not a fair comparison, too few steps, with the conditions' caveat), never re-derived here. */
export function changeNote(c: IComparison): string {
  return c.headline;
}

/** A side's name in the title: the comparison's label, which tells the two sides apart. */
function sideName(side: ICompareSide, fallback: string): string {
  return side.label || side.name || fallback;
}

function deltaTable(title: string, rows: IDeltaRow[]): HTMLElement {
  if (rows.length === 0) {
    return h('div', 'jp-gpuprof-deltas', undefined, h('h4', '', title), h('p', '', 'none'));
  }
  return h(
    'div',
    'jp-gpuprof-deltas',
    undefined,
    h('h4', '', title),
    table(title, ['name', 'before ms/step', 'after ms/step', 'change'], rows, r => [
      r.name,
      formatMs(r.before_ms),
      formatMs(r.after_ms),
      `${formatDeltaMs(r.delta_ms)} (${formatPct(r.delta_pct)})`
    ])
  );
}

function verdictCard(label: string, side: ICompareSide): HTMLElement {
  return h(
    'div',
    'jp-gpuprof-verdict-card',
    undefined,
    h('h4', '', `${label}: ${side.label || side.name || side.run_id || ''}`),
    h(
      'span',
      `jp-gpuprof-badge jp-gpuprof-badge-${side.verdict.category ?? 'none'}`,
      side.verdict.category ?? 'n/a'
    ),
    h('p', '', side.verdict.summary ?? ''),
    h('ul', '', undefined, ...side.findings.map(f => h('li', '', `[${f.category}] ${f.title}`)))
  );
}

/** Comparison of `before` and `after` (run ids) in the main area. */
export class CompareView extends Widget {
  constructor(api: GpuProfApi, before: string, after: string) {
    super();
    this._api = api;
    this._before = before;
    this._after = after;
    this.id = `jupyter-gpuprof-compare-${before}-${after}`;
    this.addClass('jp-gpuprof-compare');
    this.title.label = 'Compare runs';
    this.title.closable = true;
    this.node.append(h('p', '', 'Comparing… (runs not analysed yet are analysed first)'));
  }

  async load(): Promise<void> {
    try {
      this.render(await this._api.compare(this._before, this._after));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.node.replaceChildren(h('p', 'jp-mod-error', `Comparison failed: ${reason}`));
    }
  }

  render(c: IComparison): void {
    const s = c.steps;
    const before = sideName(c.before, this._before);
    const after = sideName(c.after, this._after);
    const names: [string, string] = [`before: ${before}`, `after: ${after}`];
    this.title.label = `${before} → ${after}`;
    const verdict = s.significant ? 'significant' : s.verdict;
    const f = c.findings;
    this.node.replaceChildren(
      h('h2', '', `${before} → ${after}`),
      h(
        'div',
        'jp-gpuprof-change',
        undefined,
        h('span', `jp-gpuprof-badge jp-gpuprof-verdict-${verdict.replace(/\s+/g, '-')}`, verdict),
        h('span', 'jp-gpuprof-change-line', changeLine(c))
      ),
      h('p', 'jp-gpuprof-change-note', changeNote(c)),
      distributionWithData(
        [c.before.step_ms, c.after.step_ms],
        [s.median_before_ms, s.median_after_ms],
        names
      ),
      h(
        'p',
        'jp-gpuprof-note',
        `Samples: ${c.before.step_source} steps, n = ${s.n_before} before, ${s.n_after} after.`
      ),
      h(
        'div',
        'jp-gpuprof-verdicts',
        undefined,
        verdictCard('Before', c.before),
        verdictCard('After', c.after)
      ),
      h(
        'p',
        'jp-gpuprof-findings-diff',
        `Findings resolved: ${f.resolved.join(', ') || 'none'} · new: ${f.new.join(', ') || 'none'} · remaining: ${f.remaining.join(', ') || 'none'}`
      ),
      h('p', 'jp-gpuprof-prediction', predictionLine(c) ?? ''),
      h(
        'div',
        'jp-gpuprof-delta-grid',
        undefined,
        deltaTable('Kernel kinds: improvements', c.kernel_kinds.improvements),
        deltaTable('Kernel kinds: regressions', c.kernel_kinds.regressions),
        deltaTable('Ops: improvements', c.ops.improvements),
        deltaTable('Ops: regressions', c.ops.regressions)
      )
    );
  }

  private _api: GpuProfApi;
  private _before: string;
  private _after: string;
}

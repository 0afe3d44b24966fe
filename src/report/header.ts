/** The report's head: title, warning banners, step-time statistics, GPU busy, MFU, peak memory, verdict. */
import { NO_GPU_BANNER, PARTIAL_BANNER } from '../generated/palette';
import { gb, h, ms, pct } from './dom';
import { IReportSummary, ISteps } from './summary';

/**
 * The one-line warning above a report (the wording is views/palette.py's, generated). Without
 * GPU activity, a trace that is not CPU-only (MTIA, the CUPTI range profiler) is named by the
 * first sentence of its verdict, as views/text.py `banner` does.
 */
export function banner(sm: IReportSummary): string | null {
  const src = sm.source;
  if (src.status === 'failed') {
    return PARTIAL_BANNER.replace('{error}', String(src.error));
  }
  if (!sm.gpu.available) {
    const said = sm.verdict.summary;
    if (said && !said.includes('CPU-only')) {
      return `GPU metrics unavailable: ${said.split('. ')[0]}.`;
    }
    return NO_GPU_BANNER;
  }
  return null;
}

/** "MFU 41.0% · Peak memory 9.43 GB of 150 GB (6%)", the parts the summary knows (as
 * views/text.py `header_facts` writes them: the peak is the model's `memory.peak_bytes`). */
export function capacityText(sm: IReportSummary): string {
  const parts: string[] = [];
  const mfu = sm.flops.mfu_pct;
  if (mfu !== null) {
    parts.push(`MFU ${pct(mfu, 1)}`);
  }
  const peak = sm.memory.peak_bytes;
  if (typeof peak === 'number' && peak > 0) {
    const total = sm.memory.gpu_total_bytes;
    const share =
      typeof total === 'number' && total > 0
        ? ` of ${(total / 1e9).toFixed(0)} GB (${pct((100 * peak) / total)})`
        : '';
    parts.push(`Peak memory ${gb(peak)}${share}`);
  }
  return parts.join(' · ');
}

/** The one wording of GPU busy: real step first, then under the profiler (as header_facts). */
export function busyText(sm: IReportSummary): string {
  const gpu = sm.gpu;
  return `GPU busy ${pct(gpu.busy_pct_real)} real / ${pct(gpu.busy_pct)} under profiler`;
}

/** What one step is (the summary's `steps.definition`), as a sentence (views/text.py). */
export function stepSentence(st: Pick<ISteps, 'definition'>): string | null {
  const what = st.definition;
  return what ? `${what[0].toUpperCase()}${what.slice(1)}.` : null;
}

/** The baseline's stalls and their long-run cost (the summary's `steps.spikes`), and what it
 * could not see, as one line (views/text.py `spikes_sentence`). */
export function spikesSentence(st: Pick<ISteps, 'spikes'>): string | null {
  const sp = st.spikes;
  const said = sp ? [sp.summary, sp.note].filter((x): x is string => !!x) : [];
  return said.length ? `Stalls: ${said.join('; ')}.` : null;
}

/** Title, banners, headline statistics and verdict. */
export function header(sm: IReportSummary): HTMLDivElement {
  const st = sm.steps;
  const v = sm.verdict;
  const src = sm.source;
  const label = st.source === 'baseline' ? 'unprofiled baseline' : 'profiled steps';
  const head = h(
    'div',
    { class: 'gpuprof-w-head' },
    h('div', { class: 'gpuprof-w-title' }, `GPU profile — ${src.name || src.path || ''}`)
  );
  const warning = banner(sm);
  if (warning) {
    head.append(h('div', { class: 'gpuprof-w-banner' }, warning));
  }
  if (!st.n) {
    head.append(
      h(
        'div',
        { class: 'gpuprof-w-banner' },
        'No training steps found: nothing was timed (did the cell run a step, or the loop call optimizer.step()?).'
      )
    );
  } else {
    const capacity = capacityText(sm);
    head.append(
      h(
        'div',
        { class: 'gpuprof-w-stats' },
        `Step time (${label}, n=${st.n}): median `,
        h('b', {}, ms(st.median_ms)),
        ', p95 ',
        h('b', {}, ms(st.p95_ms)),
        `, IQR ${ms(st.iqr_ms)}, ${st.outliers.length} outlier(s)`,
        sm.gpu.available ? ' · ' : '',
        sm.gpu.available ? h('span', { class: 'gpuprof-w-busy-head' }, busyText(sm)) : '',
        capacity ? ` · ${capacity}` : ''
      )
    );
    const what = stepSentence(st);
    if (what) {
      head.append(h('div', { class: 'gpuprof-w-stepdef' }, what));
    }
    const stalls = spikesSentence(st);
    if (stalls) {
      head.append(h('div', { class: 'gpuprof-w-spikes' }, stalls));
    }
  }
  head.append(
    h(
      'div',
      { class: 'gpuprof-w-verdict' },
      h('b', {}, `Verdict: ${v.label}`),
      ` (${v.confidence} confidence) — ${v.summary}`
    )
  );
  return head;
}

/** The report's head: title, warning banners, step-time statistics and the verdict line. */
import { NO_GPU_BANNER, PARTIAL_BANNER } from '../generated/palette';
import { h, ms, num } from './dom';
import { IReportSummary } from './summary';

/** The one-line warning above a report (the wording is views/palette.py's, generated). */
export function banner(sm: IReportSummary): string | null {
  const src = sm.source ?? {};
  if (src.status === 'failed') {
    return PARTIAL_BANNER.replace('{error}', String(src.error));
  }
  if (!sm.gpu?.available) {
    return NO_GPU_BANNER;
  }
  return null;
}

/** Title, banners, headline statistics and verdict. */
export function header(sm: IReportSummary): HTMLDivElement {
  const st = sm.steps ?? {};
  const v = sm.verdict ?? {};
  const src = sm.source ?? {};
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
    head.append(
      h(
        'div',
        { class: 'gpuprof-w-stats' },
        `Step time (${label}, n=${st.n}): median `,
        h('b', {}, ms(st.median_ms)),
        ', p95 ',
        h('b', {}, ms(st.p95_ms)),
        `, IQR ${ms(st.iqr_ms)}, ${(st.outliers ?? []).length} outlier(s)`,
        sm.gpu?.available ? ` · GPU busy ${num(sm.gpu.busy_pct_real, 0)}% of the real step` : ''
      )
    );
  }
  head.append(
    h(
      'div',
      { class: 'gpuprof-w-verdict' },
      h('b', {}, `Verdict: ${v.category || 'unavailable'}`),
      ` (${v.confidence || '?'} confidence) — ${v.summary || ''}`
    )
  );
  return head;
}

/**
 * The data alternative of each chart: its numbers as a captioned table inside a collapsed
 * `<details>`, so a screen reader (or anyone) can read what the SVG only draws. Values are the
 * summary's, formatted as the chart formats them; nothing is recomputed here.
 */
import { h, ms, us } from './dom';
import { stepSeries } from './stepchart';
import { ISteps, ITimeline } from './summary';

let ids = 0;

/** A unique id for `aria-describedby` and `aria-controls` links inside one page. */
export function uniqueId(prefix: string): string {
  ids += 1;
  return `${prefix}-${ids}`;
}

/** A collapsed "`label`" section holding one table with `caption`, `head` and `rows`. */
export function dataTable(
  label: string,
  caption: string,
  head: string[],
  rows: string[][]
): HTMLDetailsElement {
  const table = h(
    'table',
    { class: 'gpuprof-w-table gpuprof-w-datatable' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...head.map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map(r => h('tr', {}, ...r.map(c => h('td', {}, c)))))
  );
  return h('details', { class: 'gpuprof-w-chartdata' }, h('summary', {}, label), table);
}

/** The step chart's numbers: every plotted step of each series, numbered as its tooltip is. */
export function stepData(st: ISteps): HTMLDetailsElement | null {
  const rows: string[][] = [];
  for (const x of stepSeries(st)) {
    x.values.forEach((v, i) => rows.push([x.title, String(i + 1), ms(v)]));
  }
  return rows.length
    ? dataTable(
        'Step times as a table',
        'Step time of each plotted step, ms (wall clock)',
        ['series', 'step', 'time'],
        rows
      )
    : null;
}

/** The timeline's numbers: each lane and how many events it holds, then the longest idle gaps. */
export function timelineData(tl: ITimeline): HTMLDetailsElement {
  const lanes = dataTable(
    'Timeline lanes and idle gaps as tables',
    'Timeline lanes (top to bottom)',
    ['lane', 'kind', 'events'],
    tl.lanes.map(l => [l.label, l.kind, l.n_events.toLocaleString('en-US')])
  );
  const gaps = tl.gaps.start.map((start, i) => [
    us(start),
    us(tl.gaps.dur[i]),
    tl.gaps.cause[i] ?? ''
  ]);
  if (gaps.length) {
    const table = dataTable(
      '',
      `Longest GPU-idle gaps (${gaps.length} of ${tl.n_gaps}), from the window start`,
      ['starts at', 'lasts', 'cause'],
      gaps
    ).querySelector('table');
    if (table) {
      lanes.append(table);
    }
  }
  return lanes;
}

/**
 * `chart` followed by its data alternative, its `role=img` element pointing to the table through
 * `aria-details` (nothing when there is no chart).
 */
export function linkData(
  chart: HTMLElement | null,
  data: HTMLDetailsElement | null
): DocumentFragment {
  const both = document.createDocumentFragment();
  if (!chart) {
    return both;
  }
  both.append(chart);
  if (data) {
    data.id = uniqueId('gpuprof-chartdata');
    const img = chart.matches('[role="img"]') ? chart : chart.querySelector('[role="img"]');
    img?.setAttribute('aria-details', data.id);
    both.append(data);
  }
  return both;
}

/**
 * The data alternative of each chart: its numbers as captioned tables, so a screen reader can
 * read what the SVG only draws: the step chart's in a collapsed `<details>` anyone can open, the
 * timeline's read by screen readers only. Values are the summary's, formatted as the chart
 * formats them; nothing is recomputed here.
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

/** A table with `caption`, a header row `head` and `rows`. */
export function captionedTable(
  caption: string,
  head: string[],
  rows: string[][]
): HTMLTableElement {
  return h(
    'table',
    { class: 'gpuprof-w-table gpuprof-w-datatable' },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...head.map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map(r => h('tr', {}, ...r.map(c => h('td', {}, c)))))
  );
}

/** A collapsed "`label`" section holding one table with `caption`, `head` and `rows`. */
export function dataTable(
  label: string,
  caption: string,
  head: string[],
  rows: string[][]
): HTMLDetailsElement {
  return h(
    'details',
    { class: 'gpuprof-w-chartdata' },
    h('summary', {}, label),
    captionedTable(caption, head, rows)
  );
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

/**
 * The timeline's numbers for screen readers (not drawn: the lanes are labelled on screen and
 * the idle causes are the line above): each lane and how many events it holds, then the longest
 * idle gaps.
 */
export function timelineData(tl: ITimeline): HTMLDivElement {
  const box = h(
    'div',
    { class: 'gpuprof-w-sr' },
    captionedTable(
      'Timeline lanes (top to bottom)',
      ['lane', 'kind', 'events'],
      tl.lanes.map(l => [l.label, l.kind, l.n_events.toLocaleString('en-US')])
    )
  );
  const gaps = tl.gaps.start.map((start, i) => [
    us(start),
    us(tl.gaps.dur[i]),
    tl.gaps.cause[i] ?? ''
  ]);
  if (gaps.length) {
    box.append(
      captionedTable(
        `Longest GPU-idle gaps (${gaps.length} of ${tl.n_gaps}), from the window start`,
        ['starts at', 'lasts', 'cause'],
        gaps
      )
    );
  }
  return box;
}

/**
 * `chart` followed by its data alternative, its `role=img` element pointing to the table through
 * `aria-details` (nothing when there is no chart).
 */
export function linkData(chart: Element | null, data: HTMLElement | null): DocumentFragment {
  const both = document.createDocumentFragment();
  if (!chart) {
    return both;
  }
  both.append(chart);
  if (data) {
    data.id = uniqueId('gpuprof-chartdata');
    // the chart itself (role img or, with focusable points inside, group), never a point
    const img = chart.matches('[data-chart]') ? chart : chart.querySelector('[data-chart]');
    img?.setAttribute('aria-details', data.id);
    both.append(data);
  }
  return both;
}

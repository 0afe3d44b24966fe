/**
 * Small SVG charts of the run browser: overlaid step-time histograms (compare view) and
 * per-rank stacked bars (ranks panel). Plain SVG: no plotting library in the bundle. Each
 * chart has a captioned table of its numbers beside it, which its `aria-details` names.
 */
import { IRankRow } from './api';
import { h, svg, table } from './elements';
import { formatMs } from './format';
import { linkData } from './report/chartData';

/** Shared bins over both samples, so the two histograms overlay on one axis. */
export function histogram(
  samples: number[][],
  bins = 24
): { lo: number; hi: number; counts: number[][] } {
  const all = ([] as number[]).concat(...samples).filter(Number.isFinite);
  if (all.length === 0) {
    return { lo: 0, hi: 1, counts: samples.map(() => new Array(bins).fill(0)) };
  }
  let lo = Math.min(...all);
  let hi = Math.max(...all);
  if (hi - lo < 1e-9) {
    lo -= 0.5;
    hi += 0.5;
  }
  const width = (hi - lo) / bins;
  const counts = samples.map(sample => {
    const row = new Array<number>(bins).fill(0);
    for (const v of sample) {
      if (Number.isFinite(v)) {
        row[Math.min(bins - 1, Math.floor((v - lo) / width))] += 1;
      }
    }
    return row;
  });
  return { lo, hi, counts };
}

/** Bins of the compare view's step-time histogram (its table lists the same bins). */
export const DIST_BINS = 48;

/** Step-time distributions of before (index 0) and after (index 1), overlaid, medians marked. */
export function distributionChart(
  samples: [number[], number[]],
  medians: [number | null, number | null],
  labels: [string, string]
): SVGSVGElement {
  const W = 560;
  const H = 180;
  const pad = { l: 36, r: 12, t: 24, b: 30 };
  const { lo, hi, counts } = histogram(samples, DIST_BINS);
  const bins = counts[0].length;
  const peak = Math.max(1, ...([] as number[]).concat(...counts));
  const x = (v: number) => pad.l + ((v - lo) / (hi - lo)) * (W - pad.l - pad.r);
  const y = (c: number) => H - pad.b - (c / peak) * (H - pad.t - pad.b);
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    class: 'jp-gpuprof-dist',
    role: 'img',
    'data-chart': 'distribution',
    'aria-label': 'Step-time distributions, before and after'
  });
  const bw = (W - pad.l - pad.r) / bins;
  counts.forEach((row, side) => {
    row.forEach((c, i) => {
      if (c > 0) {
        root.append(
          svg('rect', {
            class: `jp-gpuprof-dist-bar jp-gpuprof-side-${side}`,
            x: (pad.l + i * bw).toFixed(1),
            y: y(c).toFixed(1),
            width: Math.max(bw - 1, 1).toFixed(1),
            height: (H - pad.b - y(c)).toFixed(1)
          })
        );
      }
    });
  });
  medians.forEach((m, side) => {
    if (m !== null && Number.isFinite(m)) {
      root.append(
        svg('line', {
          class: `jp-gpuprof-dist-median jp-gpuprof-side-${side}`,
          x1: x(m).toFixed(1),
          x2: x(m).toFixed(1),
          y1: pad.t - 6,
          y2: H - pad.b
        })
      );
    }
  });
  root.append(
    svg('line', {
      class: 'jp-gpuprof-axis',
      x1: pad.l,
      x2: W - pad.r,
      y1: H - pad.b,
      y2: H - pad.b
    }),
    svg('text', { x: pad.l, y: H - 8, class: 'jp-gpuprof-axis-label' }, `${lo.toFixed(1)} ms`),
    svg(
      'text',
      { x: W - pad.r, y: H - 8, 'text-anchor': 'end', class: 'jp-gpuprof-axis-label' },
      `${hi.toFixed(1)} ms`
    )
  );
  labels.forEach((label, side) => {
    const lx = pad.l + side * 240;
    root.append(
      svg('rect', {
        x: lx,
        y: 6,
        width: 10,
        height: 10,
        class: `jp-gpuprof-dist-bar jp-gpuprof-side-${side}`
      }),
      svg('text', { x: lx + 14, y: 15, class: 'jp-gpuprof-axis-label' }, label)
    );
  });
  return root;
}

/**
 * The distribution chart's numbers: how many steps of each side fall in each of its bins (the
 * chart's own bins; empty ones left out), the medians in the caption, in a collapsed section.
 */
export function distributionData(
  samples: [number[], number[]],
  medians: [number | null, number | null],
  labels: [string, string]
): HTMLDetailsElement {
  const { lo, hi, counts } = histogram(samples, DIST_BINS);
  const width = (hi - lo) / DIST_BINS;
  const bins = counts[0]
    .map((_, i) => i)
    .filter(i => counts[0][i] > 0 || counts[1][i] > 0)
    .map(i => ({
      range: `${formatMs(lo + i * width)} – ${formatMs(lo + (i + 1) * width)}`,
      before: counts[0][i],
      after: counts[1][i]
    }));
  const caption =
    `Steps per step-time bin, ${labels[0]} (median ${formatMs(medians[0])}) and ` +
    `${labels[1]} (median ${formatMs(medians[1])})`;
  return h(
    'details',
    'jp-gpuprof-chartdata',
    undefined,
    h('summary', '', 'Step-time distributions as a table'),
    table(caption, ['step time', labels[0], labels[1]], bins, b => [
      b.range,
      String(b.before),
      String(b.after)
    ])
  );
}

/** The distribution chart followed by its table, the chart naming the table (`aria-details`). */
export function distributionWithData(
  samples: [number[], number[]],
  medians: [number | null, number | null],
  labels: [string, string]
): DocumentFragment {
  return linkData(
    distributionChart(samples, medians, labels),
    distributionData(samples, medians, labels)
  );
}

/**
 * The straggler the advice named (the `straggler` flag of its row in
 * `summary.distributed.ranks`), else null. Shown, never re-decided here: the thresholds live
 * in the Python advice, so the sidebar and the verdict cannot disagree.
 */
export function straggler(ranks: readonly IRankRow[]): number | null {
  return ranks.find(r => r.straggler)?.rank ?? null;
}

/** One bar per rank: compute and communication time per step, straggler highlighted. */
export function rankChart(ranks: readonly IRankRow[]): SVGSVGElement {
  const W = 520;
  const rowH = 22;
  const pad = { l: 60, r: 80, t: 8 };
  const H = pad.t * 2 + rowH * ranks.length;
  const peak = Math.max(1e-9, ...ranks.map(r => r.compute_ms + r.comm_ms));
  const scale = (v: number) => (v / peak) * (W - pad.l - pad.r);
  const slow = straggler(ranks);
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: W,
    height: H,
    class: 'jp-gpuprof-rankchart',
    role: 'img',
    'data-chart': 'ranks',
    'aria-label': 'Compute and communication per rank'
  });
  ranks.forEach((r, i) => {
    const top = pad.t + i * rowH;
    const compute = scale(r.compute_ms);
    const comm = scale(r.comm_ms);
    const label = `rank ${r.rank}${r.rank === slow ? ' ⚠' : ''}`;
    root.append(
      svg('text', { x: 4, y: top + 15, class: 'jp-gpuprof-axis-label' }, label),
      svg('rect', {
        x: pad.l,
        y: top + 3,
        width: compute.toFixed(1),
        height: rowH - 6,
        class: 'jp-gpuprof-bar-compute'
      }),
      svg('rect', {
        x: (pad.l + compute).toFixed(1),
        y: top + 3,
        width: comm.toFixed(1),
        height: rowH - 6,
        class: 'jp-gpuprof-bar-comm'
      }),
      svg(
        'text',
        { x: (pad.l + compute + comm + 4).toFixed(1), y: top + 15, class: 'jp-gpuprof-axis-label' },
        formatMs(r.step_ms)
      )
    );
  });
  return root;
}

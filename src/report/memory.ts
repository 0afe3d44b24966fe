/**
 * "Memory over the step": the lane, the kinds at the peak, the lines and modules holding it, the
 * priced fixes and, after an out-of-memory error, its post-mortem. Every figure and every
 * choice (which fixes, their order, the `--try` offer) is the model's (`summary.memory`).
 */
import { Child, gb, h, ms } from './dom';
import { IOverStep, memoryLaneBlock } from './memoryLane';
import { IReportSummary } from './summary';

type IMemoryFix = IOverStep['fixes'][number];
type IOom = NonNullable<IReportSummary['memory']['oom']>;

/** How many lines / modules / blocks the section lists. */
export const TOP_HOLDERS = 3;

/** A plain table: `head` cells, then one row of cells per entry (all text). */
function table(caption: string, head: string[], rows: string[][], cls: string): HTMLTableElement {
  return h(
    'table',
    { class: `gpuprof-w-table ${cls}` },
    h('caption', { class: 'gpuprof-w-sr' }, caption),
    h('thead', {}, h('tr', {}, ...head.map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, ...rows.map(r => h('tr', {}, ...r.map(c => h('td', {}, c)))))
  );
}

/** A fix's time per step and how it was priced, or why it is not priced (`fix_cost`). */
export function fixCost(f: IMemoryFix): string {
  if (f.time_ms === null) {
    return f.time_note;
  }
  return `+${ms(f.time_ms)}${f.time_note ? ` (${f.time_note})` : ''}`;
}

/** The fixes with the memory each frees, their time per step (or why unpriced), their `--try`. */
export function fixesTable(fixes: readonly IMemoryFix[], caption: string): HTMLTableElement {
  return table(
    caption,
    ['fix', 'frees', 'time per step', 'measure it'],
    fixes.map(f => [f.title, gb(f.saves_bytes), fixCost(f), f.try_fix ? `--try ${f.try_fix}` : '']),
    'gpuprof-w-memfixes'
  );
}

/** The peak explained: kinds, lines, modules, headroom, fixes (`over_step`). */
export function overStepSection(m: IOverStep): HTMLElement {
  const phase = m.peak_phase ? ` in ${m.peak_phase}` : '';
  const parts: Child[] = [
    h('h4', {}, 'Memory over the step'),
    memoryLaneBlock(m),
    h(
      'p',
      { class: 'gpuprof-w-mempeak-text' },
      `Peak ${gb(m.peak_bytes)}${phase}, reserved ${gb(m.reserved_bytes)}.`
    ),
    table(
      'Memory at the peak by kind',
      ['at the peak', 'GB', 'its own high'],
      m.kinds
        .filter(k => k.bytes_at_peak > 0 || k.high_bytes > 0)
        .map(k => [k.label, gb(k.bytes_at_peak), gb(k.high_bytes)]),
      'gpuprof-w-memkinds'
    )
  ];
  const holders: [string, IOverStep['lines']][] = [
    ['line', m.lines],
    ['module call', m.modules]
  ];
  for (const [what, rows] of holders) {
    if (rows.length) {
      parts.push(
        table(
          `The ${what}s holding most at the peak`,
          [what, 'held at the peak', 'blocks'],
          rows.slice(0, TOP_HOLDERS).map(r => [r.where, gb(r.bytes), String(r.blocks)]),
          'gpuprof-w-memholders'
        )
      );
    }
  }
  if (m.headroom_x !== null) {
    parts.push(
      h(
        'p',
        {},
        `Headroom: the batch could grow ×${m.headroom_x.toFixed(1)} before the peak reaches ` +
          "the GPU's memory."
      )
    );
  }
  if (m.fixes.length) {
    parts.push(fixesTable(m.fixes, 'Memory fixes, priced'));
  }
  return h('section', { class: 'gpuprof-w-memory' }, ...parts);
}

/** What was allocated when an allocation failed, its largest blocks and the fixes (`oom`). */
export function oomSection(o: IOom): HTMLElement {
  const limit = o.limit_bytes !== null ? ` of ${gb(o.limit_bytes)} allowed` : '';
  return h(
    'section',
    { class: 'gpuprof-w-oom', role: 'alert' },
    h('h4', {}, 'Out of memory'),
    h(
      'p',
      {},
      `${gb(o.requested_bytes)} requested with ${gb(o.allocated_bytes)} allocated${limit} ` +
        `(reserved ${gb(o.reserved_bytes)}, largest free block ${gb(o.largest_free_bytes)}).`
    ),
    table(
      'The largest blocks live at the error',
      ['block', 'line', 'module'],
      o.top.map(a => [gb(a.bytes), a.line, a.module]),
      'gpuprof-w-oomtop'
    ),
    o.fixes.length ? fixesTable(o.fixes, 'What would have let it fit') : null
  );
}

/** The memory sections of `sm`: the post-mortem first, then the peak; null without either. */
export function memorySections(sm: IReportSummary): HTMLDivElement | null {
  const { over_step: over, oom } = sm.memory;
  if (!over && !oom) {
    return null;
  }
  return h(
    'div',
    { class: 'gpuprof-w-memsections' },
    oom ? oomSection(oom) : null,
    over ? overStepSection(over) : null
  );
}

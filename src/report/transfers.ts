/** The "Transfers & syncs" panel: host↔device copies and the sync calls that stall the GPU. */
import { IBasis } from './basis';
import { count, empty, h, num } from './dom';
import { IReportSummary } from './summary';

/** A plain table: its caption (for screen readers), one header row, then a row per item. */
function table(
  caption: string,
  head: HTMLTableRowElement,
  rows: HTMLTableRowElement[],
  className = ''
): HTMLTableElement {
  return h(
    'table',
    { class: `gpuprof-w-table ${className}`.trim() },
    h('caption', { class: 'gpuprof-w-sr' }, caption),
    head,
    ...rows
  );
}

/** Copies by direction and memory kind, then the sync count and its worst callers. */
export function transfersPanel(sm: IReportSummary, basis: IBasis): HTMLDivElement {
  const box = h('div');
  const copies = sm.transfers;
  if (copies.length) {
    const head = h(
      'tr',
      {},
      ...[
        'direction',
        'memory',
        basis.kind === 'step' ? 'copies/step' : `copies (total of ${basis.steps} steps)`,
        'MB (total)',
        `time (${basis.title})`,
        'GB/s',
        'blocking'
      ].map(c => h('th', {}, c))
    );
    const rows = copies.map(r =>
      h(
        'tr',
        {},
        h('td', {}, r.kind),
        h('td', {}, r.pageable ? 'pageable' : 'pinned'),
        h('td', {}, count(basis.kind === 'step' ? r.count_per_step : r.count)),
        h('td', {}, num(r.bytes / 1e6, 2)),
        h('td', {}, basis.total(r.dur_us)),
        h('td', {}, num(r.gbps, 1)),
        h('td', {}, r.blocking)
      )
    );
    box.append(table('Host↔device copies by direction and memory kind', head, rows));
  } else {
    box.append(empty('No host↔device copies recorded.'));
  }
  const syncs = sm.syncs;
  // The GPU idle the syncs cause is the sync finding's cost (report/basis.py's sync_cost_ms):
  // one number, per real step, wherever it is shown.
  const cost = syncs.count
    ? `; GPU idle they cause (${basis.title}): ${basis.ms(syncs.cost_ms_per_step)}`
    : '';
  box.append(
    h(
      'h4',
      { class: 'gpuprof-w-syncs' },
      `Sync calls: ${syncs.count} in ${basis.steps} profiled steps (${count(syncs.per_step)} per step)${cost}`
    )
  );
  const top = syncs.top;
  if (top.length) {
    const head = h(
      'tr',
      {},
      h('th', { class: 'n' }, 'caused by'),
      h('th', {}, basis.kind === 'step' ? 'calls/step' : `calls (total of ${basis.steps} steps)`),
      h('th', {}, `GPU idle they cause (${basis.title})`)
    );
    const rows = top.map(r =>
      h(
        'tr',
        {},
        h('td', { class: 'n' }, r.caller),
        h('td', {}, count(basis.kind === 'step' ? (r.calls_per_step ?? 0) : r.calls)),
        h('td', {}, basis.ms(r.cost_ms_per_step))
      )
    );
    box.append(table('Sync calls by caller', head, rows, 'gpuprof-w-synctable'));
  }
  return box;
}

import { refreshIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { IRunListing } from './api';
import { button, h } from './elements';
import { can, formatRun, formatStatus, IRunRow } from './format';
import { gpuIcon } from './icon';
import { RunsModel } from './model';

/** What the panel asks its host (the plugin) to do. */
export interface IPanelActions {
  open(run: IRunListing): void;
  compare(before: string, after: string): void;
}

const SEARCH_DEBOUNCE_MS = 250;

/** The left-sidebar run browser: search/filter, the runs, and picking two to compare. */
export class GpuProfPanel extends Widget {
  constructor(model: RunsModel, actions: IPanelActions) {
    super();
    this._model = model;
    this._actions = actions;
    this.id = 'jupyter-gpuprof-panel';
    this.addClass('jp-gpuprof-panel');
    this.title.icon = gpuIcon;
    this.title.caption = 'GPU Profiler';

    const refresh = h('button', 'jp-gpuprof-refresh jp-Button jp-mod-minimal');
    refresh.title = 'Refresh the run list';
    refresh.setAttribute('aria-label', 'Refresh the run list');
    refreshIcon.element({ container: refresh });
    refresh.addEventListener('click', () => void this._model.refresh());
    const header = h(
      'header',
      'jp-gpuprof-header',
      undefined,
      h('h2', '', 'GPU Profiler'),
      refresh
    );

    this._status = h('div', 'jp-gpuprof-status', 'Contacting the server…');
    this._search = h('input', 'jp-gpuprof-search jp-mod-styled');
    this._search.type = 'search';
    this._search.placeholder = 'Search runs (name, command, tag, GPU, verdict)';
    this._search.setAttribute('aria-label', 'Search runs');
    this._search.addEventListener('input', () => this._onSearch());
    this._verdict = this._select('All verdicts', 'Filter by verdict', v => ({ verdict: v }));
    this._tag = this._select('All tags', 'Filter by tag', v => ({ tag: v }));
    const filters = h('div', 'jp-gpuprof-filters', undefined, this._verdict, this._tag);

    this._compare = button('Compare', () => this._onCompare(), 'jp-gpuprof-compare-button');
    this._picks = h('span', 'jp-gpuprof-picks');
    const compareBar = h('div', 'jp-gpuprof-comparebar', undefined, this._picks, this._compare);

    this._list = h('ul', 'jp-gpuprof-runs');
    this._list.setAttribute('aria-label', 'Saved GPU profiling runs');
    this.node.append(header, this._status, this._search, filters, compareBar, this._list);

    model.changed.connect(this._render, this);
    this._onFocus = () => {
      if (this.isVisible) {
        void this._model.refresh();
      }
    };
    window.addEventListener('focus', this._onFocus);
    this._render();
  }

  /** Fetch status and runs again; errors are shown in the panel. */
  refresh(): Promise<void> {
    return this._model.refresh();
  }

  dispose(): void {
    window.removeEventListener('focus', this._onFocus);
    this._model.changed.disconnect(this._render, this);
    this._model.stopPolling();
    super.dispose();
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this._model.refresh();
    this._model.startPolling();
  }

  protected onAfterHide(msg: Message): void {
    super.onAfterHide(msg);
    this._model.stopPolling();
  }

  private _select(
    all: string,
    label: string,
    patch: (value: string) => { verdict?: string; tag?: string }
  ): HTMLSelectElement {
    const select = h('select', 'jp-gpuprof-filter jp-mod-styled');
    select.setAttribute('aria-label', label);
    select.append(new Option(all, ''));
    select.addEventListener('change', () => void this._model.setQuery(patch(select.value)));
    return select;
  }

  private _onSearch(): void {
    window.clearTimeout(this._searchTimer);
    this._searchTimer = window.setTimeout(
      () => void this._model.setQuery({ q: this._search.value }),
      SEARCH_DEBOUNCE_MS
    );
  }

  private _onCompare(): void {
    const [before, after] = this._model.picked;
    if (before && after) {
      this._actions.compare(before, after);
    }
  }

  private _render(): void {
    const model = this._model;
    if (model.error) {
      this._status.textContent = `jupyter_gpuprof server extension unavailable: ${model.error}`;
      this._status.classList.add('jp-mod-error');
    } else if (model.status) {
      this._status.textContent = formatStatus(
        model.status.version,
        model.status.runs_root,
        model.total
      );
      this._status.classList.remove('jp-mod-error');
    }
    fillOptions(this._verdict, model.facets.verdicts);
    fillOptions(this._tag, model.facets.tags);
    const picked = model.picked;
    this._compare.disabled = !model.canCompare;
    this._picks.textContent =
      picked.length === 0
        ? 'Tick two runs to compare'
        : picked.length === 1
          ? '1 picked: tick one more'
          : 'before → after picked';
    this._list.replaceChildren(...model.runs.map(run => this._row(run, formatRun(run))));
  }

  private _row(run: IRunListing, row: IRunRow): HTMLLIElement {
    const li = h('li', 'jp-gpuprof-run');
    li.dataset.runId = row.id;
    li.title = row.tooltip;
    const pickIndex = this._model.picked.indexOf(row.id);
    const pick = h('input', 'jp-gpuprof-pick');
    pick.type = 'checkbox';
    pick.checked = pickIndex >= 0;
    pick.setAttribute('aria-label', `Pick ${row.title} for comparison`);
    if (!can(run, 'compare') && pickIndex < 0) {
      // a failed or broken run has no steps to compare: say so instead of a dead pick
      pick.disabled = true;
      pick.title = 'Only a complete run with a readable trace can be compared';
    }
    pick.addEventListener('click', event => {
      event.stopPropagation();
      this._model.togglePick(row.id);
    });
    const open = h('button', 'jp-gpuprof-run-name', row.title);
    open.type = 'button';
    open.addEventListener('click', () => this._actions.open(run));
    li.append(
      pick,
      open,
      h('span', 'jp-gpuprof-run-created', row.when),
      h('span', `jp-gpuprof-run-status jp-gpuprof-status-${row.status}`, row.statusLabel),
      ...warningNode(row, open),
      h('span', 'jp-gpuprof-run-gpu', row.gpu),
      h('span', 'jp-gpuprof-run-steps', row.steps),
      h('span', `jp-gpuprof-badge jp-gpuprof-badge-${row.badge || 'none'}`, row.badge),
      verdictNode(row.verdict),
      h('span', 'jp-gpuprof-tags', undefined, ...row.tags.map(t => h('span', 'jp-gpuprof-tag', t)))
    );
    if (pickIndex >= 0) {
      li.classList.add('jp-mod-picked');
      li.append(h('span', 'jp-gpuprof-pick-role', pickIndex === 0 ? 'before' : 'after'));
    }
    return li;
  }

  private _model: RunsModel;
  private _actions: IPanelActions;
  private _status: HTMLDivElement;
  private _search: HTMLInputElement;
  private _verdict: HTMLSelectElement;
  private _tag: HTMLSelectElement;
  private _compare: HTMLButtonElement;
  private _picks: HTMLSpanElement;
  private _list: HTMLUListElement;
  private _searchTimer = 0;
  private _onFocus: () => void;
}

/** Keep the first ("all") option and the current choice; list the facet values after it. */
function fillOptions(select: HTMLSelectElement, values: string[]): void {
  const current = select.value;
  const wanted = ['', ...values];
  const have = Array.from(select.options).map(o => o.value);
  if (have.join('\n') === wanted.join('\n')) {
    return;
  }
  const first = select.options[0];
  select.replaceChildren(first, ...values.map(v => new Option(v, v)));
  select.value = wanted.includes(current) ? current : '';
}

let warningIds = 0;

/**
 * The row's marker for a meta.json the server read only in part: a short label on screen, the
 * server's full line as its tooltip and, with the label, to a screen reader (the only text it
 * reads there), and the run's button described by it, so a keyboard user hears it on the run.
 */
function warningNode(row: IRunRow, open: HTMLButtonElement): HTMLSpanElement[] {
  if (!row.warning) {
    return [];
  }
  const label = 'meta partly unreadable';
  const shown = h('span', '', `⚠ ${label}`);
  shown.setAttribute('aria-hidden', 'true');
  const said = h('span', 'gpuprof-w-sr', `${label}: ${row.warning}`);
  said.id = `jp-gpuprof-run-warning-${++warningIds}`;
  const marker = h('span', 'jp-gpuprof-badge jp-gpuprof-run-warning', undefined, shown, said);
  marker.title = row.warning;
  open.setAttribute('aria-describedby', said.id);
  return [marker];
}

function verdictNode(text: string): HTMLSpanElement {
  const node = h('span', 'jp-gpuprof-run-verdict', text);
  node.title = text;
  return node;
}

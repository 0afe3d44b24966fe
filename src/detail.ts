/**
 * The main-area view of one run: its actions, a ranks panel for distributed runs, and the
 * report panels of the notebook widget (report/), drawn from the run's summary.
 */
import { Widget } from '@lumino/widgets';

import { deleteRun, downloadTrace, renameRun, showCode, tagRun } from './actions';
import { GpuProfApi, IRankRow, IRunListing, requestAPI, runPath } from './api';
import { rankChart, straggler } from './charts';
import { linkData } from './report/chartData';
import { button, h, table } from './elements';
import { can, formatMs, formatRun } from './format';
import { RunsModel } from './model';
import { IReportEnv, IStepAnswer } from './report/env';
import { renderReport } from './report/report';
import { IReportSummary } from './report/summary';

/** One run's report in the main area. */
export class RunDetail extends Widget {
  constructor(
    api: GpuProfApi,
    model: RunsModel,
    run: IRunListing,
    command?: (id: string, args: Record<string, string>) => void
  ) {
    super();
    this._command = command;
    this._api = api;
    this._model = model;
    this._run = run;
    this.id = `jupyter-gpuprof-run-${run.id}`;
    this.addClass('jp-gpuprof-detail');
    this.title.closable = true;
    this._header = h('header', 'jp-gpuprof-detail-header');
    this._ranks = h('section', 'jp-gpuprof-ranks');
    this._body = h(
      'div',
      'jp-gpuprof-detail-body',
      'Loading the report… (first open analyses the trace)'
    );
    this.node.append(this._header, this._ranks, this._body);
    this._drawHeader();
    model.changed.connect(this._onModelChanged, this);
  }

  get run(): IRunListing {
    return this._run;
  }

  /** Fetch the summary (analysing the trace on first open) and draw the report panels from it. */
  async load(): Promise<void> {
    if (!can(this._run, 'view_report')) {
      // the header's first line says why (the server's `unavailable`): nothing to analyse
      this._noReport(null);
      return;
    }
    try {
      this._summary = await this._api.summary(this._run.id);
      this._drawRanks(this._summary.distributed?.ranks ?? []);
      this._drawReport();
    } catch (error) {
      this._noReport(error instanceof Error ? error.message : String(error));
    }
  }

  /** The report panels; the name is the run's current one (a rename redraws the heading). */
  private _drawReport(): void {
    if (!this._summary) {
      return;
    }
    // The report's toolbar owns the trace buttons; it needs the run id, which is this run's.
    const source = { ...this._summary.source, run_id: this._run.id, name: this._run.name };
    this._body.replaceChildren(renderReport({ ...this._summary, source }, this._env()));
    this._body.classList.remove('jp-mod-error');
  }

  /** No report: the reason, and the trace on its own where the run saved one. */
  private _noReport(reason: string | null): void {
    const run = this._run;
    this._body.replaceChildren(
      ...(reason === null ? [] : [h('p', '', `No report: ${reason}`)]),
      ...(can(run, 'download_trace')
        ? [button('Download trace', () => void downloadTrace(this._api, run))]
        : [h('p', 'jp-gpuprof-note', 'This run saved no trace to download.')])
    );
    this._body.classList.toggle('jp-mod-error', reason !== null);
  }

  /** What the report can do here: load any step's events and the trace from the server, run commands. */
  private _env(): IReportEnv {
    const id = this._run.id;
    const settings = this._api.settings;
    return {
      loadStep: step => requestAPI<IStepAnswer>(runPath(id, `timeline?step=${step}`), {}, settings),
      traceBytes: async () => (await this._api.trace(id)).arrayBuffer(),
      command: this._command
    };
  }

  dispose(): void {
    this._model.changed.disconnect(this._onModelChanged, this);
    super.dispose();
  }

  private _onModelChanged(): void {
    const fresh = this._model.runs.find(r => r.id === this._run.id);
    if (fresh && fresh !== this._run) {
      const renamed = fresh.name !== this._run.name;
      const ready = !can(this._run, 'view_report') && can(fresh, 'view_report');
      this._run = fresh;
      this._drawHeader();
      if (ready) {
        void this.load(); // a run that finished while its view was open
      } else if (renamed) {
        this._drawReport();
      }
    }
  }

  /**
   * Title, facts, tags and the actions on the run record; the trace's own actions (Download
   * trace, Open in Perfetto) are the report toolbar's, so each shows once.
   */
  private _drawHeader(): void {
    const row = formatRun(this._run);
    this.title.label = row.title;
    this.title.caption = `GPU profile: ${row.title} (${row.id})`;
    const facts = [row.when, row.gpu, row.steps, row.statusLabel].filter(Boolean).join(' · ');
    const tags = h(
      'span',
      'jp-gpuprof-tags',
      undefined,
      ...row.tags.map(t => h('span', 'jp-gpuprof-tag', t))
    );
    const run = this._run;
    const actions = h(
      'div',
      'jp-gpuprof-actions',
      undefined,
      button('Rename', () => void renameRun(this._model, run)),
      button('Tags', () => void tagRun(this._model, run)),
      button('Show code', () => void showCode(this._api, run)),
      button('Delete', () => void this._delete(), 'jp-mod-warn')
    );
    const why = this._run.unavailable
      ? [h('p', 'jp-gpuprof-unavailable', this._run.unavailable)]
      : [];
    why.forEach(p => p.setAttribute('role', 'alert'));
    // what the server's reader dropped from meta.json: its line, under the title
    const dropped = row.warning
      ? [
          h(
            'p',
            'jp-gpuprof-detail-warning',
            undefined,
            h('span', '', '⚠ '),
            document.createTextNode(row.warning)
          )
        ]
      : [];
    dropped.forEach(p => p.firstElementChild?.setAttribute('aria-hidden', 'true'));
    this._header.replaceChildren(
      h('h2', 'jp-gpuprof-detail-title', row.title),
      ...why,
      ...dropped,
      h('div', 'jp-gpuprof-detail-facts', facts),
      tags,
      actions
    );
  }

  private async _delete(): Promise<void> {
    if (await deleteRun(this._model, this._run)) {
      this.dispose();
    }
  }

  private _drawRanks(ranks: IRankRow[]): void {
    if (ranks.length < 2) {
      this._ranks.replaceChildren();
      return;
    }
    const slow = straggler(ranks);
    const note =
      slow === null
        ? 'No straggler: ranks finish their steps together.'
        : `Straggler: rank ${slow} (the others wait ${formatMs(ranks.find(r => r.rank === slow)?.extra_ms ?? null)} per step for it).`;
    this._ranks.replaceChildren(
      h('h3', '', `Ranks (${ranks.length})`),
      h('p', 'jp-gpuprof-straggler', note),
      // the table holds the chart's numbers: the chart names it as its data (aria-details)
      linkData(
        rankChart(ranks),
        table(
          'Each rank, ms per step',
          ['rank', 'step', 'compute', 'comm', 'exposed comm', 'waiting', 'slow phase'],
          ranks,
          r => [
            r.rank === slow ? `${r.rank} (straggler)` : String(r.rank),
            formatMs(r.step_ms),
            formatMs(r.compute_ms),
            formatMs(r.comm_ms),
            formatMs(r.exposed_comm_ms),
            formatMs(r.wait_ms),
            r.phase ?? ''
          ]
        )
      )
    );
  }

  private _api: GpuProfApi;
  private _command?: (id: string, args: Record<string, string>) => void;
  private _model: RunsModel;
  private _run: IRunListing;
  private _header: HTMLElement;
  private _ranks: HTMLElement;
  private _body: HTMLDivElement;
  private _summary: IReportSummary | null = null;
}

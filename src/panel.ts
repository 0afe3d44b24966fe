import { refreshIcon } from '@jupyterlab/ui-components';
import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { GpuProfApi } from './api';
import { formatRun, formatStatus } from './format';
import { gpuIcon } from './icon';

/** The left-sidebar panel: server status and the saved runs. */
export class GpuProfPanel extends Widget {
  constructor(api: GpuProfApi) {
    super();
    this._api = api;
    this.id = 'jupyter-gpuprof-panel';
    this.addClass('jp-gpuprof-panel');
    this.title.icon = gpuIcon;
    this.title.caption = 'GPU Profiler';

    const header = document.createElement('header');
    header.className = 'jp-gpuprof-header';
    const title = document.createElement('h2');
    title.textContent = 'GPU Profiler';
    const refresh = document.createElement('button');
    refresh.className = 'jp-gpuprof-refresh jp-Button jp-mod-minimal';
    refresh.title = 'Refresh the run list';
    refresh.setAttribute('aria-label', 'Refresh the run list');
    refreshIcon.element({ container: refresh });
    refresh.addEventListener('click', () => void this.refresh());
    header.append(title, refresh);

    this._status = document.createElement('div');
    this._status.className = 'jp-gpuprof-status';
    this._status.textContent = 'Contacting the server…';
    this._list = document.createElement('ul');
    this._list.className = 'jp-gpuprof-runs';
    this._list.setAttribute('aria-label', 'Saved GPU profiling runs');
    this.node.append(header, this._status, this._list);
  }

  /** Fetch status and runs again and redraw; errors are shown in the panel. */
  async refresh(): Promise<void> {
    try {
      const [status, runs] = await Promise.all([this._api.status(), this._api.runs()]);
      this._status.textContent = formatStatus(status.version, status.runs_root, runs.length);
      this._status.classList.remove('jp-mod-error');
      this._list.replaceChildren(...runs.map(run => renderRow(formatRun(run))));
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this._status.textContent = `jupyter_gpuprof server extension unavailable: ${reason}`;
      this._status.classList.add('jp-mod-error');
      this._list.replaceChildren();
    }
  }

  protected onAfterShow(msg: Message): void {
    super.onAfterShow(msg);
    void this.refresh();
  }

  private _api: GpuProfApi;
  private _status: HTMLDivElement;
  private _list: HTMLUListElement;
}

function renderRow(row: ReturnType<typeof formatRun>): HTMLLIElement {
  const li = document.createElement('li');
  li.className = 'jp-gpuprof-run';
  li.dataset.runId = row.id;
  li.title = row.tooltip;
  const cells: [string, string][] = [
    ['jp-gpuprof-run-name', row.title],
    ['jp-gpuprof-run-created', row.when],
    [`jp-gpuprof-run-status jp-gpuprof-status-${row.status}`, row.status],
    ['jp-gpuprof-run-verdict', row.verdict]
  ];
  for (const [className, text] of cells) {
    const span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    li.append(span);
  }
  return li;
}

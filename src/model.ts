/**
 * State of the run browser, independent of the DOM: the current page of runs, the filters,
 * the two runs picked for comparison and polling for new runs. Views listen to `changed`.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { GpuProfApi, IRunListing, IRunPage, IRunQuery, IServerStatus } from './api';
import { can } from './format';

/** The subset of the REST client the model uses (mocked in tests). */
export type IRunsApi = Pick<GpuProfApi, 'status' | 'runs' | 'update' | 'remove'>;

/** How often the sidebar looks for new runs while it is visible. */
export const POLL_MS = 10_000;

/** What the view needs to draw the filter controls. */
export interface IFacets {
  verdicts: string[];
  tags: string[];
  statuses: string[];
}

const EMPTY_FACETS: IFacets = { verdicts: [], tags: [], statuses: [] };

/** The run list, its filters and the compare selection. */
export class RunsModel {
  constructor(api: IRunsApi) {
    this._api = api;
  }

  /** Emitted after every refresh, filter change or edit. */
  get changed(): ISignal<RunsModel, void> {
    return this._changed;
  }

  /** Emitted with the ids of runs that appeared since the previous refresh. */
  get runsAdded(): ISignal<RunsModel, string[]> {
    return this._runsAdded;
  }

  get runs(): readonly IRunListing[] {
    return this._page?.runs ?? [];
  }

  /** How many runs match the filters (the page may hold fewer). */
  get total(): number {
    return this._page?.total ?? 0;
  }

  get facets(): IFacets {
    return this._page?.facets ?? EMPTY_FACETS;
  }

  get status(): IServerStatus | null {
    return this._status;
  }

  get error(): string | null {
    return this._error;
  }

  get query(): Readonly<IRunQuery> {
    return this._query;
  }

  /** Run ids picked for comparison: at most two, the first is "before". */
  get picked(): readonly string[] {
    return this._picked;
  }

  get canCompare(): boolean {
    return this._picked.length === 2;
  }

  /** Runs another run can be compared with: complete and readable (the server's `compare`). */
  comparable(except?: string): IRunListing[] {
    return this.runs.filter(r => r.id !== except && can(r, 'compare'));
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Fetch status and the current page; concurrent calls share one request. */
  refresh(): Promise<void> {
    if (!this._pending) {
      this._pending = this._load().finally(() => {
        this._pending = null;
      });
    }
    return this._pending;
  }

  /** Change filters (merged into the current ones), back to the first page, and reload. */
  async setQuery(patch: Partial<IRunQuery>): Promise<void> {
    this._query = { ...this._query, ...patch, offset: 0 };
    await this._pending;
    await this.refresh();
  }

  /** Add a run to the compare selection, or remove it; a third pick drops the oldest. */
  togglePick(id: string): void {
    if (this._picked.includes(id)) {
      this._picked = this._picked.filter(p => p !== id);
    } else {
      this._picked = [...this._picked, id].slice(-2);
    }
    this._changed.emit();
  }

  clearPicks(): void {
    this._picked = [];
    this._changed.emit();
  }

  async rename(id: string, name: string): Promise<void> {
    this._replace(await this._api.update(id, { name }));
  }

  /** Store the tags, then reload: a new tag joins the filter's values without a refresh. */
  async setTags(id: string, tags: string[]): Promise<void> {
    this._replace(await this._api.update(id, { tags }));
    await this.refresh();
  }

  async remove(id: string): Promise<void> {
    await this._api.remove(id);
    this._picked = this._picked.filter(p => p !== id);
    await this.refresh();
  }

  /** Refresh every `ms` until `stopPolling` (the panel polls only while visible). */
  startPolling(ms: number = POLL_MS): void {
    this.stopPolling();
    this._timer = setInterval(() => void this.refresh(), ms);
  }

  stopPolling(): void {
    if (this._timer !== null) {
      clearInterval(this._timer);
      this._timer = null;
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    this.stopPolling();
    Signal.clearData(this);
  }

  private async _load(): Promise<void> {
    try {
      const [status, page] = await Promise.all([this._api.status(), this._api.runs(this._query)]);
      const known = this._known;
      const added = known ? page.runs.map(r => r.id).filter(id => !known.has(id)) : [];
      this._known = new Set([...(known ?? []), ...page.runs.map(r => r.id)]);
      this._status = status;
      this._page = page;
      this._error = null;
      if (added.length > 0) {
        this._runsAdded.emit(added);
      }
    } catch (error) {
      this._error = error instanceof Error ? error.message : String(error);
      this._page = null;
    }
    if (!this._disposed) {
      this._changed.emit();
    }
  }

  private _replace(row: IRunListing): void {
    if (this._page) {
      const runs = this._page.runs.map(r => (r.id === row.id ? row : r));
      this._page = { ...this._page, runs };
    }
    this._changed.emit();
  }

  private _api: IRunsApi;
  private _page: IRunPage | null = null;
  private _status: IServerStatus | null = null;
  private _error: string | null = null;
  private _query: IRunQuery = {};
  private _picked: string[] = [];
  private _known: Set<string> | null = null;
  private _pending: Promise<void> | null = null;
  private _timer: ReturnType<typeof setInterval> | null = null;
  private _disposed = false;
  private _changed = new Signal<RunsModel, void>(this);
  private _runsAdded = new Signal<RunsModel, string[]>(this);
}

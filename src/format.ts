/**
 * Pure text formatting of runs and comparisons (kept apart from the DOM so it can be unit-tested).
 */
import { ms } from './report/dom';
import { IRunListing, RunAbility } from './api';

/** Whether the server said `run` offers `action` (a row from before abilities offers all). */
export function can(run: IRunListing, action: RunAbility): boolean {
  return run.abilities === undefined || run.abilities.includes(action);
}

/** A run as the sidebar shows it. */
export interface IRunRow {
  id: string;
  title: string;
  when: string;
  status: string;
  /** What the status badge says: `in progress` for a run still being written. */
  statusLabel: string;
  verdict: string;
  /** Short verdict category for the badge (`input`, `precision`…), '' when not analysed. */
  badge: string;
  gpu: string;
  steps: string;
  tags: string[];
  /** What the server's reader dropped from the run's meta.json, its words ('' when nothing). */
  warning: string;
  tooltip: string;
}

/**
 * `2026-11-29T19:13:22.5+00:00` -> `2026-11-29 19:13`.
 *
 * Shows the run's own wall-clock stamp rather than converting to the browser's zone, so the
 * list reads the same on every machine (and in screenshots).
 */
export function formatCreated(created: string | null): string {
  if (!created) {
    return '';
  }
  const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})/.exec(created);
  return match ? `${match[1]} ${match[2]}` : created;
}

/** A duration as every surface writes it (`ms` of the report); `null` -> `–`. */
export function formatMs(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? ms(value) : '–';
}

/** `-60.53` -> `−60.5%` (a real minus sign), `+3.1%` for growth. */
export function formatPct(value: number | null | undefined, digits = 1): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return '–';
  }
  const text = Math.abs(value).toFixed(digits);
  return `${value < 0 ? '−' : '+'}${text}%`;
}

/** A signed duration change, `−28.16 ms`, written like `ms`. */
export function formatDeltaMs(value: number | null | undefined): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return '–';
  }
  return `${value < 0 ? '−' : '+'}${ms(Math.abs(value))}`;
}

const STATUS_LABELS: Record<string, string> = {
  running: 'in progress',
  broken: 'broken',
  failed: 'failed',
  complete: 'complete'
};

/** One row of the sidebar list. */
export function formatRun(run: IRunListing): IRunRow {
  const verdict = run.verdict ?? '';
  const warning = run.warning ?? '';
  const tooltip = [
    run.id,
    run.command ?? '',
    run.error ? `error: ${run.error}` : '',
    warning ? `warning: ${warning}` : ''
  ]
    .filter(Boolean)
    .join('\n');
  const median = run.median_ms ?? null;
  const steps =
    median === null ? '' : `median ${formatMs(median)} · p95 ${formatMs(run.p95_ms ?? null)}`;
  return {
    id: run.id,
    title: run.name || run.id,
    when: formatCreated(run.created),
    status: run.status,
    statusLabel: STATUS_LABELS[run.status] ?? run.status,
    verdict,
    badge: run.verdict_category ?? '',
    gpu: run.gpu ?? '',
    steps,
    tags: run.tags ?? [],
    warning,
    tooltip
  };
}

/** The line under the panel title: what the server said, in a few words. */
export function formatStatus(version: string, runsRoot: string, runCount: number): string {
  const runs = runCount === 1 ? '1 run' : `${runCount} runs`;
  return `Server extension ${version} · ${runs} in ${runsRoot}`;
}

/** `"a, b ,, c"` -> `['a', 'b', 'c']` (what the tag dialog accepts). */
export function parseTags(text: string): string[] {
  return text
    .split(',')
    .map(tag => tag.trim())
    .filter(tag => tag.length > 0);
}

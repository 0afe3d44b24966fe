/**
 * Pure text formatting of the run list (kept apart from the DOM so it can be unit-tested).
 */
import { IRunListing } from './api';

/** A run as the sidebar shows it. */
export interface IRunRow {
  id: string;
  title: string;
  when: string;
  status: string;
  verdict: string;
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

/** One row of the sidebar list. */
export function formatRun(run: IRunListing): IRunRow {
  const verdict = run.verdict ?? '';
  const tooltip = [run.id, run.error ? `error: ${run.error}` : ''].filter(Boolean).join('\n');
  return {
    id: run.id,
    title: run.name || run.id,
    when: formatCreated(run.created),
    status: run.status,
    verdict,
    tooltip
  };
}

/** The line under the panel title: what the server said, in a few words. */
export function formatStatus(version: string, runsRoot: string, runCount: number): string {
  const runs = runCount === 1 ? '1 run' : `${runCount} runs`;
  return `Server extension ${version} · ${runs} in ${runsRoot}`;
}

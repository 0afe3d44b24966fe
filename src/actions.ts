/**
 * User actions on one run that need a dialog or the browser: rename, tag, delete (confirmed),
 * download the trace, show the profiled cell. Each returns whether the run was changed.
 */
import { Dialog, InputDialog, showDialog, showErrorMessage } from '@jupyterlab/apputils';

import { Widget } from '@lumino/widgets';

import { GpuProfApi, IRunListing } from './api';
import { h } from './elements';
import { parseTags } from './format';
import { RunsModel } from './model';

/** Ask for a new name; rename through the model. */
export async function renameRun(model: RunsModel, run: IRunListing): Promise<boolean> {
  const result = await InputDialog.getText({
    title: 'Rename run',
    text: run.name,
    okLabel: 'Rename'
  });
  if (!result.button.accept || !result.value || result.value.trim() === run.name) {
    return false;
  }
  return guarded('Rename failed', () => model.rename(run.id, result.value ?? ''));
}

/** Ask for comma-separated tags; store them through the model. */
export async function tagRun(model: RunsModel, run: IRunListing): Promise<boolean> {
  const result = await InputDialog.getText({
    title: 'Tags (comma-separated)',
    text: (run.tags ?? []).join(', '),
    okLabel: 'Save tags'
  });
  if (!result.button.accept || result.value === null) {
    return false;
  }
  return guarded('Tagging failed', () => model.setTags(run.id, parseTags(result.value ?? '')));
}

/** Delete after an explicit confirmation (the run folder and its trace are gone for good). */
export async function deleteRun(model: RunsModel, run: IRunListing): Promise<boolean> {
  const body = h(
    'div',
    'jp-gpuprof-confirm',
    undefined,
    h('p', '', 'Delete this run folder and everything in it? This cannot be undone.'),
    h('p', 'jp-gpuprof-confirm-name', `${run.name} (${run.id})`)
  );
  const result = await showDialog({
    title: 'Delete run',
    body: new Widget({ node: body }),
    buttons: [Dialog.cancelButton(), Dialog.warnButton({ label: 'Delete' })]
  });
  if (!result.button.accept) {
    return false;
  }
  return guarded('Delete failed', () => model.remove(run.id));
}

/** Save the gzipped trace (opens in Perfetto or chrome://tracing). */
export async function downloadTrace(api: GpuProfApi, run: IRunListing): Promise<boolean> {
  return guarded('Download failed', async () => {
    const blob = await api.trace(run.id);
    const url = URL.createObjectURL(blob);
    const link = h('a');
    link.href = url;
    link.download = `${run.id}.trace.json.gz`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  });
}

/** Show the cell (or command) the run profiled, with a copy button. */
export async function showCode(api: GpuProfApi, run: IRunListing): Promise<boolean> {
  return guarded('Could not load the code', async () => {
    const code = await api.code(run.id);
    const pre = h('pre', 'jp-gpuprof-code', code.code || '(no code was recorded)');
    const result = await showDialog({
      title: `Code of ${code.name}`,
      body: new Widget({ node: pre }),
      buttons: [Dialog.cancelButton({ label: 'Close' }), Dialog.okButton({ label: 'Copy' })]
    });
    if (result.button.accept && navigator.clipboard) {
      await navigator.clipboard.writeText(code.code);
    }
  });
}

async function guarded(title: string, action: () => Promise<void>): Promise<boolean> {
  try {
    await action();
    return true;
  } catch (error) {
    await showErrorMessage(title, error instanceof Error ? error.message : String(error));
    return false;
  }
}

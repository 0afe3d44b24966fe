import { ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';

import { GpuProfApi, IRunListing } from './api';
import { CompareView } from './compareview';
import { RunDetail } from './detail';
import { gpuIcon } from './icon';
import { RunsModel } from './model';
import { COMMAND_EVENT } from './report/env';
import { TOOLBAR_COMMANDS } from './report/toolbar';
import { GpuProfPanel } from './panel';
import { drawSavedReports } from './savedReports';

/** Command ids, all under the extension's namespace. */
export namespace CommandIDs {
  export const openPanel = 'jupyter-gpuprof:open-panel';
  export const refreshRuns = 'jupyter-gpuprof:refresh-runs';
  export const openRun = 'jupyter-gpuprof:open-run';
  export const compareRuns = 'jupyter-gpuprof:compare-runs';
  /** From a report's toolbar: open the run's view and reveal the sidebar. */
  export const showRun = TOOLBAR_COMMANDS.showRun;
  /** From a report's toolbar: pick another run and compare this one with it. */
  export const compareWith = TOOLBAR_COMMANDS.compareWith;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpuprof:plugin',
  description: 'GPU Profiler sidebar: saved runs, their reports, and before/after comparison.',
  autoStart: true,
  optional: [ILabShell],
  activate: (app: JupyterFrontEnd, labShell: ILabShell | null) => {
    const api = new GpuProfApi(app.serviceManager.serverSettings);
    const model = new RunsModel(api);
    const opened = new Map<string, Widget>();

    /** Show `key`'s widget if open, else add the one `make` builds to the main area. */
    const show = (key: string, make: () => Widget & { load(): Promise<void> }) => {
      const existing = opened.get(key);
      if (existing && !existing.isDisposed) {
        app.shell.activateById(existing.id);
        return;
      }
      const widget = make();
      opened.set(key, widget);
      widget.disposed.connect(() => opened.delete(key));
      app.shell.add(widget, 'main');
      app.shell.activateById(widget.id);
      void widget.load();
    };
    const runCommand = (id: string, args: Record<string, string>) =>
      void app.commands.execute(id, args);
    const openRun = (run: IRunListing) =>
      show(`run:${run.id}`, () => new RunDetail(api, model, run, runCommand));
    /** The listed run `id`, refreshing the list once when it is not there yet. */
    const findRun = async (id: unknown) => {
      if (!model.runs.some(r => r.id === id)) {
        await model.refresh();
      }
      return model.runs.find(r => r.id === id);
    };
    const compare = (before: string, after: string) =>
      show(`compare:${before}:${after}`, () => new CompareView(api, before, after));

    // a notebook's saved reports draw with this extension's code, not the copy saved in it
    // (src/savedReports.ts); extensions run as the panel is made, before its file is read
    app.docRegistry.addWidgetExtension('Notebook', {
      createNew: (notebook, context) => {
        const rendermime = (notebook as Widget & { content?: { rendermime?: IRenderMimeRegistry } })
          .content?.rendermime;
        const metadata = context.model as { getMetadata?(key: string): unknown };
        if (rendermime) {
          drawSavedReports(rendermime, () => metadata.getMetadata?.('widgets'));
        }
      }
    });

    const panel = new GpuProfPanel(model, { open: openRun, compare });
    app.shell.add(panel, 'left', { rank: 900 });

    app.commands.addCommand(CommandIDs.openPanel, {
      label: 'Show the GPU Profiler panel',
      icon: gpuIcon,
      execute: () => {
        if (labShell) {
          labShell.activateById(panel.id);
        }
      }
    });
    app.commands.addCommand(CommandIDs.refreshRuns, {
      label: 'Refresh GPU profiling runs',
      execute: () => model.refresh()
    });
    app.commands.addCommand(CommandIDs.openRun, {
      label: 'Open a GPU profiling run',
      execute: args => {
        const run = model.runs.find(r => r.id === args.id);
        if (run) {
          openRun(run);
        }
      }
    });
    app.commands.addCommand(CommandIDs.showRun, {
      label: 'Show this GPU profiling run in the sidebar',
      execute: async args => {
        if (labShell) {
          labShell.activateById(panel.id);
        }
        const run = await findRun(args.id);
        if (run) {
          openRun(run);
        }
      }
    });
    app.commands.addCommand(CommandIDs.compareWith, {
      label: 'Compare this GPU profiling run with another',
      execute: async args => {
        await findRun(args.id);
        const others = model.comparable(String(args.id));
        if (!others.length) {
          await showErrorMessage(
            'Nothing to compare with',
            'No other complete run with a readable trace is listed (failed and broken runs cannot be compared).'
          );
          return;
        }
        const labels = others.map(r => `${r.name || r.id} (${r.id})`);
        const picked = await InputDialog.getItem({
          title: 'Compare with which run? (it is the "before")',
          items: labels
        });
        const other = others[labels.indexOf(picked.value ?? '')];
        if (picked.button.accept && other) {
          compare(other.id, String(args.id));
        }
      }
    });
    // a notebook report asks for these through a DOM event (it has no handle on the app)
    const allowed = new Set(Object.values(TOOLBAR_COMMANDS));
    document.addEventListener(COMMAND_EVENT, ev => {
      const { id, args } = (ev as CustomEvent).detail ?? {};
      if (allowed.has(id) && typeof args?.id === 'string') {
        void app.commands.execute(id, { id: args.id });
      }
    });
    app.commands.addCommand(CommandIDs.compareRuns, {
      label: 'Compare the two picked GPU profiling runs',
      isEnabled: () => model.canCompare,
      execute: () => {
        const [before, after] = model.picked;
        if (before && after) {
          compare(before, after);
        }
      }
    });
  }
};

export default plugin;

import { ILabShell, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { Widget } from '@lumino/widgets';

import { GpuProfApi, IRunListing } from './api';
import { CompareView } from './compareview';
import { RunDetail } from './detail';
import { gpuIcon } from './icon';
import { RunsModel } from './model';
import { GpuProfPanel } from './panel';

/** Command ids, all under the extension's namespace. */
export namespace CommandIDs {
  export const openPanel = 'jupyter-gpuprof:open-panel';
  export const refreshRuns = 'jupyter-gpuprof:refresh-runs';
  export const openRun = 'jupyter-gpuprof:open-run';
  export const compareRuns = 'jupyter-gpuprof:compare-runs';
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
    const openRun = (run: IRunListing) =>
      show(`run:${run.id}`, () => new RunDetail(api, model, run));
    const compare = (before: string, after: string) =>
      show(`compare:${before}:${after}`, () => new CompareView(api, before, after));

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

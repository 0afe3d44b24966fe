import {
  ILabShell,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';

import { GpuProfApi } from './api';
import { gpuIcon } from './icon';
import { GpuProfPanel } from './panel';

/** Command ids, all under the extension's namespace. */
export namespace CommandIDs {
  export const openPanel = 'jupyter-gpuprof:open-panel';
  export const refreshRuns = 'jupyter-gpuprof:refresh-runs';
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-gpuprof:plugin',
  description: 'GPU Profiler sidebar: server status and saved profiling runs.',
  autoStart: true,
  optional: [ILabShell],
  activate: (app: JupyterFrontEnd, labShell: ILabShell | null) => {
    const panel = new GpuProfPanel(new GpuProfApi(app.serviceManager.serverSettings));
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
      execute: () => panel.refresh()
    });
  }
};

export default plugin;

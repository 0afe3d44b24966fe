/**
 * The whole report: head, tab strip and five panels. Shared by the notebook widget
 * (`widget.ts`) and the sidebar's run view, so both show the same thing from one summary.
 */
import { h } from './dom';
import { header } from './header';
import { nextPanel } from './next';
import { opsPanel } from './ops';
import { stepsPanel } from './steps';
import { ICharts, IReportSummary } from './summary';
import { timelinePanel } from './timeline';
import { transfersPanel } from './transfers';

type PanelBuilder = (sm: IReportSummary, charts: ICharts) => HTMLElement;

/** Tab id, tab label and builder of each panel, in tab order. */
export const PANELS: [string, string, PanelBuilder][] = [
  ['steps', 'Step time', stepsPanel],
  ['timeline', 'GPU timeline', timelinePanel],
  ['ops', 'Operators', opsPanel],
  ['transfers', 'Transfers & syncs', transfersPanel],
  ['next', 'Next steps', nextPanel]
];

/** The report's root element (`.gpuprof-w`); the "Step time" tab is shown first. */
export function renderReport(sm: IReportSummary, charts: ICharts = {}): HTMLDivElement {
  const tabs = h('div', { class: 'gpuprof-w-tabs', role: 'tablist' });
  const body = h('div', { class: 'gpuprof-w-body' });
  const panels = new Map<string, HTMLElement>();
  const show = (id: string) => {
    panels.forEach((panel, pid) => {
      panel.hidden = pid !== id;
    });
    for (const tab of Array.from(tabs.children) as HTMLElement[]) {
      tab.setAttribute('aria-selected', String(tab.dataset.panel === id));
    }
  };
  for (const [id, label, build] of PANELS) {
    const tab = h(
      'button',
      { type: 'button', role: 'tab', class: 'gpuprof-w-tab', onclick: () => show(id) },
      label
    );
    tab.dataset.panel = id;
    tabs.append(tab);
    const panel = h(
      'div',
      { class: `gpuprof-w-panel gpuprof-w-panel-${id}`, role: 'tabpanel' },
      build(sm, charts)
    );
    panels.set(id, panel);
    body.append(panel);
  }
  show('steps');
  return h('div', { class: 'gpuprof-w' }, header(sm), tabs, body);
}

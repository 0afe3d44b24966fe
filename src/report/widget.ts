/**
 * Entry point of the notebook report widget (anywidget ESM, bundled into
 * jupyter_gpuprof/views/static/widget.js). Redraws when the kernel sends a new summary.
 */
import { pageEnv } from './env';
import { renderReport } from './report';
import { ICharts, IReportSummary } from './summary';

/** The part of anywidget's model the widget uses. */
export interface IWidgetModel {
  get(name: 'summary'): IReportSummary | null;
  get(name: 'charts'): ICharts | null;
  on(event: string, callback: () => void): void;
}

/** anywidget's `render`: draw the report into `el`, again on each summary change. */
export function render({ model, el }: { model: IWidgetModel; el: HTMLElement }): void {
  const draw = () => {
    const sm = model.get('summary') ?? {};
    el.replaceChildren(renderReport(sm, model.get('charts') ?? {}, pageEnv(sm.source?.run_id, el)));
  };
  draw();
  model.on('change:summary', draw);
}

export default { render };

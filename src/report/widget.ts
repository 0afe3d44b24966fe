/**
 * Entry point of the notebook report widget (anywidget ESM, bundled into
 * jupyter_gpuprof/views/static/widget.js). Redraws when the kernel sends a new summary.
 */
import { pageEnv } from './env';
import { renderReport } from './report';
import { IReportSummary } from './summary';

/** The part of anywidget's model the widget uses. */
export interface IWidgetModel {
  get(name: 'summary'): IReportSummary | null;
  on(event: string, callback: () => void): void;
}

/**
 * Hide the static copy of the report, the output just above this widget's (views/widget.py
 * displays both). The widget's stylesheet has a `:has()` rule for this, but Chromium does not
 * always restyle the copy when the widget's content lands in the next output later, leaving the
 * report shown twice; the output area may also attach `el` only after `render`, hence the retries.
 */
export function hideStaticCopy(el: HTMLElement, tries = 20): void {
  const child = el.closest('.jp-OutputArea-child');
  if (!child) {
    if (tries > 0) {
      requestAnimationFrame(() => hideStaticCopy(el, tries - 1));
    }
    return;
  }
  const above = child.previousElementSibling as HTMLElement | null;
  if (above?.classList.contains('jp-OutputArea-child') && above.querySelector('.gpuprof-static')) {
    above.style.display = 'none';
  }
}

/** anywidget's `render`: draw the report into `el`, again on each summary change. */
export function render({ model, el }: { model: IWidgetModel; el: HTMLElement }): void {
  const draw = () => {
    const sm = model.get('summary');
    el.replaceChildren(...(sm ? [renderReport(sm, pageEnv(sm.source.run_id, el))] : []));
  };
  draw();
  hideStaticCopy(el);
  model.on('change:summary', draw);
}

export default { render };

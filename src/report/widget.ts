/**
 * Entry point of the notebook report widget (anywidget ESM, bundled into
 * jupyter_gpuprof/views/static/widget.js). Redraws when the kernel sends a new summary.
 */
import { IReportEnv, ITryControl, pageEnv } from './env';
import { renderReport } from './report';
import { IReportSummary, drawable } from './summary';

/** The part of anywidget's model the widget uses: its synced state and custom messages. */
export interface IWidgetModel {
  get(name: string): unknown;
  on(event: string, callback: () => void): void;
  send?(content: { action: string }): void;
}

/** The kernel's tries as the widget's model offers them (views/widget.py), or none. */
export function tryControl(model: IWidgetModel): ITryControl | undefined {
  const offer = model.get('try_offer');
  const send = model.send?.bind(model);
  if (typeof offer !== 'string' || !offer || !send) {
    return undefined;
  }
  return {
    label: () => String(model.get('try_offer') ?? ''),
    status: () => String(model.get('try_status') ?? ''),
    running: () => Boolean(model.get('try_running')),
    start: () => send({ action: 'try' }),
    cancel: () => send({ action: 'cancel' }),
    onChange: callback => {
      model.on('change:try_status', callback);
      model.on('change:try_running', callback);
    }
  };
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

/**
 * What a report saved by a version too old to draw shows instead: one line, and the saved
 * static copy above stays visible (the rule that hides it keys on a drawn report).
 */
export function olderReport(sm: IReportSummary): HTMLElement {
  const note = document.createElement('div');
  note.className = 'gpuprof-w-older';
  note.textContent =
    `This report was saved by an older jupyter_gpuprof (summary version ${sm.schema_version}); ` +
    'its saved copy above has every figure. Run the cell again for the interactive report.';
  return note;
}

/** The widget's content for a summary: the report, or the note for one too old to draw. */
export function content(sm: IReportSummary, el: HTMLElement, tries?: ITryControl): HTMLElement {
  const env: IReportEnv = { ...pageEnv(sm.source.run_id, el), ...(tries ? { tries } : {}) };
  return drawable(sm) ? renderReport(sm, env) : olderReport(sm);
}

/** anywidget's `render`: draw the report into `el`, again on each summary change. */
export function render({ model, el }: { model: IWidgetModel; el: HTMLElement }): void {
  const draw = () => {
    const sm = model.get('summary') as IReportSummary | null;
    el.replaceChildren(...(sm ? [content(sm, el, tryControl(model))] : []));
    if (sm && drawable(sm)) {
      hideStaticCopy(el);
    }
  };
  draw();
  model.on('change:summary', draw);
  model.on('change:try_offer', draw);
}

export default { render };

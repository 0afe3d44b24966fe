/**
 * Reports saved in a notebook, drawn by this extension's current report code.
 *
 * An executed notebook stores each report widget's state in its metadata: the summary (the
 * run's data) and the widget's own front-end code (`_esm`) of the day it ran. Drawn by that
 * copy, every notebook would show the report as it was then. Where this extension is installed
 * it draws a saved report itself, from the saved summary; the notebook's embedded copy draws only
 * where the extension is absent, or where the notebook is newer than the extension (its report
 * protocol is one this extension does not know). Untrusted notebooks are unchanged: no widget
 * renderer runs there, their saved static copy shows.
 */
import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { IReportSummary, drawable } from './report/summary';
import { content, hideStaticCopy } from './report/widget';

/** The output type of a widget view, and the notebook metadata key of the saved widget state. */
export const WIDGET_VIEW_MIME = 'application/vnd.jupyter.widget-view+json';
export const WIDGET_STATE_MIME = 'application/vnd.jupyter.widget-state+json';
/**
 * anywidget's `_anywidget_id` of the report widget (views/widget.py `ReportWidget`): how a report
 * saved before the protocol marker is recognised.
 */
export const REPORT_WIDGET_ID = 'jupyter_gpuprof.views.widget.ReportWidget';
/**
 * The newest saved-report protocol this code draws (views/widget.py `REPORT_PROTOCOL`; a test
 * holds the two to one value). A report saved before the marker existed reads as protocol 0.
 */
export const REPORT_PROTOCOL = 1;

/** A report widget's saved state: the run's summary and the protocol it was saved under. */
export interface ISavedReport {
  summary: IReportSummary;
  protocol: number;
}

type Json = Record<string, unknown>;

function obj(v: unknown): Json | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : null;
}

/**
 * The report saved under `modelId` in a notebook's `widgets` metadata, or null when that model
 * is not a saved report of this package (another widget, or a live one not saved yet).
 */
export function savedReport(widgets: unknown, modelId: string): ISavedReport | null {
  const models = obj(obj(obj(widgets)?.[WIDGET_STATE_MIME])?.state);
  const state = obj(obj(models?.[modelId])?.state);
  const summary = obj(state?.summary);
  if (!state || !summary) {
    return null;
  }
  const marker = state.report_protocol;
  if (typeof marker !== 'number' && state._anywidget_id !== REPORT_WIDGET_ID) {
    return null;
  }
  return {
    summary: summary as unknown as IReportSummary,
    protocol: typeof marker === 'number' ? marker : 0
  };
}

/** Whether this extension draws `saved` (else the notebook's own copy, which is newer, does). */
export function drawnHere(saved: ISavedReport): boolean {
  return saved.protocol <= REPORT_PROTOCOL;
}

/** The saved report drawn into `el` by today's code; its static copy above is hidden. */
export function drawSaved(saved: ISavedReport, el: HTMLElement): void {
  el.replaceChildren(content(saved.summary, el));
  el.dataset.gpuprofReport = 'extension';
  if (drawable(saved.summary)) {
    hideStaticCopy(el);
  }
}

/**
 * `prior`'s renderers, each drawing a saved report itself and handing any other widget (and a
 * report this code is too old for) to its own `renderModel`. The renderer stays the widget
 * manager's object, not a wrapper around it: the manager finds its renderers in the output area
 * to hand them the manager once the kernel's widgets are ready.
 */
function drawingSaved(
  prior: IRenderMime.IRendererFactory,
  widgets: () => unknown
): IRenderMime.IRendererFactory {
  const factory: IRenderMime.IRendererFactory = {
    safe: prior.safe,
    mimeTypes: prior.mimeTypes,
    defaultRank: prior.defaultRank,
    createRenderer: options => {
      const renderer = prior.createRenderer(options);
      const own = renderer.renderModel.bind(renderer);
      renderer.renderModel = async (model: IRenderMime.IMimeModel) => {
        const view = obj(model.data[WIDGET_VIEW_MIME]);
        const id = typeof view?.model_id === 'string' ? view.model_id : '';
        const saved = id ? savedReport(widgets(), id) : null;
        if (saved && drawnHere(saved)) {
          drawSaved(saved, renderer.node);
          return;
        }
        return own(model);
      };
      return renderer;
    }
  };
  WRAPS.add(factory);
  return factory;
}

/** The factories this module made (never wrapped again), and the registries it watches. */
const WRAPS = new WeakSet<IRenderMime.IRendererFactory>();
const WATCHED = new WeakSet<IRenderMimeRegistry>();

/** Whether `factory` renders widget views alone (the widget manager's, or its placeholder). */
function rendersViews(factory: IRenderMime.IRendererFactory): boolean {
  return (
    !WRAPS.has(factory) &&
    factory.mimeTypes.length === 1 &&
    factory.mimeTypes[0] === WIDGET_VIEW_MIME
  );
}

/**
 * Make a notebook's widget-view renderer draw saved reports (`widgets` reads the notebook's
 * `widgets` metadata when an output draws): the renderer registered now, and any the widget
 * manager registers later (it replaces its placeholder once the notebook is tracked, which may
 * come after this runs). Without a widget manager nothing changes: no widget view draws there.
 */
export function drawSavedReports(rendermime: IRenderMimeRegistry, widgets: () => unknown): void {
  if (WATCHED.has(rendermime)) {
    return;
  }
  WATCHED.add(rendermime);
  const current = rendermime.getFactory(WIDGET_VIEW_MIME);
  if (current && rendersViews(current)) {
    rendermime.addFactory(drawingSaved(current, widgets), rendermime.getRank(WIDGET_VIEW_MIME));
  }
  const add = rendermime.addFactory.bind(rendermime);
  rendermime.addFactory = (factory: IRenderMime.IRendererFactory, rank?: number) =>
    add(rendersViews(factory) ? drawingSaved(factory, widgets) : factory, rank);
}

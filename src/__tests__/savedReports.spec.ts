/// <reference types="node" />
/**
 * A report saved in a notebook draws with this extension's current code, from the saved summary,
 * never with the widget code saved beside it; other widgets, and reports saved under a protocol
 * newer than this code, still go to the widget manager.
 */
import * as fs from 'fs';
import * as path from 'path';

import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import {
  REPORT_PROTOCOL,
  REPORT_WIDGET_ID,
  WIDGET_STATE_MIME,
  WIDGET_VIEW_MIME,
  drawSavedReports,
  drawnHere,
  savedReport
} from '../savedReports';

const REPO = path.join(__dirname, '..', '..');
const OLD = path.join(REPO, 'ui-tests', 'fixtures', 'old_widget_report.ipynb');

interface INotebook {
  metadata: {
    widgets: Record<string, { state: Record<string, { state: Record<string, unknown> }> }>;
  };
  cells: { outputs?: { data?: Record<string, { model_id?: string }> }[] }[];
}

function oldNotebook(): INotebook {
  return JSON.parse(fs.readFileSync(OLD, 'utf8')) as INotebook;
}

/** The model id of the notebook's one widget output. */
function viewId(nb: INotebook): string {
  for (const cell of nb.cells) {
    for (const out of cell.outputs ?? []) {
      const id = out.data?.[WIDGET_VIEW_MIME]?.model_id;
      if (id) {
        return id;
      }
    }
  }
  throw new Error('no widget output');
}

/** A rendermime registry with the widget manager's factory in it, as JupyterLab's holds. */
function registry(prior?: IRenderMime.IRendererFactory) {
  const factories = new Map<string, IRenderMime.IRendererFactory>();
  const ranks = new Map<string, number | undefined>();
  if (prior) {
    factories.set(WIDGET_VIEW_MIME, prior);
    ranks.set(WIDGET_VIEW_MIME, -10);
  }
  const fake = {
    getFactory: (mime: string) => factories.get(mime),
    getRank: (mime: string) => ranks.get(mime),
    addFactory: (f: IRenderMime.IRendererFactory, rank?: number) => {
      f.mimeTypes.forEach(m => {
        factories.set(m, f);
        ranks.set(m, rank);
      });
    }
  };
  return { fake: fake as unknown as IRenderMimeRegistry, factories, ranks };
}

/** A widget manager stand-in: its renderer writes which model it was asked to draw. */
function managerFactory(): IRenderMime.IRendererFactory & { drawn: string[] } {
  const drawn: string[] = [];
  return {
    drawn,
    safe: false,
    mimeTypes: [WIDGET_VIEW_MIME],
    createRenderer: () => {
      const w = new Widget() as Widget & IRenderMime.IRenderer;
      w.renderModel = async model => {
        const id = (model.data[WIDGET_VIEW_MIME] as { model_id: string }).model_id;
        drawn.push(id);
        w.node.textContent = `embedded copy of ${id}`;
      };
      return w;
    }
  };
}

function mimeModel(id: string): IRenderMime.IMimeModel {
  return {
    trusted: true,
    data: { [WIDGET_VIEW_MIME]: { model_id: id, version_major: 2, version_minor: 1 } },
    metadata: {},
    setData: () => undefined
  };
}

describe('reports saved in a notebook', () => {
  it('recognises the old fixture report, saved before the protocol marker', () => {
    const nb = oldNotebook();
    const id = viewId(nb);
    const saved = savedReport(nb.metadata.widgets, id);
    expect(saved?.protocol).toBe(0);
    expect(saved?.summary.verdict.label).toBe('precision');
    expect(drawnHere(saved!)).toBe(true);
    // the saved state really carries an old copy of the widget's code
    const state = nb.metadata.widgets[WIDGET_STATE_MIME].state[id].state;
    expect(String(state._esm).length).toBeGreaterThan(1000);
    expect(state.report_protocol).toBeUndefined();
  });

  it('ignores other widgets and ids not saved', () => {
    const nb = oldNotebook();
    const others = Object.keys(nb.metadata.widgets[WIDGET_STATE_MIME].state).filter(
      id => id !== viewId(nb)
    );
    expect(others.length).toBe(1);
    expect(savedReport(nb.metadata.widgets, others[0])).toBeNull();
    expect(savedReport(nb.metadata.widgets, 'not-saved')).toBeNull();
    expect(savedReport(undefined, viewId(nb))).toBeNull();
  });

  it('leaves a report saved under a newer protocol to its own copy', () => {
    const state = { summary: { verdict: {} }, report_protocol: REPORT_PROTOCOL + 1 };
    const widgets = { [WIDGET_STATE_MIME]: { state: { m: { state } } } };
    const saved = savedReport(widgets, 'm')!;
    expect(saved.protocol).toBe(REPORT_PROTOCOL + 1);
    expect(drawnHere(saved)).toBe(false);
    state.report_protocol = REPORT_PROTOCOL;
    expect(drawnHere(savedReport(widgets, 'm')!)).toBe(true);
  });

  it('draws a saved report with the current code and hands other widgets on', async () => {
    const nb = oldNotebook();
    const manager = managerFactory();
    const { fake, factories, ranks } = registry(manager);
    drawSavedReports(fake, () => nb.metadata.widgets);
    const wrapper = factories.get(WIDGET_VIEW_MIME)!;
    expect(wrapper).not.toBe(manager);
    expect(ranks.get(WIDGET_VIEW_MIME)).toBe(-10);

    const options = { mimeType: WIDGET_VIEW_MIME } as IRenderMime.IRendererOptions;
    const report = wrapper.createRenderer(options);
    await report.renderModel(mimeModel(viewId(nb)));
    expect(manager.drawn).toEqual([]);
    expect(report.node.querySelector('.gpuprof-w')).not.toBeNull();
    expect(report.node.dataset.gpuprofReport).toBe('extension');
    expect(report.node.querySelectorAll('[role="tab"]').length).toBe(6);
    expect(report.node.textContent).toContain('Verdict: precision');

    const other = wrapper.createRenderer(options);
    await other.renderModel(mimeModel('some-other-widget'));
    expect(manager.drawn).toEqual(['some-other-widget']);
    expect(other.node.textContent).toBe('embedded copy of some-other-widget');
  });

  it('also draws through a widget manager registered later', async () => {
    const nb = oldNotebook();
    const { fake, factories, ranks } = registry();
    drawSavedReports(fake, () => nb.metadata.widgets);
    expect(factories.size).toBe(0); // nothing to draw widget views with yet
    const manager = managerFactory();
    fake.addFactory(manager, -10);
    const wrapper = factories.get(WIDGET_VIEW_MIME)!;
    expect(wrapper).not.toBe(manager);
    expect(ranks.get(WIDGET_VIEW_MIME)).toBe(-10);
    const report = wrapper.createRenderer({
      mimeType: WIDGET_VIEW_MIME
    } as IRenderMime.IRendererOptions);
    await report.renderModel(mimeModel(viewId(nb)));
    expect(manager.drawn).toEqual([]);
    expect(report.node.dataset.gpuprofReport).toBe('extension');
    // other renderers are left alone, and watching twice wraps nothing twice
    const text = { safe: true, mimeTypes: ['text/plain'], createRenderer: manager.createRenderer };
    fake.addFactory(text, 120);
    expect(factories.get('text/plain')).toBe(text);
    drawSavedReports(fake, () => nb.metadata.widgets);
    fake.addFactory(manager, -10);
    const again = factories.get(WIDGET_VIEW_MIME)!.createRenderer({
      mimeType: WIDGET_VIEW_MIME
    } as IRenderMime.IRendererOptions);
    await again.renderModel(mimeModel('x'));
    expect(manager.drawn).toEqual(['x']);
  });

  it('agrees with the Python widget on its id and protocol', () => {
    const py = fs.readFileSync(path.join(REPO, 'jupyter_gpuprof', 'views', 'widget.py'), 'utf8');
    expect(Number(/^REPORT_PROTOCOL = (\d+)$/m.exec(py)?.[1])).toBe(REPORT_PROTOCOL);
    const [module, cls] = [
      REPORT_WIDGET_ID.replace(/\.[^.]+$/, ''),
      REPORT_WIDGET_ID.split('.').pop()
    ];
    expect(module).toBe('jupyter_gpuprof.views.widget');
    expect(py).toMatch(new RegExp(`^class ${cls}\\(anywidget\\.AnyWidget\\)`, 'm'));
  });
});

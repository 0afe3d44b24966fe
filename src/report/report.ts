/**
 * The whole report: head, toolbar, tab strip and six panels. Shared by the notebook widget
 * (`widget.ts`) and the sidebar's run view, so both show the same thing from one summary.
 */
import { BasisKind, IBasis, makeBasis } from './basis';
import { uniqueId } from './chartData';
import { paletteCss } from './colors';
import { h } from './dom';
import { IReportEnv } from './env';
import { header } from './header';
import { kernelsPanel } from './kernels';
import { nextPanel } from './next';
import { opsPanel } from './ops';
import { OPEN_STEP_EVENT } from './stepchart';
import { stepsPanel } from './steps';
import { IReportSummary } from './summary';
import { SHOW_STEP_EVENT } from './timeline';
import { timelinePanel } from './timelinePanel';
import { toolbar } from './toolbar';
import { transfersPanel } from './transfers';

type PanelBuilder = (sm: IReportSummary, basis: IBasis, env: IReportEnv) => HTMLElement;

/** Tab id, tab label and builder of each panel, in tab order. */
export const PANELS: [string, string, PanelBuilder][] = [
  ['steps', 'Step time', stepsPanel],
  ['timeline', 'GPU timeline', timelinePanel],
  ['ops', 'Operators', opsPanel],
  ['kernels', 'Kernels', kernelsPanel],
  ['transfers', 'Transfers & syncs', transfersPanel],
  ['next', 'Next steps', nextPanel]
];

/** The ids that tie tab `id` to its panel (`aria-controls`, `aria-labelledby`) in report `uid`. */
export function tabIds(uid: string, id: string): { tab: string; panel: string } {
  return { tab: `${uid}-tab-${id}`, panel: `${uid}-panel-${id}` };
}

/**
 * The tab strip: click or arrow keys (Left/Right/Home/End) pick a panel, as a tablist should;
 * each tab names the panel it controls.
 */
function tabStrip(
  uid: string,
  ids: string[],
  labels: string[],
  show: (id: string) => void
): HTMLDivElement {
  const tabs = h('div', { class: 'gpuprof-w-tabs', role: 'tablist', 'aria-label': 'Report' });
  ids.forEach((id, i) => {
    const tab = h(
      'button',
      {
        type: 'button',
        role: 'tab',
        class: 'gpuprof-w-tab',
        id: tabIds(uid, id).tab,
        'aria-controls': tabIds(uid, id).panel,
        onclick: () => show(id)
      },
      labels[i]
    );
    tab.dataset.panel = id;
    tab.addEventListener('keydown', ev => {
      const moves: Record<string, number> = {
        ArrowRight: i + 1,
        ArrowLeft: i - 1,
        Home: 0,
        End: ids.length - 1
      };
      if (ev.key in moves) {
        ev.preventDefault();
        const next = (moves[ev.key] + ids.length) % ids.length;
        show(ids[next]);
        (tabs.children[next] as HTMLElement).focus();
      }
    });
    tabs.append(tab);
  });
  return tabs;
}

/**
 * The report's root element (`.gpuprof-w`), "Step time" shown first and times per step.
 * `env` carries what the mounting page can do (server, JupyterLab). The charts are drawn here,
 * in the theme's colours, from the summary alone.
 */
export function renderReport(sm: IReportSummary, env: IReportEnv = {}): HTMLDivElement {
  const root = h('div', { class: 'gpuprof-w' });
  const uid = uniqueId('gpuprof-report');
  let current = 'steps';
  let kind: BasisKind = 'step';
  let showPanel: (id: string) => void = () => undefined;
  // a step chart's dot opens its step in the timeline: switch tabs, then let the timeline zoom
  root.addEventListener(OPEN_STEP_EVENT, ev => {
    showPanel('timeline');
    root
      .querySelector('.gpuprof-w-timeline')
      ?.dispatchEvent(
        new CustomEvent(SHOW_STEP_EVENT, { detail: (ev as CustomEvent<{ index: number }>).detail })
      );
  });
  const draw = () => {
    const basis = makeBasis(sm, kind);
    const panels = new Map<string, HTMLElement>();
    const show = (id: string) => {
      current = id;
      panels.forEach((panel, pid) => {
        panel.hidden = pid !== id;
      });
      for (const tab of Array.from(tabs.children) as HTMLElement[]) {
        const on = tab.dataset.panel === id;
        tab.setAttribute('aria-selected', String(on));
        tab.tabIndex = on ? 0 : -1;
      }
    };
    const tabs = tabStrip(
      uid,
      PANELS.map(p => p[0]),
      PANELS.map(p => p[1]),
      show
    );
    const body = h('div', { class: 'gpuprof-w-body' });
    for (const [id, , build] of PANELS) {
      const panel = h(
        'div',
        {
          class: `gpuprof-w-panel gpuprof-w-panel-${id}`,
          role: 'tabpanel',
          id: tabIds(uid, id).panel,
          'aria-labelledby': tabIds(uid, id).tab,
          tabindex: 0
        },
        build(sm, basis, env)
      );
      panels.set(id, panel);
      body.append(panel);
    }
    const title = sm.source.name || sm.source.run_id || 'gpuprof trace';
    const setBasis = (k: BasisKind) => {
      kind = k;
      draw();
    };
    root.replaceChildren(
      h('style', {}, paletteCss()),
      header(sm),
      toolbar(sm.source.run_id, title, env, basis, setBasis),
      tabs,
      body
    );
    showPanel = show;
    show(current);
  };
  draw();
  return root;
}

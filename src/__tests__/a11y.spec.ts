/**
 * The report to assistive technology: tabs tied to their panels, buttons named by what they do,
 * tables with captions, and every chart with its numbers as a table (its data alternative).
 */
import { renderReport } from '../report/report';
import { stepSeries } from '../report/stepchart';
import { realSummary, summaryWith } from './reportFixture';

/** Two reports on one page, attached so that ids resolve as they would in a notebook. */
function twoReports(): HTMLElement[] {
  document.body.replaceChildren();
  const reports = [renderReport(realSummary()), renderReport(realSummary())];
  document.body.append(...reports);
  return reports;
}

describe('report accessibility', () => {
  it('ties each tab to its panel and back, with ids unique on the page', () => {
    const [a, b] = twoReports();
    for (const root of [a, b]) {
      const tabs = Array.from(root.querySelectorAll<HTMLElement>('[role="tab"]'));
      expect(tabs.length).toBe(6);
      for (const tab of tabs) {
        const panel = document.getElementById(tab.getAttribute('aria-controls') ?? '');
        expect(panel?.getAttribute('role')).toBe('tabpanel');
        expect(root.contains(panel)).toBe(true);
        expect(panel?.getAttribute('aria-labelledby')).toBe(tab.id);
      }
    }
    const ids = Array.from(document.querySelectorAll('[id]')).map(e => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('moves between tabs with the arrow keys, Home and End', () => {
    const [root] = twoReports();
    const tabs = Array.from(root.querySelectorAll<HTMLElement>('[role="tab"]'));
    const selected = () => tabs.findIndex(t => t.getAttribute('aria-selected') === 'true');
    const press = (key: string) =>
      tabs[selected()].dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    expect(selected()).toBe(0);
    press('ArrowRight');
    expect(selected()).toBe(1);
    expect(document.activeElement).toBe(tabs[1]);
    press('End');
    expect(selected()).toBe(5);
    press('ArrowRight');
    expect(selected()).toBe(0);
    press('ArrowLeft');
    expect(selected()).toBe(5);
    const panel = document.getElementById(tabs[5].getAttribute('aria-controls')!)!;
    expect(panel.hidden).toBe(false);
    expect(tabs.filter(t => t.tabIndex === 0)).toEqual([tabs[5]]);
  });

  it('names each Copy button by the fix it copies', () => {
    // two findings of the same shape: only their titles tell their Copy buttons apart
    const [real] = realSummary('ddp_workload_comm').findings;
    const sm = summaryWith({
      findings: [
        { ...real, id: 'one', title: 'Syncs stall the GPU' },
        { ...real, id: 'two', title: 'Copies are pageable' }
      ]
    });
    const root = renderReport(sm);
    const names = Array.from(root.querySelectorAll('button.gpuprof-w-copy')).map(b =>
      b.getAttribute('aria-label')
    );
    expect(names.length).toBeGreaterThanOrEqual(sm.findings.length);
    expect(new Set(names).size).toBe(names.length);
    sm.findings.forEach(f => expect(names).toContain(`Copy fix for ${f.title}`));
  });

  it('gives every table a caption', () => {
    const root = renderReport(realSummary());
    const tables = Array.from(root.querySelectorAll('table'));
    expect(tables.length).toBeGreaterThan(3);
    for (const table of tables) {
      expect(table.querySelector(':scope > caption')?.textContent?.trim()).toBeTruthy();
    }
  });

  it('gives every chart its numbers as a table', () => {
    const sm = realSummary();
    const [root] = twoReports();
    const charts = Array.from(root.querySelectorAll('[data-chart]'));
    expect(charts.map(c => c.getAttribute('role'))).toEqual(['group', 'img']);
    for (const chart of charts) {
      const data = document.getElementById(chart.getAttribute('aria-details') ?? '');
      expect(data?.querySelector('table caption')).not.toBeNull();
    }
    // the step times open for anyone; the timeline's tables are for screen readers only
    expect(document.getElementById(charts[0].getAttribute('aria-details')!)?.tagName).toBe(
      'DETAILS'
    );
    expect(document.getElementById(charts[1].getAttribute('aria-details')!)?.className).toBe(
      'gpuprof-w-sr'
    );
    const steps = document.getElementById(charts[0].getAttribute('aria-details')!)!;
    const plotted = stepSeries(sm.steps).reduce((n, x) => n + x.values.length, 0);
    expect(steps.querySelectorAll('tbody tr').length).toBe(plotted);
    const timeline = document.getElementById(charts[1].getAttribute('aria-details')!)!;
    const lanes = timeline.querySelector('table')!;
    expect(lanes.querySelectorAll('tbody tr').length).toBe(sm.timeline!.lanes.length);
    expect(lanes.textContent).toContain(sm.timeline!.lanes[0].label);
  });
});

/// <reference types="node" />
/**
 * Every report saved in a committed notebook still draws with today's widget code: a notebook
 * keeps the summary of the version that executed it, older schema versions included.
 */
import * as fs from 'fs';
import * as path from 'path';

import { renderReport } from '../report/report';
import { IReportSummary } from '../report/summary';

const NOTEBOOKS = path.join(__dirname, '..', '..', 'notebooks');

function savedSummaries(): [string, IReportSummary][] {
  const found: [string, IReportSummary][] = [];
  for (const name of fs.readdirSync(NOTEBOOKS).filter(n => n.endsWith('.ipynb'))) {
    const nb = JSON.parse(fs.readFileSync(path.join(NOTEBOOKS, name), 'utf8')) as {
      metadata?: {
        widgets?: Record<string, { state?: Record<string, { state?: { summary?: unknown } }> }>;
      };
    };
    const states = nb.metadata?.widgets?.['application/vnd.jupyter.widget-state+json']?.state ?? {};
    Object.entries(states).forEach(([id, model]) => {
      const summary = model.state?.summary;
      if (summary && typeof summary === 'object') {
        found.push([`${name} ${id}`, summary as IReportSummary]);
      }
    });
  }
  return found;
}

describe('reports saved in committed notebooks', () => {
  const saved = savedSummaries();
  it('finds them', () => {
    expect(saved.length).toBeGreaterThan(5);
  });
  it.each(saved)('%s draws its verdict', (_name, summary) => {
    const root = renderReport(summary);
    expect(root.textContent).toContain('Verdict');
  });
});

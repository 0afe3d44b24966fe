/// <reference types="node" />
/**
 * Every report saved in a committed notebook still shows with today's widget code: a notebook
 * keeps the summary of the version that executed it; one too old to draw says so in a line and
 * leaves its saved static copy visible.
 */
import * as fs from 'fs';
import * as path from 'path';

import { IReportSummary, drawable } from '../report/summary';
import { content } from '../report/widget';

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
  it.each(saved)('%s draws its verdict, or says it is too old to', (_name, summary) => {
    const root = content(summary, document.createElement('div'));
    if (drawable(summary)) {
      expect(root.className).toBe('gpuprof-w');
      expect(root.textContent).toContain('Verdict');
    } else {
      expect(summary.schema_version).toBe(1);
      expect(root.textContent).toContain('saved by an older jupyter_gpuprof (summary version 1)');
    }
  });
  it('draws all but the reports written before the table basis', () => {
    const old = saved.filter(([, s]) => !drawable(s)).map(([name]) => name.split(' ')[0]);
    expect(new Set(old)).toEqual(new Set(['frameworks_gpu.ipynb']));
    expect(saved.length - old.length).toBeGreaterThan(15);
  });
});

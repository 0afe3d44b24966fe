/// <reference types="node" />
/**
 * Badge colours in the sidebar and the compare cards: every text/background pair, in the light
 * and the dark theme, reads at WCAG AA (4.5:1), and every badge rule takes both colours of one
 * pair (a background alone would leave the theme's white text on it: 1.23:1 on #ffe0b2).
 */
import * as fs from 'fs';
import * as path from 'path';

const CSS = fs.readFileSync(path.join(__dirname, '..', '..', 'style', 'base.css'), 'utf8');

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
}

/** WCAG contrast ratio of two `#rrggbb` colours. */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** The `--jp-gpuprof-badge-*` variables a block of base.css sets. */
function badgeVars(selector: string): Record<string, string> {
  const start = CSS.indexOf(`${selector} {`);
  expect(start).toBeGreaterThanOrEqual(0);
  const block = CSS.slice(start, CSS.indexOf('}', start));
  const vars: Record<string, string> = {};
  for (const m of block.matchAll(/--jp-gpuprof-badge-(\w+)-(bg|fg):\s*(#[0-9a-f]{6})/gi)) {
    vars[`${m[1]}-${m[2]}`] = m[3];
  }
  return vars;
}

/** The declarations of the rule whose selector list names `cls`. */
function ruleOf(cls: string): string {
  const m = new RegExp(`\\.${cls}[,\\s][^{]*\\{([^}]*)\\}`).exec(CSS);
  return m ? m[1] : '';
}

describe('badge colours', () => {
  it('tells the wcag ratio of known pairs', () => {
    expect(contrast('#ffffff', '#000000')).toBeCloseTo(21, 5);
    expect(contrast('#ffe0b2', '#ffffff')).toBeCloseTo(1.27, 2); // the dark theme's old badge
  });

  for (const [theme, selector] of [
    ['light', ':root'],
    ['dark', "[data-jp-theme-light='false']"]
  ]) {
    it(`reads at 4.5:1 or more in the ${theme} theme`, () => {
      const vars = badgeVars(selector);
      const kinds = ['plain', 'warn', 'good'];
      for (const kind of kinds) {
        expect(contrast(vars[`${kind}-fg`], vars[`${kind}-bg`])).toBeGreaterThanOrEqual(4.5);
      }
    });
  }

  it('gives every badge both colours of one pair', () => {
    const badges: [string, string][] = [
      ['jp-gpuprof-badge', 'plain'],
      ['jp-gpuprof-badge-precision', 'warn'],
      ['jp-gpuprof-badge-input', 'warn'],
      ['jp-gpuprof-run-warning', 'warn'],
      ['jp-gpuprof-verdict-unreliable', 'warn'],
      ['jp-gpuprof-verdict-significant', 'good'],
      ['jp-gpuprof-verdict-noise', 'plain']
    ];
    for (const [cls, kind] of badges) {
      const rule = ruleOf(cls);
      expect({ cls, bg: rule.includes(`background: var(--jp-gpuprof-badge-${kind}-bg)`) }).toEqual({
        cls,
        bg: true
      });
      expect({ cls, fg: rule.includes(`color: var(--jp-gpuprof-badge-${kind}-fg)`) }).toEqual({
        cls,
        fg: true
      });
    }
  });
});

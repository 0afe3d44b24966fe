import {
  BACKGROUNDS,
  COLOR_KEYS,
  DARK,
  LIGHT,
  color,
  contrast,
  paletteCss
} from '../report/colors';
import { MIN_DELTA_E } from '../generated/palette';
import { deltaE2000, lab } from './ciede2000';

describe('report palette', () => {
  it('computes WCAG contrast ratios', () => {
    expect(contrast('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrast('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
  });

  it.each(COLOR_KEYS)('reads %s at 4.5:1 or better on both themes', key => {
    expect(contrast(LIGHT[key], BACKGROUNDS.light)).toBeGreaterThanOrEqual(4.5);
    expect(contrast(DARK[key], BACKGROUNDS.dark)).toBeGreaterThanOrEqual(4.5);
  });

  it('turns the palettes into theme-switched CSS variables', () => {
    const css = paletteCss();
    expect(css).toContain(`--gpuprof-c-input:${LIGHT.input};`);
    expect(css).toContain(`[data-jp-theme-light='false'] .gpuprof-w{`);
    expect(css).toContain(`--gpuprof-c-input:${DARK.input};`);
    expect(color('sync')).toBe('var(--gpuprof-c-sync)');
    expect(color('nope')).toContain('--jp-ui-font-color2');
  });

  it('computes CIEDE2000 as its authors published it', () => {
    // pairs 1, 7 and 17 of Sharma, Wu and Dalal's test data
    expect(deltaE2000([50, 2.6772, -79.7751], [50, 0, -82.7485])).toBeCloseTo(2.0425, 4);
    expect(deltaE2000([50, 0, 0], [50, -1, 2])).toBeCloseTo(2.3669, 4);
    expect(deltaE2000([50, 2.5, 0], [73, 25, -18])).toBeCloseTo(27.1492, 4);
    expect(deltaE2000(lab('#000000'), lab('#ffffff'))).toBeCloseTo(100, 0);
  });

  const pairs = COLOR_KEYS.flatMap((a, i) => COLOR_KEYS.slice(i + 1).map(b => [a, b]));
  it.each(pairs)('tells %s from %s at a glance on both themes', (a, b) => {
    // phases (forward, backward, ...) never share a hue with idle causes (launch, transfer, ...)
    expect(deltaE2000(lab(LIGHT[a]), lab(LIGHT[b]))).toBeGreaterThanOrEqual(MIN_DELTA_E);
    expect(deltaE2000(lab(DARK[a]), lab(DARK[b]))).toBeGreaterThanOrEqual(MIN_DELTA_E);
  });
});

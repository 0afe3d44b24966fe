import {
  BACKGROUNDS,
  COLOR_KEYS,
  DARK,
  LIGHT,
  color,
  contrast,
  paletteCss
} from '../report/colors';

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
});

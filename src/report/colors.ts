/**
 * Colours of gap causes, phases and lanes, one palette per JupyterLab theme (generated from
 * `views/palette.py` into `src/generated/palette.ts`), each colour chosen
 * to read at 4.5:1 or better on its theme's background (tested in colors.spec.ts). The palette
 * becomes CSS variables (`paletteCss`) so a theme switch recolours a drawn report.
 */

import { COLOR_KEYS, DARK_COLORS, LIGHT_COLORS } from '../generated/palette';

/** Backgrounds the palettes are checked against (JupyterLab's light and dark layout colour 0). */
export const BACKGROUNDS = { light: '#ffffff', dark: '#111111' };

export { COLOR_KEYS };
/** Colour keys (generated): gap causes, event phases, lane kinds. */
export type ColorKey = (typeof COLOR_KEYS)[number];

/** Light and dark palettes: defined once in `views/palette.py` (the static charts use the light one). */
export const LIGHT: Record<ColorKey, string> = LIGHT_COLORS;
export const DARK: Record<ColorKey, string> = DARK_COLORS;

/** `var(--gpuprof-c-<key>)`: the theme's colour of `key` (grey for an unknown key). */
export function color(key: string): string {
  return (COLOR_KEYS as readonly string[]).includes(key)
    ? `var(--gpuprof-c-${key})`
    : 'var(--jp-ui-font-color2, #666)';
}

/** The CSS that defines every `--gpuprof-c-*` variable, light by default, dark under Lab's dark theme. */
export function paletteCss(): string {
  const vars = (p: Record<ColorKey, string>) =>
    COLOR_KEYS.map(k => `--gpuprof-c-${k}:${p[k]};`).join('');
  return (
    `.gpuprof-w{${vars(LIGHT)}}` +
    `[data-jp-theme-light='false'] .gpuprof-w{${vars(DARK)}}` +
    `@media (prefers-color-scheme: dark){body:not([data-jp-theme-light]) .gpuprof-w{${vars(DARK)}}}`
  );
}

/** WCAG relative luminance of `#rrggbb`. */
export function luminance(hex: string): number {
  const lin = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(1) + 0.7152 * lin(3) + 0.0722 * lin(5);
}

/** WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

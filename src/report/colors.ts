/**
 * Colours of gap causes, phases and lanes, one palette per JupyterLab theme, each colour chosen
 * to read at 4.5:1 or better on its theme's background (tested in colors.spec.ts). The palette
 * becomes CSS variables (`paletteCss`) so a theme switch recolours a drawn report.
 */

/** Backgrounds the palettes are checked against (JupyterLab's light and dark layout colour 0). */
export const BACKGROUNDS = { light: '#ffffff', dark: '#111111' };

/** Colour keys: gap causes, event phases, lane kinds. */
export const COLOR_KEYS = [
  'input',
  'transfer',
  'sync',
  'launch',
  'host',
  'forward',
  'backward',
  'optimizer',
  'data',
  'other',
  'ranges',
  'cpu',
  'gpu'
] as const;
export type ColorKey = (typeof COLOR_KEYS)[number];

/** Light theme: dark, saturated colours. */
export const LIGHT: Record<ColorKey, string> = {
  input: '#a84300',
  transfer: '#7b2d9b',
  sync: '#b0281a',
  launch: '#1f5f9e',
  host: '#5c6770',
  forward: '#1f5f9e',
  backward: '#7b2d9b',
  optimizer: '#a84300',
  data: '#0f7040',
  other: '#5c6770',
  ranges: '#0b6e5c',
  cpu: '#2a5db0',
  gpu: '#1e7034'
};

/** Dark theme: light, saturated colours. */
export const DARK: Record<ColorKey, string> = {
  input: '#f5a05a',
  transfer: '#c99af0',
  sync: '#ff8a7a',
  launch: '#7fb8f0',
  host: '#a9b4bd',
  forward: '#7fb8f0',
  backward: '#c99af0',
  optimizer: '#f5a05a',
  data: '#6fd6a0',
  other: '#a9b4bd',
  ranges: '#5fd0bc',
  cpu: '#8fb0f0',
  gpu: '#7ad08c'
};

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

/// <reference types="node" />
/**
 * The widget writes durations and sizes by the one spec (jupyter_gpuprof/units.py): the table
 * Python committed in tests/data/expected/units.json reads the same here.
 */
import * as fs from 'fs';
import * as path from 'path';

import { count, gb, ms, pct } from '../report/dom';

const TABLE = JSON.parse(
  fs.readFileSync(
    path.join(__dirname, '..', '..', 'tests', 'data', 'expected', 'units.json'),
    'utf8'
  )
) as {
  ms: [number, string][];
  gb: [number, string][];
  pct: [number, number, string][];
  count: [number, string][];
};

describe('one number format', () => {
  it.each(TABLE.ms)('writes %p ms as Python does', (value, text) => {
    expect(ms(value)).toBe(text);
  });

  it.each(TABLE.pct)('writes %p%% with %p decimals as Python does', (value, digits, text) => {
    expect(pct(value, digits)).toBe(text);
  });

  it.each(TABLE.count)('writes a count of %p per step as Python does', (value, text) => {
    expect(count(value)).toBe(text);
  });

  it.each(TABLE.gb)('writes %p bytes as Python does', (value, text) => {
    expect(gb(value)).toBe(text);
  });
});

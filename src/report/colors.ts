/**
 * Colours of gap causes and timeline lanes: the Python views' own (`views/palette.py`),
 * generated into `src/generated/palette.ts` so the widget and the static charts agree.
 */
export { CAUSE_COLORS, LANE_COLORS } from '../generated/palette';

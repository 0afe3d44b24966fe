/** Colours of gap causes and timeline lanes; the same values as views/svg.py's static charts. */

/** Fill of each GPU idle-gap cause. */
export const CAUSE_COLORS: Record<string, string> = {
  input: '#e67e22',
  transfer: '#8e44ad',
  sync: '#c0392b',
  launch: '#2980b9',
  host: '#7f8c8d'
};

/** Fill of each timeline lane kind. */
export const LANE_COLORS: Record<string, string> = {
  ranges: '#16a085',
  cpu: '#3498db',
  sync: '#c0392b',
  gpu: '#27ae60'
};

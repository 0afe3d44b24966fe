/**
 * The what-if parts of a report as the text report writes them (views/whatif_text.py): what
 * the step costs, the GPU conditions it ran under, each finding's predicted step, what its
 * tries measured, the fixes tried and the one-time costs. The figures are the summary's; only
 * the wording is here, and tests/views/test_parity.py holds it to Python's.
 */
import { fig, gb, ms, pct, signedPct, us } from './dom';
import { IConditions, IFinding, IReportSummary, IStackResult, ITryResult } from './summary';

/** One line: the conditions a measurement ran under (`describe`). */
export function conditionsText(c: IConditions | null): string {
  if (!c || !c.available) {
    return `GPU conditions not recorded (${c?.reason || 'NVML not installed'})`;
  }
  let text =
    `SM clock ${fig(c.sm_clock_mhz?.min)}–${fig(c.sm_clock_mhz?.max)} MHz, ` +
    `${fig(c.temp_c?.max)} °C max, ${fig(c.power_w?.median)} W median`;
  if (c.throttle?.length) {
    text += `, throttle: ${c.throttle.join(', ')}`;
  }
  if (c.other_pids?.length) {
    text += `, ${c.other_pids.length} other process(es) on the GPU`;
  }
  return text;
}

/** What the idle share costs and the conditions of the baseline (`whatif_header`). */
export function whatifLines(sm: IReportSummary): string[] {
  const out: string[] = [];
  if (sm.cost?.headline) {
    out.push(sm.cost.headline);
  }
  if (sm.conditions) {
    out.push(`Conditions (baseline): ${conditionsText(sm.conditions)}`);
  }
  return out;
}

/** What the tries of a finding's fix measured, and which crashed (`measured_for`), or null. */
export function measuredFor(f: IFinding, tries: readonly ITryResult[]): string | null {
  const fixes = f.try_fixes ?? [];
  const mine = tries.filter(t => fixes.includes(t.fix));
  const done = mine.filter(t => typeof t.measured_gain_pct === 'number');
  const failed = mine.filter(t => t.error);
  if (!done.length && !failed.length) {
    return null;
  }
  const parts = [
    ...done.map(
      t => `--try ${t.fix} ${signedPct(t.measured_gain_pct)} (${t.change?.verdict ?? 'not judged'})`
    ),
    ...failed.map(
      t => `--try ${t.fix} crashed: ${t.error}` + (t.remedy ? ` (remedy: ${t.remedy})` : '')
    )
  ];
  return `${done.length ? 'Measured' : 'Tried'}: ${parts.join('; ')}`;
}

/** One try: measured against its prediction, or why it failed (`try_line`). */
export function tryLine(t: ITryResult): string[] {
  const fix = t.fix.padEnd(8);
  if (t.error) {
    return [
      `  ${fix} failed: ${t.error}`,
      ...(t.cause ? [`           why: ${t.cause}`] : []),
      ...(t.remedy ? [`           remedy: ${t.remedy}`] : [])
    ];
  }
  const ch = t.change;
  const ci =
    typeof ch?.ci_low_pct === 'number' && typeof ch.ci_high_pct === 'number'
      ? `95% CI [${signedPct(-ch.ci_high_pct)}, ${signedPct(-ch.ci_low_pct)}]`
      : '';
  const pred = t.predicted_gain_pct;
  let line =
    `  ${fix} ${ms(t.median_ms)}, measured gain ${signedPct(t.measured_gain_pct)} ${ci} ` +
    `${(ch?.verdict ?? '').toUpperCase()}`;
  if (typeof pred === 'number') {
    line += `; predicted ${pct(pred)}`;
  }
  if (t.peak_memory_bytes) {
    line += `; peak memory ${gb(t.peak_memory_bytes)}`;
  }
  if (typeof t.loss_rel_diff === 'number') {
    line += `; loss differs ${pct(100 * t.loss_rel_diff, 2)} over the first steps`;
  }
  const out = [line];
  if (ch?.unreliable_reasons?.length) {
    out.push(`           unreliable: ${ch.unreliable_reasons.join('; ')}`);
  }
  return out;
}

/** The heading of the stacked fixes (`stack_lines`' first line). */
export function stackHeading(st: IStackResult): string {
  return (
    'Fixes stacked (each tried on top of the ones kept before it; a kept fix holds the first ' +
    `losses within ${pct(100 * st.loss_tolerance)} of the original's):`
  );
}

/** The fixes stacked, all kept fixes together and the code that applies them (`stack_lines`,
 * below its heading). */
export function stackLines(st: IStackResult): string[] {
  const out: string[] = [];
  if (st.fixes.length) {
    out.push(`  ${st.fixes[0].padEnd(18)} kept first: the best gain measured alone`);
  }
  for (const t of st.steps ?? []) {
    const ch = t.change;
    const ci =
      typeof ch?.ci_low_pct === 'number' && typeof ch.ci_high_pct === 'number'
        ? ` 95% CI [${signedPct(-ch.ci_high_pct)}, ${signedPct(-ch.ci_low_pct)}]`
        : '';
    const what = t.error
      ? `failed: ${t.error}`
      : `${ms(t.median_ms)}, gain ${signedPct(t.measured_gain_pct)}${ci}`;
    out.push(`  ${t.fix.padEnd(18)} ${what}: ${t.why ?? ''}`);
  }
  if (st.skipped?.length) {
    out.push(`  not tried on top: ${st.skipped.join('; ')}`);
  }
  if (st.why_none) {
    out.push(`  ${st.why_none}`);
  }
  if (st.fixes.length && typeof st.median_ms === 'number') {
    out.push(
      `All kept fixes together (${st.fixes.join(' + ')}): ${ms(st.median_ms)} a step against ` +
        `${ms(st.control_median_ms)} for the control, ${pct(st.gain_pct, 1)} faster`
    );
  }
  return out;
}

/** The one-time costs the trace holds, kept out of the step (`one_time_lines`). */
export function oneTimeLines(sm: IReportSummary): string[] {
  const rows = sm.one_time ?? [];
  if (!rows.length) {
    return [];
  }
  const shown = rows.slice(0, 5).map(r => `${r.kind} ${r.name} ${us(r.dur_us)}`);
  const more = rows.length > 5 ? `; ${rows.length - 5} more` : '';
  return [`One-time costs in the trace (kept out of the step): ${shown.join('; ')}${more}`];
}

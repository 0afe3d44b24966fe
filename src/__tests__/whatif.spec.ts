/**
 * A finding's tries as the widget writes them (`measuredFor`), held to the same sentence as the
 * Python text report (`tests/views/test_whatif_text.py`): measured gains, then crashes.
 */
import { ITryResult } from '../report/summary';
import { measuredFor } from '../report/whatif';
import { realSummary } from './reportFixture';

function tryOf(overrides: Partial<ITryResult> & Pick<ITryResult, 'fix'>): ITryResult {
  const tries = realSummary().tries ?? [];
  const base = tries[0] ?? ({ fix: overrides.fix } as ITryResult);
  return {
    ...base,
    error: null,
    cause: null,
    remedy: null,
    measured_gain_pct: null,
    change: null,
    ...overrides
  };
}

describe('measuredFor', () => {
  const finding = { ...realSummary().findings[0], try_fixes: ['compile', 'graphs'] };

  it('says which tries crashed, with their cause', () => {
    const crashed = tryOf({ fix: 'graphs', error: 'RecursionError: maximum recursion depth' });
    expect(measuredFor(finding, [crashed])).toBe(
      'Tried: --try graphs crashed: RecursionError: maximum recursion depth'
    );
  });

  it('gives a known failure its remedy, from the summary', () => {
    const crashed = tryOf({
      fix: 'graphs',
      error: 'RecursionError: maximum recursion depth',
      remedy: 'compile the model inside the wrapper'
    });
    expect(measuredFor(finding, [crashed])).toBe(
      'Tried: --try graphs crashed: RecursionError: maximum recursion depth ' +
        '(remedy: compile the model inside the wrapper)'
    );
  });

  it('puts measured gains first', () => {
    const crashed = tryOf({ fix: 'graphs', error: 'RecursionError: maximum recursion depth' });
    const ran = tryOf({ fix: 'compile', measured_gain_pct: 37.0 });
    expect(measuredFor(finding, [crashed, ran])).toBe(
      'Measured: --try compile +37.0% (not judged); ' +
        '--try graphs crashed: RecursionError: maximum recursion depth'
    );
  });

  it('says nothing for a finding none of whose fixes was tried', () => {
    expect(measuredFor({ ...finding, try_fixes: ['amp'] }, [tryOf({ fix: 'graphs' })])).toBe(null);
  });
});

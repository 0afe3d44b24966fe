/** The "Next steps" panel: the verdict with its reasons, then each finding with a copyable fix. */
import { IBasis } from './basis';
import { h, pct } from './dom';
import { IReportEnv, ITryControl } from './env';
import { IFinding, IReportSummary, IStackResult, ITryResult } from './summary';
import {
  measuredFor,
  oneTimeLines,
  stackHeading,
  stackLines,
  tryLine,
  whatifLines
} from './whatif';

/**
 * A finding's cost and gain in the model's one line ("costs 0.19 ms of the 63.70 ms step;
 * predicted step 63.70 ms → 54.70 ms, gain ≈14%"); on the totals basis its cost over the
 * profiled steps follows.
 */
export function costLine(f: IFinding, basis: IBasis): string {
  const line = f.cost_line || `costs ${basis.ms(f.cost_ms)}, gain ≈${pct(f.expected_gain_pct)}`;
  return basis.kind === 'step' ? line : `${line} (costs ${basis.ms(f.cost_ms)}, ${basis.title})`;
}

/** Copy through a hidden textarea where the clipboard API is missing (plain-http servers). */
function fallbackCopy(text: string): void {
  const area = h('textarea', { style: 'position:fixed;opacity:0' });
  area.value = text;
  document.body.append(area);
  area.select();
  document.execCommand('copy');
  area.remove();
}

/** Put `text` on the clipboard and say so on `button` for a moment. */
export function copyText(text: string, button: HTMLButtonElement): void {
  const done = () => {
    button.textContent = 'Copied';
    setTimeout(() => {
      button.textContent = 'Copy';
    }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => {
      fallbackCopy(text);
      done();
    });
  } else {
    fallbackCopy(text);
    done();
  }
}

/** Where in the user's code a finding points (`finding.where`: file, line, code), or nothing. */
export function whereLine(f: IFinding): HTMLDivElement | null {
  const where = f.where;
  if (!where?.file) {
    return null;
  }
  const place = where.line ? `${where.file}:${where.line}` : where.file;
  return h(
    'div',
    { class: 'gpuprof-w-where' },
    'At ',
    h('code', {}, place),
    where.code ? h('pre', {}, where.code) : null
  );
}

/** What the tries of a finding's fix measured, beside its prediction. */
function measured(f: IFinding, tries: readonly ITryResult[]): HTMLDivElement | null {
  const line = measuredFor(f, tries);
  return line ? h('div', { class: 'gpuprof-w-measured' }, line) : null;
}

/** The fixes stacked on top of each other, all kept ones together, and their code to copy. */
export function stackBlock(st: IStackResult): HTMLDivElement {
  const box = h(
    'div',
    { class: 'gpuprof-w-stack' },
    h('h4', {}, stackHeading(st)),
    h('pre', { class: 'gpuprof-w-stack-lines' }, stackLines(st).join('\n'))
  );
  const code = st.code;
  if (code) {
    const button = h(
      'button',
      { class: 'gpuprof-w-copy', type: 'button', 'aria-label': 'Copy the stacked fixes' },
      'Copy'
    );
    button.addEventListener('click', () => copyText(code, button));
    box.append(
      h('div', {}, 'Apply them:'),
      h('div', { class: 'gpuprof-w-fix gpuprof-w-stack-code' }, button, h('pre', {}, code))
    );
  }
  return box;
}

/** How to measure a finding's fix before editing any code (the `--try` fixes that apply it). */
export function tryHint(f: IFinding): HTMLDivElement | null {
  const names = (f.try_fixes ?? []).join(',');
  if (!names) {
    return null;
  }
  return h(
    'div',
    { class: 'gpuprof-w-try' },
    'Measure it first: ',
    h('code', {}, `%%gpuprofile --try ${names}`),
    ' (a cell) or ',
    h('code', {}, `jupyter gpuprof run --try ${names} -- python train.py`),
    ' (a script)'
  );
}

/**
 * "Try the top fixes": runs them in the kernel (a Cancel while they run) with the progress
 * line beside it; the report redraws with what they measured.
 */
export function tryBar(tries: ITryControl): HTMLDivElement {
  const button = h('button', { class: 'gpuprof-w-trybutton', type: 'button' });
  const status = h('span', { class: 'gpuprof-w-trystatus', role: 'status' });
  const update = () => {
    const running = tries.running();
    button.textContent = running ? 'Cancel' : tries.label();
    status.textContent = tries.status();
  };
  button.addEventListener('click', () => (tries.running() ? tries.cancel() : tries.start()));
  tries.onChange(update);
  update();
  return h('div', { class: 'gpuprof-w-trybar' }, button, status);
}

/** Verdict, reasons and the ordered findings. */
export function nextPanel(sm: IReportSummary, basis: IBasis, env: IReportEnv = {}): HTMLDivElement {
  const v = sm.verdict;
  const box = h('div');
  if (env.tries) {
    box.append(tryBar(env.tries));
  }
  box.append(
    h(
      'div',
      { class: 'gpuprof-w-verdict' },
      h('b', {}, `Verdict: ${v.label}`),
      ` (${v.confidence} confidence)`,
      h('div', {}, v.summary),
      h('ul', {}, ...v.reasons.map(r => h('li', {}, r)))
    )
  );
  for (const line of whatifLines(sm)) {
    box.append(h('p', { class: 'gpuprof-w-whatif' }, line));
  }
  const findings = sm.findings;
  const tries = sm.tries ?? [];
  if (!findings.length) {
    box.append(h('p', {}, 'No findings worth acting on.'));
  }
  const list = h('ol', { class: 'gpuprof-w-findings' });
  for (const f of findings) {
    const fix = f.fix;
    const button = h(
      'button',
      { class: 'gpuprof-w-copy', type: 'button', 'aria-label': `Copy fix for ${f.title}` },
      'Copy'
    );
    button.addEventListener('click', () => copyText(fix, button));
    list.append(
      h(
        'li',
        {},
        h('b', {}, `[${f.category}] ${f.title}`),
        ' — ',
        h('span', { class: 'gpuprof-w-costline' }, costLine(f, basis)),
        f.driver ? h('div', { class: 'gpuprof-w-model' }, `Model: ${f.driver}`) : null,
        whereLine(f),
        h('div', { class: 'gpuprof-w-evidence' }, f.evidence),
        h('div', { class: 'gpuprof-w-fix' }, button, h('pre', {}, fix)),
        measured(f, tries),
        tryHint(f)
      )
    );
  }
  box.append(list);
  if (tries.length) {
    box.append(
      h('h4', {}, 'Fixes tried (measured like the baseline; ranked by measured gain)'),
      h(
        'pre',
        { class: 'gpuprof-w-tries' },
        ([] as string[]).concat(...tries.map(tryLine)).join('\n')
      )
    );
  }
  if (sm.stack) {
    box.append(stackBlock(sm.stack));
  }
  for (const line of oneTimeLines(sm)) {
    box.append(h('p', { class: 'gpuprof-w-onetime' }, line));
  }
  return box;
}

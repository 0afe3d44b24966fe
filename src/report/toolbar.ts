/**
 * The report's toolbar: hand the trace to Perfetto, download it, show the run in the sidebar,
 * compare it with another run, and switch the basis of every time. A button whose capability
 * the page lacks (no server, no JupyterLab) is disabled and says why.
 */
import { BasisKind, IBasis } from './basis';
import { h } from './dom';
import { IReportEnv } from './env';

/** Where Perfetto's UI lives; it accepts a trace by postMessage once it answers PING. */
export const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';

/** How long the check that Perfetto answers may take: a click may open a tab for ~5 s. */
export const PERFETTO_PROBE_MS = 3000;

/** What the status line says when Perfetto cannot be reached, and the local path instead. */
export const PERFETTO_OFFLINE =
  'Perfetto (ui.perfetto.dev) cannot be reached from this browser: no network to it. ' +
  'Use Download trace and open the file in a Perfetto UI you run locally, or in ' +
  'chrome://tracing (Load), which both work without a network.';

/**
 * Whether Perfetto's UI answers from this browser: an opaque `no-cors` request, so any answer
 * counts and only a network failure (offline, blocked, a timeout) says no.
 */
export async function perfettoReachable(
  fetcher: typeof fetch = (input, init) => fetch(input, init),
  ms: number = PERFETTO_PROBE_MS
): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    await fetcher(PERFETTO_ORIGIN, { mode: 'no-cors', cache: 'no-store', signal: abort.signal });
    return true;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Command ids the toolbar asks JupyterLab to run (registered by the extension, src/index.ts). */
export const TOOLBAR_COMMANDS = {
  showRun: 'jupyter-gpuprof:show-run',
  compareWith: 'jupyter-gpuprof:compare-with'
};

/**
 * Open Perfetto and post the trace as its docs describe: PING until it answers PONG, then
 * `{perfetto: {buffer, title}}`. The window opens at once (inside the click, so no popup
 * blocker stops it) while `trace` may still be loading. Returns a stop function (the pings end
 * on PONG or after 20 s).
 */
export function openInPerfetto(
  trace: ArrayBuffer | Promise<ArrayBuffer>,
  title: string,
  win: Window = window
): () => void {
  const ui = win.open(PERFETTO_ORIGIN);
  if (!ui) {
    return () => undefined;
  }
  let tries = 0;
  const timer = win.setInterval(() => {
    ui.postMessage('PING', PERFETTO_ORIGIN);
    if (++tries > 40) {
      stop();
    }
  }, 500);
  const onMessage = (ev: MessageEvent) => {
    if (ev.source === ui && ev.data === 'PONG') {
      stop();
      void Promise.resolve(trace).then(buffer =>
        ui.postMessage({ perfetto: { buffer, title } }, PERFETTO_ORIGIN)
      );
    }
  };
  const stop = () => {
    win.clearInterval(timer);
    win.removeEventListener('message', onMessage);
  };
  win.addEventListener('message', onMessage);
  return stop;
}

/** Save `buffer` as `name` through a temporary link. */
function saveBytes(buffer: ArrayBuffer, name: string): void {
  const url = URL.createObjectURL(new Blob([buffer], { type: 'application/gzip' }));
  const link = h('a', { href: url, download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A toolbar button, disabled with `why` when `run` is missing. */
function tool(label: string, run: (() => void) | null, why: string): HTMLButtonElement {
  const b = h('button', { type: 'button', class: 'gpuprof-w-toolbtn' }, label);
  if (run) {
    b.addEventListener('click', run);
  } else {
    b.disabled = true;
    b.title = why;
  }
  return b;
}

/** Toolbar of run `runId` (null for a report not saved as a run) with the basis switch. */
export function toolbar(
  runId: string | null | undefined,
  title: string,
  env: IReportEnv,
  basis: IBasis,
  setBasis: (kind: BasisKind) => void
): HTMLDivElement {
  const noServer =
    'Needs the Jupyter server that saved this run (open it from the GPU Profiler sidebar).';
  const noLab = 'Needs JupyterLab with the GPU Profiler extension and a saved run.';
  const status = h('span', { class: 'gpuprof-w-toolstatus', role: 'status' });
  /** The trace, its progress and failure said in the status line. */
  const loadTrace = () => {
    status.textContent = 'Loading the trace…';
    const bytes = env.traceBytes!();
    bytes.then(
      () => {
        status.textContent = '';
      },
      err => {
        status.textContent = `No trace: ${err instanceof Error ? err.message : String(err)}`;
      }
    );
    return bytes;
  };
  const withTrace = (use: (buffer: ArrayBuffer) => void) => () =>
    void loadTrace().then(use, () => undefined);
  /** Perfetto when it answers; offline, the status line says so and names the local path. */
  const perfetto = async () => {
    status.textContent = 'Checking that Perfetto can be reached…';
    if (!(await perfettoReachable())) {
      status.textContent = PERFETTO_OFFLINE;
      status.dataset.state = 'offline';
      return;
    }
    status.textContent = '';
    delete status.dataset.state;
    openInPerfetto(loadTrace(), title);
  };
  const trace = env.traceBytes && runId;
  const lab = env.command && runId;
  const modes: [BasisKind, string][] = [
    ['step', 'per real step'],
    ['total', `total of ${basis.steps} profiled steps`]
  ];
  const switchBox = h(
    'span',
    { class: 'gpuprof-w-basis', role: 'group', 'aria-label': 'basis of every time' },
    'Times: ',
    ...modes.map(([kind, label]) =>
      h(
        'button',
        {
          type: 'button',
          class: 'gpuprof-w-toolbtn',
          'aria-pressed': String(basis.kind === kind),
          'data-basis': kind,
          onclick: () => setBasis(kind)
        },
        label
      )
    )
  );
  return h(
    'div',
    { class: 'gpuprof-w-toolbar' },
    tool('Open in Perfetto', trace ? () => void perfetto() : null, noServer),
    tool(
      'Download trace',
      trace ? withTrace(b => saveBytes(b, `${runId}.trace.json.gz`)) : null,
      noServer
    ),
    tool(
      'Show in sidebar',
      lab ? () => env.command!(TOOLBAR_COMMANDS.showRun, { id: runId! }) : null,
      noLab
    ),
    tool(
      'Compare with…',
      lab ? () => env.command!(TOOLBAR_COMMANDS.compareWith, { id: runId! }) : null,
      noLab
    ),
    switchBox,
    status
  );
}

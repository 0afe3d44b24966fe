import { COMMAND_EVENT, pageEnv } from '../report/env';
import { capacityText } from '../report/header';
import { kernelsPanel } from '../report/kernels';
import { makeBasis } from '../report/basis';
import { whereLine } from '../report/next';
import { renderReport } from '../report/report';
import { IReportSummary } from '../report/summary';
import {
  openInPerfetto,
  PERFETTO_OFFLINE,
  PERFETTO_ORIGIN,
  perfettoReachable,
  TOOLBAR_COMMANDS
} from '../report/toolbar';
import { sampleSummary } from './reportFixture';

const withRun = (): IReportSummary => {
  const sm = sampleSummary();
  return { ...sm, source: { ...sm.source, name: 'tiny run', run_id: 'r1', status: 'complete' } };
};
const buttons = (root: HTMLElement) =>
  Array.from(root.querySelectorAll<HTMLButtonElement>('.gpuprof-w-toolbar > button'));

afterEach(() => {
  document.body.replaceChildren();
});

describe('basis switch', () => {
  it('shows every time per step first, then totals of the profiled steps, keeping the tab', () => {
    const root = renderReport(sampleSummary());
    const tab = root.querySelectorAll<HTMLButtonElement>('.gpuprof-w-tab')[4];
    tab.click();
    const cell = () =>
      root.querySelectorAll('.gpuprof-w-panel-transfers table')[1].querySelectorAll('td')[2]
        .textContent;
    expect(cell()).toBe('0.75 ms');
    expect(root.querySelector('[data-basis="step"]')?.getAttribute('aria-pressed')).toBe('true');
    (root.querySelector('[data-basis="total"]') as HTMLButtonElement).click();
    expect(cell()).toBe('2.25 ms');
    expect(root.querySelector('[data-basis="total"]')?.getAttribute('aria-pressed')).toBe('true');
    expect(root.querySelector('.gpuprof-w-panel-transfers')?.hasAttribute('hidden')).toBe(false);
    expect(root.querySelector('.gpuprof-w-panel-next')?.textContent).toContain(
      'costs 15.00 ms, ms, total of 3 profiled steps'
    );
  });
});

describe('tabs from the keyboard', () => {
  it('moves with the arrow keys, Home and End, wrapping, one tab in the tab order', () => {
    const root = renderReport(sampleSummary());
    document.body.append(root);
    const tabs = () => Array.from(root.querySelectorAll<HTMLButtonElement>('[role="tab"]'));
    const press = (key: string) =>
      (document.activeElement as HTMLElement).dispatchEvent(
        new KeyboardEvent('keydown', { key, bubbles: true })
      );
    tabs()[0].focus();
    press('ArrowRight');
    expect(document.activeElement?.textContent).toBe('GPU timeline');
    expect(tabs()[1].getAttribute('aria-selected')).toBe('true');
    expect(tabs().map(t => t.tabIndex)).toEqual([-1, 0, -1, -1, -1, -1]);
    press('ArrowLeft');
    press('ArrowLeft');
    expect(document.activeElement?.textContent).toBe('Next steps');
    press('Home');
    expect(document.activeElement?.textContent).toBe('Step time');
    press('End');
    expect(root.querySelector('.gpuprof-w-panel-next')?.hasAttribute('hidden')).toBe(false);
  });
});

describe('toolbar', () => {
  it('disables server and JupyterLab buttons on a static page and says why', () => {
    const root = renderReport(withRun());
    const [perfetto, download, sidebar, compare] = buttons(root);
    expect(perfetto.textContent).toBe('Open in Perfetto');
    expect([perfetto, download, sidebar, compare].every(b => b.disabled)).toBe(true);
    expect(perfetto.title).toContain('Needs the Jupyter server');
    expect(sidebar.title).toContain('Needs JupyterLab');
  });

  it('asks JupyterLab to show the run and to compare it', () => {
    const calls: [string, Record<string, string>][] = [];
    const root = renderReport(withRun(), { command: (id, args) => calls.push([id, args]) });
    const [, , sidebar, compare] = buttons(root);
    sidebar.click();
    compare.click();
    expect(calls).toEqual([
      [TOOLBAR_COMMANDS.showRun, { id: 'r1' }],
      [TOOLBAR_COMMANDS.compareWith, { id: 'r1' }]
    ]);
  });

  it('hands the trace to Perfetto after PING/PONG, as its docs describe', async () => {
    jest.useFakeTimers();
    const posted: unknown[] = [];
    const ui = { postMessage: (m: unknown, origin: string) => posted.push([m, origin]) };
    const win = window as Window;
    const open = jest.spyOn(win, 'open').mockReturnValue(ui as unknown as Window);
    const buffer = new ArrayBuffer(8);
    openInPerfetto(buffer, 'tiny run');
    expect(open).toHaveBeenCalledWith(PERFETTO_ORIGIN);
    jest.advanceTimersByTime(1100);
    expect(posted).toEqual([
      ['PING', PERFETTO_ORIGIN],
      ['PING', PERFETTO_ORIGIN]
    ]);
    window.dispatchEvent(new MessageEvent('message', { data: 'PONG', source: ui as never }));
    await Promise.resolve();
    expect(posted[2]).toEqual([{ perfetto: { buffer, title: 'tiny run' } }, PERFETTO_ORIGIN]);
    jest.advanceTimersByTime(2000);
    expect(posted).toHaveLength(3); // no more pings once Perfetto answered
    open.mockRestore();
    jest.useRealTimers();
  });

  it('opens Perfetto once it answers and downloads the trace from the server', async () => {
    const win = window as Window;
    const open = jest.spyOn(win, 'open').mockReturnValue(null);
    (globalThis as unknown as { fetch: unknown }).fetch = jest.fn(async () => ({ ok: true }));
    let release: (b: ArrayBuffer) => void = () => undefined;
    const env = { traceBytes: () => new Promise<ArrayBuffer>(r => (release = r)) };
    const root = renderReport(withRun(), env);
    const [perfetto, download] = buttons(root);
    perfetto.click();
    await new Promise(r => setTimeout(r, 0));
    expect(open).toHaveBeenCalledTimes(1); // before the trace arrived: within the click's grace
    expect(root.querySelector('.gpuprof-w-toolstatus')?.textContent).toBe('Loading the trace…');
    release(new ArrayBuffer(4));
    await Promise.resolve();
    await Promise.resolve();
    expect(root.querySelector('.gpuprof-w-toolstatus')?.textContent).toBe('');
    const clicked: string[] = [];
    URL.createObjectURL = jest.fn(() => 'blob:x');
    URL.revokeObjectURL = jest.fn();
    jest.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement
    ) {
      clicked.push(this.download);
    });
    download.click();
    release(new ArrayBuffer(4));
    await new Promise(r => setTimeout(r, 0));
    expect(clicked).toEqual(['r1.trace.json.gz']);
    open.mockRestore();
  });

  it('says Perfetto is offline and names the local path instead of opening a dead tab', async () => {
    const open = jest.spyOn(window as Window, 'open').mockReturnValue(null);
    const fetcher = jest.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    (globalThis as unknown as { fetch: unknown }).fetch = fetcher;
    const root = renderReport(withRun(), { traceBytes: async () => new ArrayBuffer(4) });
    buttons(root)[0].click();
    expect(root.querySelector('.gpuprof-w-toolstatus')?.textContent).toContain('Checking');
    await new Promise(r => setTimeout(r, 0));
    const status = root.querySelector<HTMLElement>('.gpuprof-w-toolstatus')!;
    expect(status.textContent).toBe(PERFETTO_OFFLINE);
    expect(status.dataset.state).toBe('offline');
    expect(PERFETTO_OFFLINE).toContain('Download trace');
    expect(open).not.toHaveBeenCalled();
    expect(fetcher).toHaveBeenCalledWith(
      PERFETTO_ORIGIN,
      expect.objectContaining({ mode: 'no-cors' })
    );
    open.mockRestore();
  });

  it('gives up on a Perfetto that does not answer in time', async () => {
    jest.useFakeTimers();
    const never = (_: unknown, init?: RequestInit) =>
      new Promise<Response>((_r, reject) =>
        init?.signal?.addEventListener('abort', () => reject(new Error('aborted')))
      );
    const answer = perfettoReachable(never as typeof fetch, 3000);
    jest.advanceTimersByTime(3000);
    await expect(answer).resolves.toBe(false);
    jest.useRealTimers();
    await expect(perfettoReachable(async () => ({}) as Response)).resolves.toBe(true);
  });

  it('reaches the server and the extension from a JupyterLab page only', async () => {
    const el = document.createElement('div');
    document.body.append(el);
    expect(pageEnv('r1', el)).toEqual({});
    const config = document.createElement('script');
    config.type = 'application/json';
    config.id = 'jupyter-config-data';
    config.textContent = JSON.stringify({ baseUrl: '/lab-base/' });
    document.body.append(config);
    const seen: string[] = [];
    (globalThis as unknown as { fetch: unknown }).fetch = jest.fn(async (url: string) => {
      seen.push(url);
      return { ok: true, json: async () => ({ strings: [], detail: {} }) };
    });
    const env = pageEnv('r 1', el);
    await env.loadStep!(4);
    expect(seen).toEqual(['/lab-base/jupyter-gpuprof/runs/r%201/timeline?step=4']);
    const heard: unknown[] = [];
    document.addEventListener(COMMAND_EVENT, ev => heard.push((ev as CustomEvent).detail));
    env.command!(TOOLBAR_COMMANDS.showRun, { id: 'r 1' });
    expect(heard).toEqual([{ id: TOOLBAR_COMMANDS.showRun, args: { id: 'r 1' } }]);
    expect(pageEnv(null, el)).toEqual({});
  });
});

describe('head and next steps', () => {
  it('names the memory verdict and shows MFU and peak memory', () => {
    const base = sampleSummary();
    const sm: IReportSummary = {
      ...base,
      // the verdict is named as the model names it (`verdict.label`), never by the front end
      verdict: { ...base.verdict, category: 'memory', label: 'memory bandwidth' },
      flops: { ...base.flops, mfu_pct: 41.2 },
      // the peak is the model's (the capture's max_memory_allocated before the trace's
      // allocator peak): the widget shows it, never a max of its own
      memory: {
        peaks: [{ device: 0, peak_allocated_bytes: 9.43e9, total_bytes: 150e9, peak_pct: 6.29 }],
        max_memory_allocated_bytes: 9.1e9,
        peak_bytes: 9.1e9,
        gpu_total_bytes: 150e9
      }
    };
    expect(
      renderReport(sm).querySelector('.gpuprof-w-head .gpuprof-w-verdict b')?.textContent
    ).toBe('Verdict: memory bandwidth');
    expect(capacityText(sm)).toBe('MFU 41.2% · Peak memory 9.10 GB of 150 GB (6%)');
    expect(renderReport(sm).querySelector('.gpuprof-w-stats')?.textContent).toContain(
      '· MFU 41.2% · Peak memory 9.10 GB of 150 GB (6%)'
    );
    expect(capacityText(sampleSummary())).toBe('');
  });

  it("points a finding at the user's line of code when the summary has it", () => {
    const finding = sampleSummary().findings[0];
    const where = {
      file: 'train.py',
      line: 42,
      code: 'loss.item()',
      call: 'item',
      calls: 1,
      cell: false
    };
    const line = whereLine({ ...finding, where });
    expect(line?.querySelector('code')?.textContent).toBe('train.py:42');
    expect(line?.querySelector('pre')?.textContent).toBe('loss.item()');
    expect(whereLine(finding)).toBeNull();
    expect(whereLine({ ...finding, where: null })).toBeNull();
  });
});

describe('kernels tab', () => {
  const kernel = { tensor_core: false, dtype: 'bf16', median_us: 100 };
  const withKernels = (): IReportSummary => ({
    ...sampleSummary(),
    kernel_kinds: [
      {
        kind: 'gemm',
        tensor_core: true,
        calls: 30,
        total_us: 3000,
        ms_per_step: 1,
        calls_per_step: 10
      }
    ],
    kernels: [
      {
        ...kernel,
        name: 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >(int)',
        short_name: 'vectorized_elementwise_kernel',
        kind: 'elementwise',
        calls: 5,
        calls_per_step: 5 / 3,
        total_us: 300,
        mean_us: 60,
        pct_of_gpu: 9,
        pct_of_step: 1,
        ms_per_step: 0.1,
        tensor_core_eligible: false,
        grid: '65536×1×1',
        block: '128×1×1',
        occupancy_pct: 100,
        ops: ['aten::fill_']
      },
      {
        ...kernel,
        name: 'ampere_sgemm_128x64_nn',
        short_name: 'ampere_sgemm_128x64_nn',
        kind: 'gemm',
        calls: 30,
        calls_per_step: 10,
        total_us: 3000,
        mean_us: 100,
        pct_of_gpu: 91,
        pct_of_step: 10,
        ms_per_step: 1,
        tensor_core_eligible: true,
        grid: '',
        block: '',
        occupancy_pct: null,
        ops: ['aten::mm', 'aten::addmm']
      }
    ],
    kernel_table: {
      shown: 2,
      total: 2,
      covered_pct_of_gpu: 100,
      label: '2 of 2 kernels, covering 100.0% of GPU time'
    }
  });
  const rowsOf = (panel: HTMLElement) =>
    Array.from(panel.querySelectorAll('tbody tr')).map(r =>
      Array.from(r.children).map(c => c.textContent)
    );

  it('shows kernel kinds as bars and every kernel with calls/step, both shares and launch shape', () => {
    const sm = withKernels();
    const panel = kernelsPanel(sm, makeBasis(sm, 'step'));
    expect(panel.querySelector('h4')?.textContent).toBe(
      'GPU time by kernel kind (ms per real step)'
    );
    expect(panel.querySelector('.gpuprof-w-bar-value')?.textContent).toBe('1.00 ms');
    const heads = Array.from(panel.querySelectorAll('th')).map(th => th.textContent);
    expect(heads).toEqual([
      'kernel',
      'kind',
      'Tensor Cores',
      'calls/step',
      'time (ms per real step) ▼',
      'mean per call',
      '% of GPU time',
      '% of step',
      'grid · block · occupancy',
      'launched by'
    ]);
    const rows = rowsOf(panel);
    expect(rows[0]).toEqual([
      'ampere_sgemm_128x64_nn',
      'gemm',
      'no (eligible)',
      '10',
      '1.00 ms',
      '0.10 ms',
      '91.0%',
      '10.0%',
      '—',
      'aten::mm, aten::addmm'
    ]);
    // the short name shows; the full template name is its tooltip and expands on click
    const cell = panel.querySelectorAll('tbody tr')[1].children[0] as HTMLElement;
    expect(cell.querySelector('summary')?.textContent).toBe('vectorized_elementwise_kernel');
    expect(cell.title).toBe(sm.kernels[0].name);
    expect(cell.querySelector('.gpuprof-w-fullname')?.textContent).toBe(sm.kernels[0].name);
    expect(rows[1].slice(2, 4)).toEqual(['—', '1.7']);
    expect(rows[1][8]).toBe('65536×1×1 · 128×1×1 · occ. 100%');
    expect(panel.querySelector('.gpuprof-w-kernel-count')?.textContent).toBe(
      '2 of 2 kernels, covering 100.0% of GPU time'
    );
  });

  it('filters every kernel by its short or full name and says how many matched', () => {
    const sm = withKernels();
    const panel = kernelsPanel(sm, makeBasis(sm, 'step'));
    const input = panel.querySelector('input.gpuprof-w-filter') as HTMLInputElement;
    input.value = 'FillFunctor'; // only in the full template name
    input.dispatchEvent(new Event('input'));
    const shown = Array.from(panel.querySelectorAll('tbody td:first-child summary'));
    expect(shown.map(x => x.textContent)).toEqual(['vectorized_elementwise_kernel']);
    expect(panel.querySelectorAll('tbody tr')).toHaveLength(1);
    expect(panel.querySelector('.gpuprof-w-kernel-count')?.textContent).toBe(
      '1 match · 2 of 2 kernels, covering 100.0% of GPU time'
    );
  });

  it('draws all the kernels the summary holds, not a top few', () => {
    const sm = withKernels();
    const many = Array.from({ length: 40 }, (_, i) => ({
      ...sm.kernels[1],
      name: `k${i}`,
      short_name: `k${i}`,
      total_us: 100 + i
    }));
    sm.kernels = many;
    sm.kernel_table = { shown: 40, total: 40, covered_pct_of_gpu: 100, label: '40 of 40 kernels' };
    const panel = kernelsPanel(sm, makeBasis(sm, 'total'));
    expect(panel.querySelectorAll('tbody tr')).toHaveLength(40);
    // on the totals basis the calls are the profiled total
    expect(panel.querySelector('th[data-key="calls"]')?.textContent).toBe(
      'calls (total of 3 steps)'
    );
    expect(rowsOf(panel)[0][3]).toBe('30');
  });
});

/**
 * The events of the steps a summary does not inline, fetched from the run when the timeline's
 * view holds one: what is at hand, what is loading (said on a status line while the fetch runs,
 * about a second) and what failed (said once, not asked again).
 */
import { h } from './dom';
import { IStepAnswer } from './env';
import { IStepDetail, ITimeline } from './summary';

/** A loaded step's events with the string table they index. */
export type LoadedStep = IStepDetail & { strings: string[] };

/** The step loader of one timeline; `changed(loaded)` redraws it (`loaded`: new events came). */
export class StepLoader {
  readonly loaded = new Map<number, LoadedStep>();
  readonly status = h('div', { class: 'gpuprof-w-loading', role: 'status', 'aria-live': 'polite' });
  private loading = new Set<number>();
  private failed = new Set<number>();

  constructor(
    private tl: Pick<ITimeline, 'steps' | 'detail'>,
    private load: ((step: number) => Promise<IStepAnswer>) | undefined,
    private changed: (loaded: boolean) => void
  ) {}

  /** Whether every event of step index `i` is at hand (inlined in the summary or loaded). */
  hasEvents(i: number): boolean {
    return Boolean(this.tl.detail[i]) || this.loaded.has(this.tl.steps[i].step);
  }

  /** Whether step number `step`'s events are being fetched. */
  isLoading(step: number): boolean {
    return this.loading.has(step);
  }

  /** Fetch step index `i`'s events when a view `span` µs wide holds it and they are not at hand. */
  want(i: number, span: number): void {
    const st = this.tl.steps[i];
    const load = this.load;
    if (
      !st ||
      !load ||
      this.hasEvents(i) ||
      this.loading.has(st.step) ||
      this.failed.has(st.step)
    ) {
      return;
    }
    if (span > 1.5 * (st.end - st.start)) {
      return;
    }
    this.loading.add(st.step);
    this.status.textContent = `Loading every event of step ${st.step}…`;
    this.changed(false); // the step's band pulses while it loads
    const done = (text: string, loaded: boolean) => {
      this.loading.delete(st.step);
      this.status.textContent = text;
      this.changed(loaded);
    };
    load(st.step).then(
      answer => {
        this.loaded.set(st.step, { ...answer.detail, strings: answer.strings });
        done('', true);
      },
      (err: Error) => {
        this.failed.add(st.step);
        done(
          `Step ${st.step}'s events did not load (${err.message}): its merged rectangles stay drawn.`,
          false
        );
      }
    );
  }
}

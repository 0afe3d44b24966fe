/**
 * The "GPU timeline" panel: GPU busy in the report's one wording, idle causes, the timeline, and
 * under it the memory lane and "Memory over the step" (or the out-of-memory post-mortem).
 */
import { IBasis } from './basis';
import { linkData, timelineData } from './chartData';
import { h } from './dom';
import { IReportEnv } from './env';
import { busyText } from './header';
import { memorySections } from './memory';
import { IReportSummary } from './summary';
import { drawTimeline } from './timeline';

/** GPU busy line, idle causes, the timeline (or why there is none), then memory over the step. */
export function timelinePanel(
  sm: IReportSummary,
  basis: IBasis,
  env: IReportEnv = {}
): HTMLDivElement {
  const tl = sm.timeline;
  const gpu = sm.gpu;
  const box = h('div');
  if (gpu.available) {
    const causes = Object.entries(gpu.idle_by_cause_ms)
      .filter(([, v]) => v >= 0.005)
      .map(([k, v]) => `${k} ${basis.ms(v)}`)
      .join(', ');
    const tail = causes ? `; GPU idle by cause (${basis.title}): ${causes}.` : '.';
    box.append(
      h(
        'p',
        { class: 'gpuprof-w-busy' },
        `${busyText(sm)}; busy ${basis.ms(gpu.busy_ms_per_step)} (${basis.title})${tail}`
      )
    );
  }
  if (!tl || !tl.lanes.length) {
    const multi =
      sm.ranks.length > 1
        ? ' (traces that are not the ranks of one job are not lined up: open one trace).'
        : '.';
    box.append(
      h(
        'p',
        { class: 'gpuprof-w-empty' },
        `No timeline: the trace holds no events in the profiled window${multi}`
      )
    );
  } else {
    box.append(linkData(drawTimeline(tl, env), timelineData(tl)));
  }
  const memory = memorySections(sm);
  if (memory) {
    box.append(memory);
  }
  return box;
}

/**
 * The run summary the report panels draw (`Report.to_json()`, `summary.json`, `GET /summary`).
 *
 * Every type here is the generated one (`src/generated/summary.ts`, from the Python report
 * model's JSON Schema), so the front end cannot drift from what Python sends. The panels
 * read them through `DeepPartial`: each one draws whatever part of a summary it is handed
 * (the tests hand them pieces); the timeline requires the arrays it cannot draw without.
 */
import type * as Generated from '../generated/summary';

/** A type with every field optional, all the way down (arrays keep their element shape). */
export type DeepPartial<T> = T extends readonly (infer U)[]
  ? DeepPartial<U>[]
  : T extends object
    ? { [K in keyof T]?: DeepPartial<T[K]> }
    : T;

/** Statistics of one series of step times (`jupyter_gpuprof.stats.describe_steps`). */
export type IStepStats = DeepPartial<Generated.StepStats>;
/** `summary.steps`: the headline statistics plus each step's time for the chart. */
export type ISteps = DeepPartial<Generated.Steps>;
/** `summary.source`: where the report came from and whether the profiled code finished. */
export type ISource = DeepPartial<Generated.Source>;
/** `summary.gpu`: how busy the GPU was and why it waited. */
export type IGpu = DeepPartial<Generated.Gpu>;
/** `summary.verdict`: the main reason the step is not faster. */
export type IVerdict = DeepPartial<Generated.Verdict>;
/** One fix `--try` measured (`summary.tries`), judged against the baseline. */
export type ITryResult = DeepPartial<Generated.TryResult>;
/** GPU conditions of one phase (NVML). */
export type IConditions = DeepPartial<Generated.Conditions>;
/** One entry of `summary.findings`: a measured bottleneck and its fix. */
export type IFinding = DeepPartial<Generated.Finding>;
/** One row of `summary.ops` (times in µs); the ops table sorts and reads it by column name. */
export type IOpRow = DeepPartial<Generated.OpRow> & {
  [column: string]: string | number | boolean | null | undefined;
};
/** One row of `summary.kernel_kinds`. */
export type IKernelKind = DeepPartial<Generated.KernelKindRow>;
/** One row of `summary.transfers`: copies by direction and host memory kind. */
export type ITransferRow = DeepPartial<Generated.TransferRow>;
/** `summary.syncs`: synchronizing calls and what they cost the GPU. */
export type ISyncs = DeepPartial<Generated.Syncs>;
/** One lane of the timeline: parallel arrays, names as codes into `ITimeline.names`. */
export type ITimelineLane = Pick<
  Generated.Lane,
  'label' | 'kind' | 'start' | 'dur' | 'count' | 'name'
> &
  Partial<Generated.Lane>;
/** `summary.timeline`: the bounded, level-of-detail timeline (times in µs from its start). */
export type ITimeline = Pick<Generated.Timeline, 'dur_us' | 'names' | 'n_rects' | 'n_events'> &
  Partial<Omit<Generated.Timeline, 'lanes'>> & { lanes: ITimelineLane[] };
/**
 * One rank of a distributed run (`summary.distributed.ranks`, ms per step); `straggler` is
 * the advice's decision, which the front end shows and never re-decides.
 */
export type IRankRow = DeepPartial<Generated.DistributedRank> &
  Pick<Generated.DistributedRank, 'rank'>;

/** The summary object (`Summary` of the Python report model). */
export type IReportSummary = DeepPartial<Omit<Generated.Summary, 'timeline' | 'distributed'>> & {
  timeline?: ITimeline | null;
  distributed?: (DeepPartial<Omit<Generated.Distributed, 'ranks'>> & { ranks?: IRankRow[] }) | null;
};

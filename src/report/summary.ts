/**
 * The run summary the report panels draw (`Report.to_json()`, `summary.json`, `GET /summary`).
 *
 * Every type here is the generated one (`src/generated/summary.ts`, from the Python report
 * model's JSON Schema), read as it is: a field the model guarantees is there, `null` only where
 * the schema says so, optional only where the schema makes it optional. The front end cannot
 * drift from what Python sends, and a panel never re-checks what the model promises. (The server
 * rebuilds a cached summary whose `schema_version` is not the current one.)
 */
import type * as Generated from '../generated/summary';

/** The summary object (`Summary` of the Python report model). */
export type IReportSummary = Generated.Summary;
/** Statistics of one series of step times (`jupyter_gpuprof.stats.describe_steps`). */
export type IStepStats = Generated.StepStats;
/** `summary.steps`: the headline statistics plus each step's time for the chart. */
export type ISteps = Generated.Steps;
/** `summary.source`: where the report came from and whether the profiled code finished. */
export type ISource = Generated.Source;
/** `summary.gpu`: how busy the GPU was and why it waited. */
export type IGpu = Generated.Gpu;
/** `summary.verdict`: the main reason the step is not faster. */
export type IVerdict = Generated.Verdict;
/** One fix `--try` measured (`summary.tries`), judged against the baseline. */
export type ITryResult = Generated.TryResult;
/** `summary.stack`: the measured fixes stacked, and all kept ones together. */
export type IStackResult = Generated.StackResult;
/** GPU conditions of one phase (NVML). */
export type IConditions = Generated.Conditions;
/** One entry of `summary.findings`: a measured bottleneck and its fix. */
export type IFinding = Generated.Finding;
/** One row of `summary.ops` (times in µs). */
export type IOpRow = Generated.OpRow;
/** One row of `summary.kernels` (times in µs, summed over the profiled steps). */
export type IKernelRow = Generated.KernelRow;
/** One row of `summary.kernel_kinds`. */
export type IKernelKind = Generated.KernelKindRow;
/** One row of `summary.transfers`: copies by direction and host memory kind. */
export type ITransferRow = Generated.TransferRow;
/** `summary.syncs`: synchronizing calls and what they cost the GPU. */
export type ISyncs = Generated.Syncs;
/** One lane of the timeline: parallel arrays, names as codes into `ITimeline.names`. */
export type ITimelineLane = Generated.Lane;
/** One profiled step's events as columns (`timeline.detail[i]`, times from the step start). */
export type IStepDetail = Generated.StepDetail;
/** `summary.timeline`: the bounded, level-of-detail timeline (times in µs from its start). */
export type ITimeline = Generated.Timeline;
/**
 * One rank of a distributed run (`summary.distributed.ranks`, ms per step); `straggler` is
 * the advice's decision, which the front end shows and never re-decides.
 */
export type IRankRow = Generated.DistributedRank;

/**
 * Whether today's panels can draw `sm`. The first summaries (version 1, before the table basis,
 * the per-step figures and the verdict's label) lack blocks the panels read; their notebooks'
 * own static copies, saved beside them, read as they did. Judged by the blocks, not the
 * version number: some version-1 summaries were written after those blocks came.
 */
export function drawable(sm: IReportSummary): boolean {
  const partial = sm as Partial<IReportSummary>;
  return Boolean(partial.basis) && typeof partial.verdict?.label === 'string';
}

/**
 * The run summary the report panels draw (`Report.to_json()`, `summary.json`, `GET /summary`).
 *
 * Written down once, here, so the widget and the sidebar read the same shape; every field the
 * Python side may leave out or send as null is optional. Only what the front end reads is typed.
 */

/** Statistics of one series of step times (`analysis.stats.describe_steps`). */
export interface IStepStats {
  n?: number;
  median_ms?: number | null;
  p95_ms?: number | null;
  mean_ms?: number | null;
  min_ms?: number | null;
  max_ms?: number | null;
  q1_ms?: number | null;
  q3_ms?: number | null;
  iqr_ms?: number | null;
  outliers?: number[];
}

/** `summary.steps`: the headline statistics plus each step's time for the chart. */
export interface ISteps extends IStepStats {
  source?: string | null;
  timing?: string | null;
  baseline?: IStepStats;
  profiled?: IStepStats;
  profiler_inflation?: number | null;
  warmup_ms?: number[];
  baseline_ms?: number[];
  profiled_ms?: number[];
}

/** `summary.source`: where the report came from and whether the profiled code finished. */
export interface ISource {
  path?: string | null;
  gpu?: string | null;
  rank?: number | null;
  world_size?: number | null;
  run_id?: string | null;
  name?: string | null;
  status?: string | null;
  error?: string | null;
  created?: string | null;
}

/** `summary.gpu`: how busy the GPU was and why it waited. */
export interface IGpu {
  available?: boolean;
  busy_pct?: number | null;
  idle_pct?: number | null;
  busy_pct_real?: number | null;
  busy_ms_per_step?: number | null;
  idle_ms_per_step?: number | null;
  idle_by_cause_ms?: Record<string, number>;
}

/** `summary.verdict`: the main reason the step is not faster. */
export interface IVerdict {
  category?: string | null;
  summary?: string | null;
  confidence?: string | null;
  reasons?: string[];
}

/** One entry of `summary.findings`: a measured bottleneck and its fix. */
export interface IFinding {
  id?: string;
  category?: string;
  title?: string;
  evidence?: string;
  fix?: string;
  cost_ms?: number | null;
  expected_gain_pct?: number | null;
}

/** One row of `summary.ops` (times in µs). */
export interface IOpRow {
  name?: string;
  calls?: number;
  cpu_total_us?: number | null;
  cpu_self_us?: number | null;
  cuda_total_us?: number | null;
  cuda_self_us?: number | null;
  input_dims?: string | null;
  [column: string]: string | number | boolean | null | undefined;
}

/** One row of `summary.kernel_kinds`. */
export interface IKernelKind {
  kind?: string;
  tensor_core?: boolean;
  calls?: number;
  total_us?: number | null;
}

/** One row of `summary.transfers`: copies by direction and host memory kind. */
export interface ITransferRow {
  kind?: string;
  pageable?: boolean;
  count?: number;
  bytes?: number;
  dur_us?: number;
  gbps?: number | null;
  blocking?: number;
}

/** `summary.syncs`: synchronizing calls and what they cost the GPU. */
export interface ISyncs {
  count?: number;
  per_step?: number | null;
  top?: { caller: string; calls: number; gpu_idle_after_us: number | null }[];
}

/** One lane of the timeline: parallel arrays, names as codes into `ITimeline.names`. */
export interface ITimelineLane {
  id?: string;
  label: string;
  kind: string;
  n_events?: number;
  start: number[];
  dur: number[];
  count: number[];
  name: number[];
  op?: number[];
  shape?: number[];
}

/** `summary.timeline`: the bounded, level-of-detail timeline (times in µs from its start). */
export interface ITimeline {
  dur_us: number;
  names: string[];
  lanes: ITimelineLane[];
  n_rects: number;
  n_events: number;
  max_rects?: number;
  n_gaps?: number;
  gaps?: { start: number[]; dur: number[]; cause: string[] };
}

/** One rank of a distributed run (`summary.distributed.ranks`, ms per step). */
export interface IRankRow {
  rank: number;
  step_ms?: number | null;
  compute_ms?: number | null;
  comm_ms?: number | null;
  exposed_comm_ms?: number | null;
  wait_ms?: number | null;
  idle_ms?: number | null;
  extra_ms?: number | null;
  phase?: string | null;
}

/** The summary object; see `Report.to_json()` in the Python package. */
export interface IReportSummary {
  schema_version?: number;
  source?: ISource;
  steps?: ISteps;
  gpu?: IGpu;
  verdict?: IVerdict;
  findings?: IFinding[];
  ops?: IOpRow[];
  kernel_kinds?: IKernelKind[];
  transfers?: ITransferRow[];
  syncs?: ISyncs;
  input?: { host_share_pct?: number | null; ms_per_step?: number | null };
  ranks?: { rank: number; step_median_ms?: number | null; busy_pct?: number | null }[];
  distributed?: { ranks?: IRankRow[]; collectives_matched?: number } | null;
  timeline?: ITimeline | null;
}

/** SVG charts drawn in Python (views/svg.py, names escaped there) that the widget receives. */
export interface ICharts {
  steps?: string;
  kinds?: string;
}

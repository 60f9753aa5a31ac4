/**
 * The use cases every entry point calls (the CLI and the server): run the
 * deletion contract against a registered target or a config, replay a saved
 * regression, show, save and compare runs, run the reference suite, and the
 * job manager for runs started in the background. Each use case combines
 * the engine (`lib/runner/`), the ledger (`lib/ledger/`), checkpoints and
 * the observability index (`lib/obs/`), and returns what happened, so no
 * caller re-reads the ledger to learn it.
 *
 * @module
 */

export {
  configTargetId,
  type ExternalRunOptions,
  type ExternalRunOutcome,
  keptReportPath,
  runExternal,
  type RunRecording,
} from "./external_run.ts";
export {
  AdapterUnreachableError,
  checkAdapterReachable,
} from "./reachability.ts";
export {
  configTargetRef,
  readRunTarget,
  registeredTargets,
  registerNamedTarget,
  type ResolvedTarget,
  resolveRunTarget,
  runExternalTarget,
  type RunSelection,
  type RunTarget,
  type TargetRunOptions,
  type TargetRunOutcome,
} from "./targets.ts";
export {
  type PreparedReplay,
  prepareReplay,
  type ReplayOptions,
  type ReplayOutcome,
  replayRegression,
  runReplay,
} from "./replay.ts";
export {
  isProcessAlive,
  type LocatedRun,
  locateRun,
  type RunView,
  viewRun,
  type ViewRunOptions,
} from "./run_view.ts";
export {
  newestFirst,
  runCatalog,
  type RunCatalogOptions,
  type RunSummary,
  summarizeReport,
} from "./run_catalog.ts";
export {
  gate,
  regressionsOf,
  saveRun,
  type SaveRunOptions,
} from "./regressions.ts";
export { compareStoredRuns } from "./compare.ts";
export {
  type RecordedReferenceRun,
  runReference,
  type RunReferenceOptions,
} from "./reference_runs.ts";
export {
  type ReferenceDashboard,
  referenceDashboard,
  referenceHistory,
  type ReferenceHistoryEntry,
  type ReferenceRanking,
  referenceRanking,
  type ReferenceRunView,
  referenceRunView,
  type ReferenceViewOptions,
} from "./reference_views.ts";
export {
  type JobProgress,
  type JobRequest,
  type JobState,
  RunJobs,
  type RunJobsOptions,
  type RunJobView,
  type StartedJob,
} from "./jobs.ts";
export { PROCESS_RUN_LOCK, RunBusyError, RunLock } from "./run_lock.ts";
export {
  type RunTracer,
  traceRun,
  type TraceRunOptions,
  type TraceWrite,
} from "./run_traces.ts";
export {
  createRunTraceSink,
  runTraceEvents,
  type RunTraceSink,
} from "./trace_events.ts";

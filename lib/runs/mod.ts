/**
 * The use cases every entry point calls (the CLI and the server): run the
 * deletion contract against a registered target or a config, replay a saved
 * regression, show, list, save and compare runs, clean up after a run,
 * list and retire targets, run the reference suite, the job manager for
 * runs started in the background, and subject erasure with its receipts and
 * the propagation of memory deletions. Each use case combines the engine
 * (`lib/runner/`), the ledger (`lib/ledger/`), checkpoints and the
 * observability index (`lib/obs/`), and returns what happened, so no caller
 * re-reads the ledger to learn it.
 *
 * Files: external_run.ts, targets.ts, replay.ts, run_view.ts, run_list.ts,
 * run_catalog.ts (the run list of the UI's pages), regressions.ts, compare.ts, cleanup.ts, reference_runs.ts, jobs.ts,
 * run_lock.ts, run_traces.ts, trace_events.ts, write_file.ts, erasures.ts,
 * erasure_drafts.ts, erasure_propagation.ts, backup_destination.ts.
 *
 * @module
 */

export { refuseStateDestination } from "./backup_destination.ts";
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
  type ReachabilityOptions,
  RunNotStartedError,
} from "./reachability.ts";
export {
  checkConfigToken,
  configTargetRef,
  readRunTarget,
  refuseRetiredConfig,
  registeredTargets,
  registerNamedTarget,
  type ResolvedTarget,
  resolveRunTarget,
  retiredTargetIds,
  retireRunTarget,
  runExternalTarget,
  type RunSelection,
  type RunTarget,
  type TargetListing,
  targetListing,
  type TargetRunOptions,
  type TargetRunOutcome,
  targetSummaries,
  unregisteredTargets,
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
  isSameProcess,
  type LocatedRun,
  locateRun,
  notCleanable,
  reportView,
  type ReportViewLinks,
  type RunView,
  stillServedAdvice,
  viewRun,
  type ViewRunOptions,
} from "./run_view.ts";
export { whatToCheck } from "../runner/finding_checks.ts";
export {
  newestFirst,
  readRunCatalog,
  runCatalog,
  type RunCatalogOptions,
  type RunSummary,
  summarizeReport,
} from "./run_catalog.ts";
export {
  gate,
  type GateOptions,
  listSavedRegressions,
  recurrenceViewOf,
  type RegressionListOptions,
  regressionsOf,
  type RegressionsView,
  regressionsView,
  type ReplayRecurrenceView,
  replayRecurrenceView,
  saveRun,
  type SaveRunOptions,
  targetRegressionsView,
} from "./regressions.ts";
export {
  type ListedRegression,
  type UnfinishedReplayView,
} from "./unfinished_replays.ts";
export { compareStoredRuns } from "./compare.ts";
export {
  type CleanupOutcome,
  type CleanupPoll,
  cleanUpRun,
  type CleanupRunOptions,
} from "./cleanup.ts";
export {
  DEFAULT_RUN_LIMIT,
  listAllRuns,
  MAX_RUN_OFFSET,
  RUN_LIST_FILTERS,
  type RunList,
  type RunListItem,
  type RunListOptions,
} from "./run_list.ts";
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
  runRootEventId,
  runTraceEvents,
  type RunTraceIdentity,
  type RunTraceSink,
  type RunTraceSinkOptions,
} from "./trace_events.ts";
export { writeFileWhole, type WriteWholeOptions } from "./write_file.ts";
export {
  type AppliedErasure,
  eraseSubject,
  eraseSubjectNow,
  erasureDigestOf,
  erasureKeyFor,
  type ErasureKeyForOptions,
  erasureKeyStateFor,
  type ErasureVerification,
  planSubjectErasure,
  selfStagingWithReceipts,
  type SubjectErasureOptions,
  type SubjectErasurePlan,
  verifyErasure,
} from "./erasures.ts";
export {
  enableErasurePropagation,
  propagateDeletions,
  type PropagationOptions,
} from "./erasure_propagation.ts";
